"""text.js writes what the server writes: Python's number formats, readouts and titles."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from app.page.assumptions import assumptions_config
from app.page.bundle import WEB
from app.page.views.assumptions import ASSUMPTION_TEXTS, assumptions_html
from app.page.views.histogram import HISTOGRAM_TEXTS, DotProductHistograms
from app.page.views.readouts import READOUT_TEXTS, readouts_html, verdict
from app.simulation.csv_files import FILE_NAME_TEXTS, HISTOGRAM_ROW_NAMES
from app.simulation.model import SimulationModel
from app.simulation.parts import LESSON_LAW, law_of
from app.simulation.spec import page_spec
from app.simulation.state import SimulationState

from .fill_templates import unfillable
from .js_harness import Runner

TIES = [0.0625, 0.125, 0.375, 2.5, 3.5, 0.5, 1.5, 1234565.0, 123456.5, 0.0009765625]
"""Values exactly halfway between two roundings: Python rounds them to even."""

THRESHOLDS = {key: page_spec()[key] for key in ("one_hot_threshold", "uniform_entropy_fraction")}
"""The readout thresholds as the page's config hands them to text.js."""

CATALOGUES = {
    "readouts": READOUT_TEXTS,
    "histograms": HISTOGRAM_TEXTS,
    "assumptions": ASSUMPTION_TEXTS,
    "file names": FILE_NAME_TEXTS,
}
"""The templates the offline page receives as data, by the module that owns them."""

SPECIAL = [0.0, -0.0, -0.04, 9.96, 99.95, 999.9995, 1e-5, 1e-4, 1e16, 1e22, 1e300, 5e-324]


def sample_numbers() -> list[float]:
    """Ties, specials and random numbers over many magnitudes."""
    rng = np.random.default_rng(5)
    spread = rng.normal(size=200) * 10.0 ** rng.integers(-8, 9, size=200)
    return [*TIES, *(-x for x in TIES), *SPECIAL, *spread.tolist()]


@pytest.mark.parametrize("places", [0, 1, 2, 3])
def test_format_fixed_matches_python(node: Runner, places: int) -> None:
    numbers = sample_numbers()
    got = node([("text", "formatFixed", [x, places]) for x in numbers])
    assert got == [format(x, f".{places}f") for x in numbers]


@pytest.mark.parametrize("precision", [3, 6])
def test_format_general_matches_python(node: Runner, precision: int) -> None:
    numbers = sample_numbers() + [math.sqrt(d) for d in range(1, 1025)]
    got = node([("text", "formatGeneral", [x, precision]) for x in numbers])
    assert got == [format(x, f".{precision}g") for x in numbers]


def _weights_frame(model: SimulationModel) -> dict:
    """The model's weights as text.js reads a weights frame (its numbers only)."""
    weights = model.weights
    frame = {
        "meanMaxWeight": weights.mean_max_weight,
        "meanEntropy": weights.mean_entropy,
        "uniformEntropy": weights.uniform_entropy,
        "uniformMaxWeight": weights.uniform_max_weight,
        "precision": weights.precision,
        "stable": weights.stable,
        "maxLogit": weights.max_logit,
    }
    report = weights.precision_report
    if report is not None:
        frame["report"] = {
            "nonFinite": report.non_finite,
            "size": report.size,
            "maxAbsError": report.max_abs_error,
        }
    return frame


def _law(state: SimulationState) -> dict:
    """The law of q and k as text.js's lawOf gives it, from the server's own
    app.simulation.parts."""
    return {"lesson": law_of(state) == LESSON_LAW, "qkNorm": bool(state.qk_norm)}


def _histogram_frames(model: SimulationModel) -> tuple[dict, dict]:
    """The model's raw and scaled histograms as text.js reads them."""
    return tuple(
        {"std": frame.std, "expectedStd": frame.expected_std, "expectedMean": frame.expected_mean}
        for frame in (model.raw_histogram, model.scaled_histogram)
    )


@pytest.mark.parametrize(
    "values",
    [
        {"d_k": 64, "scaled": True, "temperature": 1.0, "n": 32, "causal": False},
        {"d_k": 512, "scaled": False, "temperature": 1.0, "n": 16, "causal": False},
        {"d_k": 4, "scaled": True, "temperature": 20.0, "n": 128, "causal": True},
        # Another law, another format: the references are the expected stds, with the
        # precision tiles (an overflow without the max subtraction).
        {"d_k": 512, "scaled": False, "precision": "float16", "subtract_max": False},
        {"d_k": 256, "sigma_q": 2.0, "sigma_k": 0.5, "precision": "bfloat16", "causal": True},
        {"d_k": 16, "precision": "float32", "n": 8},
        # The served page's own law: correlated q and k, and QK-norm.
        {"d_k": 128, "rho": 0.5},
        {"d_k": 64, "qk_norm": True},
        {"d_k": 256, "sigma_q": 3.0, "qk_norm": True, "rho": -0.25},
    ],
)
def test_readouts_html_matches_the_servers(node: Runner, values: dict) -> None:
    model = SimulationModel(SimulationState(**values))
    state = model.state
    raw, scaled = _histogram_frames(model)
    args = [READOUT_TEXTS, state.d_k, raw, scaled, _weights_frame(model), THRESHOLDS, _law(state)]
    (html,) = node([("text", "readoutsHtml", args)])
    assert html == readouts_html(model)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"d_k": 512, "scaled": False, "precision": "float16", "subtract_max": False},
        {"sigma_q": 2.0, "sigma_k": 0.5, "temperature": 0.5, "n": 8, "precision": "bfloat16"},
        {"d_k": 1024, "scaled": False, "temperature": 0.05, "precision": "float16"},
    ],
)
def test_section_readouts_html_matches_the_servers(node: Runner, values: dict) -> None:
    model = SimulationModel(SimulationState(**values))
    state = {name: getattr(model.state, name) for name in ("d_k", "sigma_q", "sigma_k")}
    state["precision"] = model.state.precision
    threshold = assumptions_config()["overflow_thresholds"][model.state.precision]
    raw, scaled = _histogram_frames(model)
    weights = _weights_frame(model)
    weights.setdefault("report", {"nonFinite": 0, "size": model.weights.weights.size})
    weights["report"].setdefault("maxAbsError", 0.0)
    args = [ASSUMPTION_TEXTS, state, raw, scaled, weights, threshold]
    groups = assumptions_config()["readout_groups"]
    calls = [("assumptions", "sectionReadoutsHtml", [*args, groups[group]]) for group in groups]
    (html, *grouped) = node([("assumptions", "sectionReadoutsHtml", args), *calls])
    assert html == assumptions_html(model)
    # Each group's tiles, beside its controls (app.page.views.assumptions.READOUT_GROUPS).
    assert grouped == [assumptions_html(model, group) for group in groups]


def test_verdict_matches_the_servers(node: Runner) -> None:
    cases = [
        (0.95, 0.1, 3.0),
        (0.9, 0.2, 3.0),
        (0.2, 2.9, 3.0),
        (0.2, 2.84, 3.0),
        (0.5, 0.0, 0.0),
        (math.nan, math.nan, 3.0),
    ]
    got = node([("text", "verdict", [READOUT_TEXTS, *case, THRESHOLDS]) for case in cases])
    assert got == [verdict(*case) for case in cases]


def test_verdict_follows_the_thresholds_it_is_handed(node: Runner) -> None:
    lowered = {"one_hot_threshold": 0.5, "uniform_entropy_fraction": 0.5}
    one_hot, uniform = node(
        [
            ("text", "verdict", [READOUT_TEXTS, 0.6, 0.1, 3.0, lowered]),
            ("text", "verdict", [READOUT_TEXTS, 0.2, 1.6, 3.0, lowered]),
        ]
    )
    assert one_hot == READOUT_TEXTS["verdict_one_hot"]
    assert uniform == READOUT_TEXTS["verdict_uniform"]


@pytest.mark.parametrize("d_k", [1, 2, 3, 45, 64, 181, 512, 1024])
def test_histogram_titles_match_the_servers(node: Runner, d_k: int) -> None:
    views = DotProductHistograms(SimulationModel(SimulationState(d_k=d_k)))
    (titles,) = node([("text", "histogramTitles", [HISTOGRAM_TEXTS, d_k])])
    for which, view in (("raw", views.raw), ("scaled", views.scaled)):
        assert titles[which]["title"] == view.figure.title.text
        assert titles[which]["curve"] == view.figure.legend[0].items[1].label.value


@pytest.mark.parametrize(
    "values",
    [
        {"sigma_q": 2.0, "sigma_k": 0.5},
        {"sigma_q": 0.25, "sigma_k": 4.0, "d_k": 3},
        {"rho": 0.75, "d_k": 32},
        {"qk_norm": True, "d_k": 512},
        {"qk_norm": True, "rho": 0.5, "sigma_k": 2.0},
    ],
)
def test_histogram_titles_under_another_law_match_the_servers(node: Runner, values: dict) -> None:
    model = SimulationModel(SimulationState(**values))
    views = DotProductHistograms(model)
    raw, scaled = _histogram_frames(model)
    args = [HISTOGRAM_TEXTS, model.state.d_k, raw, scaled, _law(model.state)]
    (titles,) = node([("text", "histogramTitles", args)])
    for which, view in (("raw", views.raw), ("scaled", views.scaled)):
        assert titles[which]["title"] == view.figure.title.text
        assert titles[which]["curve"] == view.figure.legend[0].items[1].label.value


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"sigma_q": 2.0},
        {"sigma_k": 0.5},
        {"rho": 0.25},
        {"rho": -0.5},
        {"qk_norm": True},
        {"qk_norm": True, "sigma_q": 1.0, "rho": 0.0},
    ],
)
def test_law_of_matches_the_servers(node: Runner, values: dict) -> None:
    state = SimulationState(**values)
    shown = {name: getattr(state, name) for name in ("sigma_q", "sigma_k", "rho", "qk_norm")}
    (law,) = node([("text", "lawOf", [shown])])
    assert law == _law(state)


def test_law_of_a_page_without_the_laws_controls_is_the_lessons(node: Runner) -> None:
    # The offline file has no ρ or QK-norm control: their lesson values stand.
    (law,) = node([("text", "lawOf", [{"sigma_q": 1.0, "sigma_k": 1.0}])])
    assert law == {"lesson": True, "qkNorm": False}


@pytest.mark.parametrize("name", CATALOGUES)
def test_every_template_the_page_receives_is_fillable(name: str) -> None:
    assert unfillable(CATALOGUES[name]) == []


FORMER_WORDS = (
    "one-hot",
    "uniform",
    "overflowed",
    "Rows",
    "useful range",
    "std of",
    "mean max",
    "entropy (nats)",
    "non-finite weights",
    "largest logit",
    "largest |weight",
    "target",
    "expected",
    "max subtraction",
    "finite weights",
    "left out",
    "√d_k",
    "Normal(",
    "Raw q·k",
    "Scaled q·k",
    "std ≈",
    "mean of",
    "exp overflows",
    "ρ·d_k",
    "—",
)
"""Words the readouts' and histograms' JavaScript once carried a copy of."""

JS_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`(?:[^`\\]|\\.)*`')
"""A string literal of the export's JavaScript: double, single or back quotes."""


def _string_literals(script: str) -> list[str]:
    """The string literals of ``script``, its comments left out (they may name the words)."""
    code = re.sub(r"/\*.*?\*/", "", script, flags=re.DOTALL)
    code = re.sub(r"(?m)^\s*//.*$|\s//.*$", "", code)
    return JS_STRING.findall(code)


@pytest.mark.parametrize("script", ["shared/text.js", "offline/assumption_numbers.js"])
def test_the_scripts_carry_no_copy_of_the_servers_words(script: str) -> None:
    literals = _string_literals((WEB / script).read_text(encoding="utf-8"))
    assert literals, "the literal finder found nothing: it no longer reads the script"
    found = sorted({word for word in FORMER_WORDS for text in literals if word in text})
    assert found == [], f"{script} writes the server's words itself: {found}"
    # Nor any other fixed part of a template the page receives.
    pieces = {
        piece.strip()
        for name, catalogue in CATALOGUES.items()
        # The file names' words are single words a script also uses as identifiers: they
        # are checked whole, below.
        if name != "file names"
        for template in catalogue.values()
        for piece in re.split(r"\{[^{}]*\}", template)
        if len(piece.strip()) >= 6
    }
    copied = sorted(piece for piece in pieces for text in literals if piece in text)
    assert copied == [], f"{script} copies parts of the served templates: {copied}"
    words = {*FILE_NAME_TEXTS.values(), *HISTOGRAM_ROW_NAMES}
    named = sorted(literal for literal in literals if literal[1:-1] in words)
    assert named == [], f"{script} names the CSV files or rows itself: {named}"


FILL_CASES = [
    ("{n} of {total:,} rows", {"n": 3, "total": 1234567}),
    ("std ≈ {std:.1f}, expected {expected:.3g}", {"std": 11.25, "expected": 0.0001234}),
    ("{word}: {value:.2f} {{not a field}}", {"word": "entropy", "value": 2.675}),
    ("{x:.3g} and {y:.0f}", {"x": float("nan"), "y": -0.4}),
    ("{big:.3g}", {"big": 1.0e22}),
    ("no fields at all", {}),
]


@pytest.mark.parametrize(("template", "values"), FILL_CASES)
def test_fill_writes_what_str_format_writes(node: Runner, template: str, values: dict) -> None:
    assert unfillable([template]) == []
    (got,) = node([("text", "fill", [template, values])])
    assert got == template.format(**values)


@pytest.mark.parametrize(
    ("template", "values"),
    [("{missing}", {}), ("{x:>8}", {"x": 1.0}), ("{x}", {"x": 0.5}), ("{x!r}", {"x": 1})],
)
def test_fill_refuses_what_it_cannot_write_as_python_does(
    node: Runner, template: str, values: dict
) -> None:
    with pytest.raises(Exception, match="fill"):
        node([("text", "fill", [template, values])])
