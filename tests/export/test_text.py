"""text.js writes what the server writes: Python's number formats, readouts and titles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.controls_spec import page_spec
from app.model import SimulationModel
from app.state import SimulationState
from app.views.histogram import DotProductHistograms
from app.views.readouts import readouts_html, verdict

from .fill_templates import unfillable
from .js_harness import Runner

TIES = [0.0625, 0.125, 0.375, 2.5, 3.5, 0.5, 1.5, 1234565.0, 123456.5, 0.0009765625]
"""Values exactly halfway between two roundings: Python rounds them to even."""

THRESHOLDS = {key: page_spec()[key] for key in ("one_hot_threshold", "uniform_entropy_fraction")}
"""The readout thresholds as the page's config hands them to text.js."""

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


@pytest.mark.parametrize(
    ("d_k", "scaled", "temperature", "n", "causal"),
    [(64, True, 1.0, 32, False), (512, False, 1.0, 16, False), (4, True, 20.0, 128, True)],
)
def test_readouts_html_matches_the_servers(
    node: Runner, d_k: int, scaled: bool, temperature: float, n: int, causal: bool
) -> None:
    model = SimulationModel(
        SimulationState(d_k=d_k, scaled=scaled, temperature=temperature, n=n, causal=causal)
    )
    weights = model.weights
    frame = {
        "meanMaxWeight": weights.mean_max_weight,
        "meanEntropy": weights.mean_entropy,
        "uniformEntropy": weights.uniform_entropy,
        "uniformMaxWeight": weights.uniform_max_weight,
    }
    (html,) = node(
        [
            (
                "text",
                "readoutsHtml",
                [
                    d_k,
                    {"std": model.raw_histogram.std},
                    {"std": model.scaled_histogram.std},
                    frame,
                    THRESHOLDS,
                ],
            )
        ]
    )
    assert html == readouts_html(model)


def test_verdict_matches_the_servers(node: Runner) -> None:
    cases = [(0.95, 0.1, 3.0), (0.9, 0.2, 3.0), (0.2, 2.9, 3.0), (0.2, 2.84, 3.0), (0.5, 0.0, 0.0)]
    got = node([("text", "verdict", [*case, THRESHOLDS]) for case in cases])
    assert got == [verdict(*case) for case in cases]


def test_verdict_follows_the_thresholds_it_is_handed(node: Runner) -> None:
    lowered = {"one_hot_threshold": 0.5, "uniform_entropy_fraction": 0.5}
    one_hot, uniform = node(
        [
            ("text", "verdict", [0.6, 0.1, 3.0, lowered]),
            ("text", "verdict", [0.2, 1.6, 3.0, lowered]),
        ]
    )
    assert one_hot.startswith("Rows are nearly one-hot")
    assert uniform.startswith("Rows are nearly uniform")


@pytest.mark.parametrize("d_k", [1, 2, 3, 45, 64, 181, 512, 1024])
def test_histogram_titles_match_the_servers(node: Runner, d_k: int) -> None:
    views = DotProductHistograms(SimulationModel(SimulationState(d_k=d_k)))
    (titles,) = node([("text", "histogramTitles", [d_k])])
    for which, view in (("raw", views.raw), ("scaled", views.scaled)):
        assert titles[which]["title"] == view.figure.title.text
        assert titles[which]["curve"] == view.figure.legend[0].items[1].label.value


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
