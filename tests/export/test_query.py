"""query.js reads URL query strings as app/simulation/query.py does, value for value and notice for
notice, on every generated hostile link (tests/hostile_queries.py) and on random text;
applies presets as SimulationState does; writes the URL as the served app does; then fits
the values to the offline page's limits. Every notice, and the boxes controller.js puts
them in, is written from a Python template the page receives as data: none is worded in
the JavaScript."""

from __future__ import annotations

import random
import re
import sys
import unicodedata
from urllib.parse import quote, urlencode

import pytest
from hostile_queries import digit_zeros, hostile_queries
from tornado.httputil import parse_qs_bytes

from app.export.page import page_limits, presets_spec
from app.page.bundle import WEB
from app.page.figures import ALERT_TEXTS
from app.page.kernel_data import FIT_NOTICES, build_export_data
from app.simulation.query import (
    NOTICE_TEXTS,
    PARAMETER_NAMES,
    compose_search,
    index_limits,
    parse_query,
    query_spec,
    shown_number,
)
from app.simulation.state import SimulationState

from .fill_templates import template_fields, unfillable
from .js_harness import Runner

SPEC = query_spec()
PRESETS = presets_spec()
"""The served page's preset scenes."""
DATA = build_export_data(128, 512, 0)
LIMITS = page_limits(DATA)
"""What the default export hands query.js to fit a link's values to."""
PAGE_PRESETS = presets_spec(DATA)
"""The preset scenes as the default export carries them, fitted to its d_k and n."""
SERVED_INDEXES = index_limits(SimulationState().param.values())
"""A row past n, as the served state limits it (from its default n)."""
CASES = [case.query for case in hostile_queries()]


def python_parse(query: str) -> tuple[dict, list[str]]:
    """What the served app makes of ``query``: Tornado's arguments, then app.simulation.query."""
    parsed = parse_query(parse_qs_bytes(query, keep_blank_values=True))
    return parsed.values, parsed.notices


def random_values(count: int) -> list[str]:
    """Seeded random short strings from an alphabet that makes numbers, words and junk."""
    rng = random.Random(6)
    alphabet = "0123456789._+-eEinfatruwsoyl \u00a0<>&;%?٣３"
    return ["".join(rng.choices(alphabet, k=rng.randint(0, 8))) for _ in range(count)]


def random_queries() -> list[str]:
    return [
        urlencode({name: value}, quote_via=quote)
        for name in PARAMETER_NAMES
        for value in random_values(40)
    ]


def parse_calls(queries: list[str]) -> list:
    # As the page reads its own address: location.search, with its "?".
    return [("query", "parseQuery", [f"?{query}", SPEC]) for query in queries]


@pytest.mark.parametrize("queries", ["generated", "random"])
def test_parse_query_matches_the_served_app(node: Runner, queries: str) -> None:
    cases = CASES if queries == "generated" else random_queries()
    got = node(parse_calls(cases))
    mismatches = [
        (query[:80], result, python_parse(query))
        for query, result in zip(cases, got, strict=True)
        if (result["values"], result["notices"]) != python_parse(query)
    ]
    assert mismatches == [], f"{len(mismatches)} of {len(cases)}: {mismatches[:3]}"


def test_presets_apply_as_the_served_state_applies_them(node: Runner) -> None:
    """Every preset, alone and with each control of the link moved or kept."""
    cases = ["preset=", "preset=nope", "preset=LESSON&d_k=abc"]
    for key, preset in PRESETS.items():
        cases.append(f"preset={key}")
        for name, value in preset["values"].items():
            same = {True: "true", False: "false"}.get(value, str(value))
            cases += [f"preset={key}&{name}={same}", f"d_k=8&preset={key}&{name}=2"]
    cases += [case for case in CASES if "preset" in case][:200]
    cases += [case for case in CASES if "row=" in case]
    parsed = node(parse_calls(cases))
    applied = node(
        [
            ("query", "applyQuery", [result["values"], PRESETS, None, SERVED_INDEXES])
            for result in parsed
        ]
    )
    for query, result, read in zip(cases, applied, parsed, strict=True):
        state = SimulationState()
        state.apply_query(parse_qs_bytes(query, keep_blank_values=True))
        assert result["preset"] == state.preset, query
        assert {name: getattr(state, name) for name in result["values"]} == result["values"]
        assert " ".join([*read["notices"], *result["notices"]]) == state.notice, query


def test_the_written_url_matches_the_served_apps(node: Runner) -> None:
    values = SimulationState(d_k=8, view="raw", temperature=0.25).query()
    got = node(
        [("query", "composeSearch", [f"?{q}", values, SPEC["reservedPrefix"]]) for q in CASES]
    )
    for query, search in zip(CASES, got, strict=True):
        assert search == compose_search(f"?{query}", values), query[:80]


def test_unicode_tables_come_from_python(node: Runner) -> None:
    """Every decimal digit and every space of this Python, read by query.js as float() and
    str.strip() read them (JavaScript has its own Unicode version and no digit values)."""
    digits = "".join(
        chr(c) for c in range(sys.maxunicode + 1) if unicodedata.decimal(chr(c), -1) >= 0
    )
    spaces = "".join(chr(c) for c in SPEC["spaces"])
    ascii_digits, stripped = node(
        [
            ("query", "asciiDigits", [digits, SPEC]),
            ("query", "strip", [f"{spaces}x{spaces}", SPEC]),
        ]
    )
    assert ascii_digits == "".join(str(unicodedata.decimal(c)) for c in digits)
    assert stripped == "x"
    assert len(SPEC["digitZeros"]) == len(digit_zeros())


def test_notices_never_carry_markup(node: Runner) -> None:
    hostile = '?d_k=<script>alert(1)</script>&view=<img src=x onerror=alert(1)>&n="><svg>'
    ((result),) = node([("query", "parseQuery", [hostile, SPEC])])
    assert len(result["notices"]) == 3
    assert not any(char in "".join(result["notices"]) for char in "<>\"'")
    assert "“\\x3cscript\\x3ealert\\x281\\x29\\x3c\\x2fsc…”" in result["notices"][0]


@pytest.mark.parametrize(
    "number",
    [0.95000000001, 2000.0, 1e16, 1e22, 1.5e300, 1e-5, 1e-4, -0.5, 1e15 + 0.5, 5e-324, 1 / 3],
)
def test_numbers_are_shown_as_python_shows_them(node: Runner, number: float) -> None:
    ((shown),) = node([("query", "shownNumber", [number])])
    assert shown == shown_number(number)


def test_random_numbers_are_shown_as_python_shows_them(node: Runner) -> None:
    rng = random.Random(25)
    numbers = [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(2000)]
    numbers += [float(rng.randint(-(10**18), 10**18)) for _ in range(200)]
    got = node([("query", "shownNumber", [number]) for number in numbers])
    assert got == [shown_number(number) for number in numbers]


def fitted(node: Runner, query: str) -> dict:
    """What the offline page makes of ``query``: parsed, preset applied, fitted."""
    ((parsed),) = node(parse_calls([query]))
    ((result),) = node([("query", "applyQuery", [parsed["values"], PAGE_PRESETS, LIMITS])])
    return {**result, "notices": parsed["notices"] + result["notices"]}


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
        ("d_k=٣٢", {"d_k": 32}, None),
    ],
)
def test_values_beyond_the_page_are_fitted_with_a_notice(
    node: Runner, query: str, values: dict, notice: str | None
) -> None:
    result = fitted(node, query)
    assert result["values"] == values
    if notice is None:
        assert result["notices"] == []
    else:
        assert any(notice in text for text in result["notices"]), result["notices"]


@pytest.mark.parametrize(
    ("query", "row", "notice"),
    [
        ("n=4&row=1000", 3, "row = 1000 is past the last of n = 4; using 3."),
        ("n=2&row=1023&causal=true", 1, "row = 1023 is past the last of n = 2; using 1."),
        ("preset=causal&row=1023", 31, "row = 1023 is past the last of n = 32; using 31."),
        ("row=40", 31, "row = 40 is past the last of n = 32; using 31."),
        ("n=500&row=200", 127, "row = 200 is past the last of n = 128; using 127."),
        ("n=4&row=3", 3, None),
    ],
)
def test_a_row_past_n_is_the_last_row_on_the_offline_page(
    node: Runner, query: str, row: int, notice: str | None
) -> None:
    """The file's n (its largest 128, its first 32) decides the last row."""
    result = fitted(node, query)
    assert result["values"]["row"] == row
    assert (
        (notice in result["notices"])
        if notice
        else not any(text.startswith("row") for text in result["notices"])
    )


def test_values_within_the_page_pass_unchanged(node: Runner) -> None:
    query = "d_k=256&temperature=0.33&n=100&scaled=false&view=scaled&causal=true&seed=0"
    result = fitted(node, query)
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


@pytest.mark.parametrize(
    ("query", "preset", "d_k"),
    [
        ("preset=collapse", "collapse", 512),  # the scene as the file carries it
        ("preset=collapse&d_k=1024", "collapse", 512),
        ("preset=collapse&d_k=512", "collapse", 512),  # the link asks for what the page has
        ("preset=collapse&d_k=8", "", 8),
        ("preset=lesson", "lesson", 4),
        ("preset=causal&row=3", "", 64),  # the lesson's row counts, as on the served page
        ("preset=causal&row=7", "causal", 64),
        ("preset=causal&row=1023", "", 64),
    ],
)
def test_presets_on_the_offline_page(node: Runner, query: str, preset: str, d_k: int) -> None:
    result = fitted(node, query)
    assert (result["preset"], result["values"]["d_k"]) == (preset, d_k)
    if preset == "collapse":
        assert result["values"]["scaled"] is False
    # A built-in scene fits the file it ships in: only a link's own value past it is told.
    beyond = [t for t in result["notices"] if "the largest d_k this offline page carries" in t]
    assert len(beyond) == (query == "preset=collapse&d_k=1024"), result["notices"]
    if "&" not in query:
        assert result["notices"] == [], result["notices"]


@pytest.mark.parametrize(("n_max", "d_max", "seed"), [(128, 512, 0), (16, 16, 3), (3, 2, 1)])
def test_every_built_in_scene_fits_the_file_it_ships_in(
    node: Runner, n_max: int, d_max: int, seed: int
) -> None:
    """Exported with any limits, a file's presets ask for nothing it lacks (no notice, the
    scene kept) and their words cite only values it has: the scene's own and its top d_k."""
    data = build_export_data(n_max, d_max, seed)
    presets, limits = presets_spec(data), page_limits(data)
    for key, preset in presets.items():
        ((parsed),) = node(parse_calls([f"preset={key}"]))
        ((result),) = node([("query", "applyQuery", [parsed["values"], presets, limits])])
        assert (result["preset"], result["notices"]) == (key, []), key
        assert result["values"]["d_k"] in data.d_values and result["values"]["n"] <= n_max
        assert result["values"]["seed"] == seed and result["values"]["row"] < result["values"]["n"]
        words = f"{preset['label']} {preset['description']}"
        cited = [int(value) for value in re.findall(r"d_k (?:= |to )(\d+)", words)]
        assert all(value <= d_max for value in cited), (key, words)


TEMPLATES = {
    **{f"app.simulation.query.NOTICE_TEXTS[{key!r}]": text for key, text in NOTICE_TEXTS.items()},
    **{f"app.page.kernel_data.FIT_NOTICES[{key!r}]": text for key, text in FIT_NOTICES.items()},
    **{f"app.page.figures.ALERT_TEXTS[{key!r}]": text for key, text in ALERT_TEXTS.items()},
}
"""Every template the page's notices and their boxes are written from, by where it lives."""


def test_every_notice_template_is_one_fill_writes() -> None:
    assert unfillable(TEMPLATES) == []


def test_fill_writes_each_notice_as_str_format_does(node: Runner) -> None:
    """Each template with text in its plain fields and a fraction in its numeric ones."""
    values = [
        {name: 0.000123456789 if spec else f"<{name}> “x”" for name, spec in template_fields(t)}
        for t in TEMPLATES.values()
    ]
    got = node([("text", "fill", [t, v]) for t, v in zip(TEMPLATES.values(), values, strict=True)])
    expected = [t.format(**v) for t, v in zip(TEMPLATES.values(), values, strict=True)]
    assert got == expected


OLD_WORDING = (
    "so it was ignored",
    "is not a number",
    "is not a finite number",
    "is below the smallest",
    "is above the largest",
    "must be a whole number",
    "is not true or false",
    "characters long",
    "offline page carries",
    "steps; using",
    "so it keeps that one",
    "Some link values were adjusted",
    "Preset scene",
)
"""Phrases of the notices and their boxes, which only the Python templates may word."""


@pytest.mark.parametrize("script", ["shared/query.js", "offline/page.js"])
def test_no_notice_is_worded_in_the_javascript(script: str) -> None:
    source = (WEB / script).read_text(encoding="utf-8")
    assert [phrase for phrase in OLD_WORDING if phrase in source] == []
