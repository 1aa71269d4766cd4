"""Untrusted URL values: parsed, clamped or ignored, always explained, never echoed raw."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.controls_spec import D_K_GRID, N_GRID, TEMPERATURE_GRID, nearest_on_grid
from app.query import excerpt, format_query_value, parse_query
from app.state import SimulationState


def test_valid_values_are_read_without_notice() -> None:
    parsed = parse_query(
        {
            "d_k": [b"4"],
            "temperature": [b"2.5"],
            "n": [b"16"],
            "scaled": [b"false"],
            "view": [b"raw"],
            "causal": [b"true"],
            "seed": [b"3"],
        }
    )
    assert parsed.values == {
        "d_k": 4,
        "temperature": 2.5,
        "n": 16,
        "scaled": False,
        "view": "raw",
        "causal": True,
        "seed": 3,
    }
    assert parsed.notices == []


@pytest.mark.parametrize(
    ("args", "expected", "fragment"),
    [
        ({"d_k": "abc"}, {}, "not a number"),
        ({"n": "100000"}, {"n": 1024}, "above the largest value 1024"),
        ({"temperature": "0"}, {"temperature": 0.05}, "below the smallest value 0.05"),
        ({"temperature": "nan"}, {}, "not a finite number"),
        ({"d_k": "inf"}, {}, "not a finite number"),
        ({"d_k": "1e999"}, {}, "not a finite number"),
        ({"d_k": "-5"}, {"d_k": 1}, "below the smallest value 1"),
        ({"d_k": "12.6"}, {"d_k": 13}, "rounded to 13"),
        ({"scaled": "maybe"}, {}, "not true or false"),
        ({"view": "heat"}, {}, "not one of weights, scaled, raw"),
        ({"seed": "-1"}, {"seed": 0}, "below the smallest value 0"),
        ({"d_k": "x" * 8192}, {}, "8192 characters long"),
    ],
)
def test_bad_values_are_fixed_and_explained(args: dict, expected: dict, fragment: str) -> None:
    parsed = parse_query(args)
    assert parsed.values == expected
    assert len(parsed.notices) == 1
    assert fragment in parsed.notices[0]


def test_markup_is_never_echoed() -> None:
    parsed = parse_query({"view": ["<script>alert(1)</script>"], "d_k": ["<img src=x>"]})
    text = " ".join(parsed.notices)
    assert "<" not in text and ">" not in text
    assert "scriptalert1script" in text


def test_unknown_names_are_ignored_and_last_value_wins() -> None:
    parsed = parse_query({"utm_source": [b"course"], "d_k": [b"8", b"16"]})
    assert parsed.values == {"d_k": 16}
    assert parsed.notices == []


def test_excerpt_keeps_safe_characters_and_truncates() -> None:
    assert excerpt("a<b>\"c'&d") == "abcd"
    assert excerpt("1" * 30) == "1" * 20 + "…"


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["d_k", "temperature", "n", "scaled", "view", "causal", "seed", "x"]),
        st.lists(st.one_of(st.text(max_size=80), st.binary(max_size=80)), max_size=3),
    )
)
def test_any_query_gives_a_valid_state(args: dict) -> None:
    """Whatever a link holds, applying it never raises and leaves every control in bounds."""
    state = SimulationState()
    state.apply_query(args)
    assert 1 <= state.d_k <= 1024
    assert 2 <= state.n <= 1024
    assert 0.05 <= state.temperature <= 20
    assert state.view in {"weights", "scaled", "raw"}
    assert "<" not in state.notice


def test_state_round_trips_through_its_query() -> None:
    state = SimulationState(d_k=100, temperature=0.3, n=7, scaled=False, causal=True, seed=9)
    copy = SimulationState()
    copy.apply_query(state.query())
    assert copy.query() == state.query()
    assert (copy.d_k, copy.temperature, copy.n) == (100, 0.3, 7)
    assert format_query_value(True) == "true"
    assert format_query_value(0.25) == "0.25"


def test_grids_are_log_spaced_and_hold_the_powers_of_two() -> None:
    assert D_K_GRID[0] == 1 and D_K_GRID[-1] == 1024
    assert all(2**p in D_K_GRID for p in range(11))
    assert N_GRID[0] == 2 and N_GRID[-1] == 1024
    assert TEMPERATURE_GRID[0] == 0.05 and TEMPERATURE_GRID[-1] == 20
    assert nearest_on_grid(100, D_K_GRID) in D_K_GRID
    assert nearest_on_grid(64, D_K_GRID) == 64
    assert nearest_on_grid(0.051, TEMPERATURE_GRID) == 0.05
