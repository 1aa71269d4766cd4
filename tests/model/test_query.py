"""Untrusted URL values: parsed, clamped or ignored, always explained, never echoed raw."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httputil import parse_qs_bytes

from app.simulation.address import OMITTED
from app.simulation.query import (
    compose_search,
    excerpt,
    format_query_value,
    parse_query,
    shown_number,
)
from app.simulation.spec import D_K_GRID, N_GRID, TEMPERATURE_GRID, nearest_on_grid
from app.simulation.state import SimulationState


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
    assert "“\\x3cscript\\x3ealert\\x281\\x29\\x3c\\x2fsc…”" in text


def test_unknown_names_are_ignored_and_last_value_wins() -> None:
    parsed = parse_query({"utm_source": [b"course"], "d_k": [b"8", b"16"]})
    assert parsed.values == {"d_k": 16}
    assert parsed.notices == []


def test_excerpt_escapes_what_is_not_safe_and_truncates() -> None:
    assert excerpt("a<b>\"c'&d") == "a\\x3cb\\x3e\\x22c\\x27\\x26d"
    assert excerpt("1" * 30) == "1" * 20 + "…"
    assert excerpt("tr ue?") == "tr ue?"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("true\u200b", "true\\u200b"),  # zero-width space
        ("ra\u0301w", "ra\\u0301w"),  # combining acute accent
        ("\ufeffraw", "\\ufeffraw"),  # byte-order mark
        ("wei\u00adghts", "wei\\xadghts"),  # soft hyphen
        ("\u212aelvin", "\\u212aelvin"),  # Kelvin sign
        ("x\U000e0001", "x\\U000e0001"),  # a tag character
        ("\\u200b", "\\x5cu200b"),  # a backslash typed as such is not an escape
    ],
)
def test_invisible_and_lookalike_characters_are_shown_as_escapes(sent: str, shown: str) -> None:
    assert excerpt(sent) == shown


@pytest.mark.parametrize(
    ("args", "notice"),
    [
        ({"scaled": "true\u200b"}, "scaled: “true\\u200b” is not true or false"),
        ({"view": "ra\u0301w"}, "view: “ra\\u0301w” is not one of"),
        ({"rho": "0.95000000001"}, "rho = 0.95000000001 is above the largest value 0.95"),
        ({"d_k": "1024.0000000001"}, "d_k must be a whole number; 1024.0000000001 was rounded"),
        ({"temperature": "0.0499999999999"}, "temperature = 0.0499999999999 is below"),
        ({"seed": "1e20"}, "seed = 1e+20 is above the largest value 4294967295"),
        ({"d_k": "2000"}, "d_k = 2000 is above the largest value 1024; using 1024."),
    ],
)
def test_a_notice_shows_what_was_sent(args: dict, notice: str) -> None:
    assert any(notice in text for text in parse_query(args).notices), parse_query(args).notices


@pytest.mark.parametrize(
    ("args", "row", "n"),
    [
        ({"n": "4", "row": "1000"}, 3, 4),
        ({"n": "2", "row": "1023", "causal": "true"}, 1, 2),
        ({"preset": "causal", "row": "1023"}, 31, 32),
        ({"row": "32"}, 31, 32),
        ({"n": "1024", "row": "1023"}, 1023, 1024),
    ],
)
def test_a_row_past_n_is_the_last_row_with_a_notice(args: dict, row: int, n: int) -> None:
    state = SimulationState()
    state.apply_query(args)
    assert (state.row, state.n) == (row, n)
    assert state.query()["row"] == str(row), "the written URL says the row shown"
    clamped = int(args["row"]) >= n
    assert (f"row = {args['row']} is past the last of n = {n}; using {row}." in state.notice) is (
        clamped
    )
    assert state.preset == "", "the link moved the row away from the scene"


def test_shown_numbers_read_back_as_the_same_float() -> None:
    for number in (0.95000000001, 1e-7, 2**60 + 0.0, 1 / 3, -0.0, 5e-324, 1e16):
        assert float(shown_number(number)) == number


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


def test_what_the_server_left_out_is_named_in_the_notice_and_not_written_back() -> None:
    query = f"d_k=8&id=1&{OMITTED}=25002.x&{OMITTED}=5000.%3Cb%3E"
    state = SimulationState()
    state.apply_query(parse_qs_bytes(query, keep_blank_values=True))
    assert state.d_k == 8
    assert "x: the parameter is 25,002 characters long, too long to keep" in state.notice
    assert "\\x3cb\\x3e: the parameter is 5,000 characters long" in state.notice
    assert compose_search(f"?{query}", {"d_k": "8"}) == "?d_k=8&id=1"


@pytest.mark.parametrize("value", ["", "x", ".x", "1e3.x", "-1.x", "١٢.x", "9999999999.x"])
def test_a_note_of_another_form_is_skipped(value: str) -> None:
    state = SimulationState()
    state.apply_query({OMITTED: [value.encode()]})
    assert state.notice == ""


def test_at_most_ten_left_out_parameters_are_named() -> None:
    state = SimulationState()
    state.apply_query({OMITTED: [f"5000.p{i}".encode() for i in range(1000)]})
    assert state.notice.count("too long to keep") == 10
