"""query.js reads URL query strings as app/query.py does, then fits them to the page's limits."""

from __future__ import annotations

import random
from urllib.parse import parse_qs, urlencode

import pytest

from app.export.data import d_k_positions
from app.export.page import query_spec
from app.query import parse_query

from .js_harness import Runner

SPEC = query_spec()
LIMITS = {"d_values": d_k_positions(512), "n_max": 128, "seed": 0}
PAGE_PARAMETERS = ("d_k", "temperature", "n", "scaled", "view", "causal", "seed")
"""The served app's query parameters an exported page reads (it ignores the others)."""

VALUES = [
    "64", "64.0", "64.5", "65.5", " 64 ", "\u00a064\u3000", "\x1c64\x85", "1e3", "1E3", "1_024",
    "1__024", "_1", "1_", ".5", "5.", "1.e2", "+.5e-3", "-3", "0", "00012", "1e999", "-1e999",
    "inf", "-Infinity", "nAn", "abc", "", "0x10", "1e1_0", "1_000.000_1", "2.5", "3.5",
    "-2.5", "1e300", "4294967295.5", "4294967296", "1234565", "0.1234567891", "1024.4999",
    "1e-7", "0.049", "20.0001", "0.3", "true", "TRUE", " yes ", "on", "Off", "1", "maybe",
    "weights", "RAW", " scaled ", "attention", "<script>alert(1)</script>", "\"'><img src=x>",
    "x" * 70, "1" * 65, "😀" * 33, "%", "é", "\ufffd",
]  # fmt: skip
"""Interesting values: Python float() syntax, rounding ties, bounds, booleans, views, markup."""


def python_parse(query: str) -> tuple[dict, list[str]]:
    """What the served app makes of ``query`` (Tornado keeps blank values, as parse_qs can)."""
    parsed = parse_query(parse_qs(query, keep_blank_values=True))
    return parsed.values, parsed.notices


def random_values(count: int) -> list[str]:
    """Seeded random short strings from an alphabet that makes numbers, words and junk."""
    rng = random.Random(6)
    alphabet = "0123456789._+-eEinfatruwsoyl \u00a0<>&;%"
    return ["".join(rng.choices(alphabet, k=rng.randint(0, 8))) for _ in range(count)]


def queries() -> list[str]:
    """One query per (parameter, value), plus repeated names and several names at once."""
    single = [urlencode({name: value}) for name in PAGE_PARAMETERS for value in VALUES]
    fuzz = [urlencode({name: value}) for name in PAGE_PARAMETERS for value in random_values(40)]
    mixed = [
        "d_k=8&d_k=512&n=16&view=raw&unknown=<b>",
        "scaled=false&causal=true&temperature=0.25&embed=true",
        "d_k&n=&view",
        "d_k=%ff%fe&temperature=%zz&n=1+2",
    ]
    return single + fuzz + mixed


def test_parse_query_matches_the_served_app(node: Runner) -> None:
    cases = queries()
    got = node([("query", "parseQuery", [query, SPEC]) for query in cases])
    for query, result in zip(cases, got, strict=True):
        values, notices = python_parse(query)
        assert (result["values"], result["notices"]) == (values, notices), query


def test_notices_never_carry_markup(node: Runner) -> None:
    hostile = 'd_k=<script>alert(1)</script>&view=<img src=x onerror=alert(1)>&n="><svg>'
    ((result),) = node([("query", "parseQuery", [hostile, SPEC, LIMITS])])
    assert len(result["notices"]) == 3
    assert not any(char in "".join(result["notices"]) for char in "<>\"'")
    assert "scriptalert1script" in result["notices"][0]


@pytest.mark.parametrize(
    ("query", "values", "notice"),
    [
        ("d_k=1000", {"d_k": 512}, "d_k = 1000 is above 512, the largest d_k this offline page"),
        (
            "d_k=100",
            {"d_k": 108},
            "d_k = 100 is not one of this offline page's d_k steps; using 108",
        ),
        ("d_k=2000", {"d_k": 512}, "d_k = 2000 is above the largest value 1024; using 1024."),
        ("n=500", {"n": 128}, "n = 500 is above 128, the largest n this offline page carries"),
        ("seed=7", {"seed": 0}, "seed = 7: this offline page was exported with seed 0"),
    ],
)
def test_values_beyond_the_page_are_fitted_with_a_notice(
    node: Runner, query: str, values: dict, notice: str
) -> None:
    ((result),) = node([("query", "parseQuery", [query, SPEC, LIMITS])])
    assert result["values"] == values
    assert any(notice in text for text in result["notices"]), result["notices"]


def test_values_within_the_page_pass_unchanged(node: Runner) -> None:
    query = "d_k=256&temperature=0.33&n=100&scaled=false&view=scaled&causal=true&seed=0"
    ((result),) = node([("query", "parseQuery", [query, SPEC, LIMITS])])
    assert result["notices"] == []
    assert result["values"] == {
        "d_k": 256,
        "temperature": 0.33,
        "n": 100,
        "scaled": False,
        "view": "scaled",
        "causal": True,
        "seed": 0,
    }
