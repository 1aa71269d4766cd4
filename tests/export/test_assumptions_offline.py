"""The offline "When the assumptions break" section: assumptions.js against sdpa_core and
app (under Node), and the section in the exported page from file:// (in Chromium)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import sdpa_core
from app.page.assumptions import SECTION_CONTROLS, SERVER_ONLY, assumptions_config
from app.page.views.assumptions import ASSUMPTIONS_TITLE, READOUT_GROUPS, assumptions_html
from app.page.views.readouts import readouts_html
from app.simulation.csv_files import histogram_csv, histogram_filename, matrix_csv, matrix_filename
from app.simulation.model import SimulationModel
from app.simulation.parts import QKLaw, histograms_for, scores_for, weights_frame
from app.simulation.spec import CONTROL_BY_NAME, PRECISION_CHOICES
from app.simulation.state import SimulationState

from .conftest import OfflinePage
from .js_harness import Runner

SEED = 0
FORMATS = tuple(PRECISION_CHOICES)
CONFIG = assumptions_config()
ULP = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
"""Relative spacing of each format's numbers near 1."""


def test_the_file_carries_the_sections_controls_but_rho_and_qk_norm() -> None:
    assert SECTION_CONTROLS == ("sigma_q", "sigma_k", "precision", "subtract_max")
    assert SERVER_ONLY == ("rho", "qk_norm")
    for name in SERVER_ONLY:
        assert not CONTROL_BY_NAME[name].offline


def test_rounding_to_each_format_matches_numpy_and_ml_dtypes(node: Runner) -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.normal(scale=10.0, size=2000),
            rng.normal(scale=1e-6, size=200),  # float16 subnormals
            [65504.0, 65519.99, 65520.0, 70000.0, -65520.0, 1e39, 3.3961e38, -0.0, 0.0],
            # Ties between two float16 (and bfloat16) neighbours: to even.
            [1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 2.0**-25, 3 * 2.0**-25],
            [1 + 2.0**-8 + 2.0**-30],  # bfloat16 rounds through float32, as ml_dtypes does
        ]
    )
    with np.errstate(over="ignore"):
        expected = {
            "float64": values,
            "float32": values.astype(np.float32),
            "float16": values.astype(np.float16),
            "bfloat16": values.astype(np.float32).astype(ml_dtypes.bfloat16),
        }
    results = node([("assumptions", "roundToFormat", [values, name]) for name in FORMATS])
    for name, result in zip(FORMATS, results, strict=True):
        np.testing.assert_array_equal(result, expected[name].astype(np.float64), err_msg=name)


def _logits(rng: np.random.Generator, scale: float) -> np.ndarray:
    logits = rng.normal(scale=scale, size=(24, 40))
    logits[3, 5:] = -np.inf  # a masked tail
    logits[7, :] = -np.inf  # a fully masked row
    return logits


@pytest.mark.parametrize("stable", [True, False])
@pytest.mark.parametrize("scale", [1.0, 30.0])
def test_the_softmax_in_each_format_matches_the_core(
    node: Runner, stable: bool, scale: float
) -> None:
    logits = _logits(np.random.default_rng(int(scale)), scale)
    calls = [
        ("assumptions", "softmaxInFormat", [logits.ravel(), *logits.shape, name, stable])
        for name in FORMATS
    ]
    for name, result in zip(FORMATS, node(calls), strict=True):
        expected = sdpa_core.softmax(logits, stable=stable, dtype=name).astype(np.float64).ravel()
        # Overflow exactly where the format overflows; elsewhere within its rounding (NumPy's
        # float32 exp and sums may differ from JavaScript's in their last bit).
        np.testing.assert_array_equal(np.isnan(result), np.isnan(expected), err_msg=name)
        np.testing.assert_array_equal(np.isinf(result), np.isinf(expected), err_msg=name)
        finite = np.isfinite(expected)
        np.testing.assert_allclose(
            result[finite], expected[finite], rtol=4 * ULP[name], atol=1e-12, err_msg=name
        )
    if scale == 30.0 and not stable:
        assert np.isnan(node(calls[2:3])[0]).any(), "float16 without the max subtraction overflows"


def test_the_precision_report_matches_the_core(node: Runner) -> None:
    reference = np.array([0.5, 0.25, 0.25, 1.0, 0.0])
    values = np.array([0.5, np.nan, 0.2, np.inf, -np.inf])
    (report,) = node([("assumptions", "precisionReport", [values, reference])])
    expected = sdpa_core.precision_report(values, reference)
    assert (report["nan"], report["inf"], report["nonFinite"], report["size"]) == (
        expected.nan,
        expected.inf,
        expected.non_finite,
        expected.size,
    )
    assert report["maxAbsError"] == pytest.approx(expected.max_abs_error)


def _law_values(d_k: int, law: QKLaw) -> dict:
    """The controls' values the histograms part reads: d_k, the seed and the law of Q, K."""
    return {"d_k": d_k, "seed": SEED, **law._asdict()}


CASES = [
    # d_k, scaled, temperature, causal, precision, stable, sigma_q, sigma_k
    (64, True, 1.0, False, "float64", True, 1.0, 1.0),
    (512, False, 1.0, False, "float16", False, 1.0, 1.0),
    (512, False, 1.0, True, "float16", True, 1.0, 1.0),
    (256, True, 0.5, True, "bfloat16", False, 2.0, 1.5),
    (128, False, 2.0, False, "float32", False, 0.5, 4.0),
    (16, True, 1.0, False, "float16", False, 4.0, 4.0),
]


@pytest.mark.parametrize("case", CASES)
def test_the_weights_frame_matches_the_served_one(node: Runner, case: tuple) -> None:
    d_k, scaled, temperature, causal, precision, stable, sigma_q, sigma_k = case
    n = 32
    law = QKLaw(sigma_q, sigma_k)
    raw = scores_for(n, d_k, SEED, law)
    controls = {
        "n": n,
        "d_k": d_k,
        "scaled": scaled,
        "temperature": temperature,
        "causal": causal,
        "precision": precision,
        "subtract_max": stable,
    }
    served = weights_frame(raw, controls)
    base = scores_for(n, d_k, SEED)
    (factor,) = node([("assumptions", "lawFactor", [{"sigma_q": sigma_q, "sigma_k": sigma_k}])])
    (page_raw,) = node([("assumptions", "scaleScores", [base.ravel(), factor])])
    np.testing.assert_allclose(page_raw, raw.ravel(), rtol=1e-12)
    args = [page_raw, n, controls]
    (frame,) = node([("assumptions", "weightsFrame", args)])
    report = frame["report"]
    assert report["nonFinite"] == served.non_finite
    assert frame["maxLogit"] == pytest.approx(served.max_logit, rel=1e-12)
    weights = served.weights.ravel()
    np.testing.assert_array_equal(np.isfinite(frame["weights"]), np.isfinite(weights))
    finite = np.isfinite(weights)
    np.testing.assert_allclose(
        frame["weights"][finite], weights[finite], rtol=4 * ULP[precision], atol=1e-12
    )
    for key, value in (
        ("meanMaxWeight", served.mean_max_weight),
        ("meanEntropy", served.mean_entropy),
    ):
        if math.isnan(value):
            assert math.isnan(frame[key])
        else:
            assert frame[key] == pytest.approx(value, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("sigmas", [(1.0, 1.0), (2.0, 0.5), (0.25, 4.0)])
def test_the_pooled_dot_products_and_moments_follow_the_sigmas(node: Runner, sigmas) -> None:
    sigma_q, sigma_k = sigmas
    d_k = 128
    pooled = sdpa_core.dot_product_pool(d_k, SEED)
    values, moments = node(
        [
            ("assumptions", "scaleDotProducts", [np.asarray(pooled), sigma_q * sigma_k]),
            ("assumptions", "dotProductMoments", [d_k, sigma_q, sigma_k]),
        ]
    )
    expected = sdpa_core.dot_product_pool(d_k, SEED, sigma_q=sigma_q, sigma_k=sigma_k)
    np.testing.assert_array_equal(values, expected)
    assert tuple(moments) == sdpa_core.dot_product_moments(d_k, sigma_q=sigma_q, sigma_k=sigma_k)


def test_python_reprs_are_written_as_python_writes_them(node: Runner) -> None:
    numbers = [
        0.0,
        -0.0,
        1.0,
        2.5,
        -3.25,
        1e-05,
        0.0001,
        123456789.0,
        1e16,
        1.5e16,
        1e22,
        -9.000000953674316,
        0.1,
        1 / 3,
        5e-324,
        1.7976931348623157e308,
        12345.678,
    ]
    numbers += list(np.random.default_rng(5).normal(scale=1e3, size=200))
    results = node([("assumptions", "pythonRepr", [float(x)]) for x in numbers])
    assert results == [repr(float(x)) for x in numbers]


def _model(**values: Any) -> SimulationModel:
    return SimulationModel(SimulationState(**{"seed": SEED, **values}))


STATES = [
    {},
    {"d_k": 512, "scaled": False, "precision": "float16", "subtract_max": False, "causal": True},
    {"sigma_q": 2.0, "sigma_k": 0.5, "temperature": 0.5, "n": 8, "precision": "bfloat16"},
]


@pytest.mark.parametrize("values", STATES)
def test_the_csv_file_names_are_the_served_ones(node: Runner, values: dict) -> None:
    model = _model(**values)
    state = {name: getattr(model.state, name) for name in model.state.param if name != "name"}
    csv_spec = CONFIG["csv"]
    matrix, histogram = node(
        [
            ("assumptions", "matrixFilename", [state, csv_spec]),
            ("assumptions", "histogramFilename", [state, csv_spec]),
        ]
    )
    assert (matrix, histogram) == (matrix_filename(model), histogram_filename(model))


# --- In the page, from file:// ------------------------------------------------------------

LINK = "?d_k=512&scaled=false&precision=float16&subtract_max=false&sigma_q=2&sigma_k=0.5"


def _served(opened: OfflinePage) -> SimulationModel:
    state = opened.snapshot()["state"]
    return _model(**{name: value for name, value in state.items() if name != "seed"})


def _section_readouts(opened: OfflinePage) -> dict[str, str]:
    """Each group's readouts in the page, by group (app.page.views.assumptions.READOUT_GROUPS)."""
    return {
        group: opened.page.locator(f"#sdpa-assumptions-{group}-readouts").inner_html()
        for group in READOUT_GROUPS
    }


def _open_section(opened: OfflinePage) -> None:
    """Open the section with the keyboard, as its disclosure button is pressed."""
    button = opened.page.get_by_role("button", name=ASSUMPTIONS_TITLE)
    assert button.get_attribute("aria-expanded") == "false"
    button.press("Enter")
    assert button.get_attribute("aria-expanded") == "true"


@pytest.mark.browser
def test_the_section_shows_the_served_readouts_and_marks_the_overflow(open_export) -> None:
    opened = open_export(LINK)
    opened.wait_for_lesson_after(0)
    model = _served(opened)
    assert (model.state.sigma_q, model.state.sigma_k, model.state.precision) == (
        2.0,
        0.5,
        "float16",
    )
    assert opened.readouts() == readouts_html(model)
    assert _section_readouts(opened) == {
        group: assumptions_html(model, group) for group in READOUT_GROUPS
    }
    # The histogram beside the σ sliders is the served section's: the scaled one's bars.
    _, scaled = histograms_for(_law_values(512, QKLaw(2.0, 0.5)))
    section_bars = "Array.from(m.renderers[0].data_source.data.top)"
    np.testing.assert_array_equal(
        opened.model("assumptions_histogram", section_bars), scaled.density
    )
    assert opened.model("assumptions_histogram", "m.title.text") == opened.model(
        "scaled_histogram", "m.title.text"
    )
    snapshot = opened.snapshot()
    assert snapshot["non_finite"] == model.weights.non_finite > 0
    # The overflow layer marks exactly the served overflowed cells, with its legend.
    assert opened.model("heatmap_overflow", "m.visible") is True
    assert opened.model("heatmap_overflow_legend", "m.visible") is True
    # In the figure, with its keys, only while shown (app/page/figures.py takes it out).
    legend_in_figure = """Bokeh.documents[0].get_model_by_name("heatmap").below
        .some((item) => item.name === "heatmap_overflow_legend")"""
    keys_shown = """Bokeh.documents[0].get_model_by_name("heatmap").renderers
        .filter((r) => r.name === "heatmap_legend_key").map((r) => r.visible)"""
    assert opened.page.evaluate(f"() => {legend_in_figure}") is True
    assert opened.page.evaluate(f"() => {keys_shown}") == [True, True]
    legend_box = opened.page.evaluate(
        """() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name(
            "heatmap_overflow_legend")).bbox.height"""
    )
    assert legend_box > 0
    marked = opened.page.evaluate(
        """() => Array.from(Bokeh.documents[0].get_model_by_name("heatmap_overflow")
            .data_source.data.overflow[0], (v) => v === 1)"""
    )
    np.testing.assert_array_equal(np.array(marked), model.weights.overflow.ravel())
    # The histograms follow Normal(0, d_k·σ_q²·σ_k²), as the served ones do.
    raw, _ = histograms_for(_law_values(512, QKLaw(2.0, 0.5)))
    title = opened.model("raw_histogram", "m.title.text")
    assert title == f"Raw q·k at d_k = 512: std ≈ {raw.expected_std:.3g}"
    bars = opened.model("raw_histogram", "Array.from(m.renderers[0].data_source.data.top)")
    np.testing.assert_array_equal(bars, raw.density)
    # Back to the stable softmax: no overflow, the layer hides.
    _open_section(opened)
    count = opened.updates()
    opened.page.get_by_role("switch", name=CONTROL_BY_NAME["subtract_max"].label).check()
    opened.wait_for_update_after(count)
    assert opened.snapshot()["non_finite"] == 0
    assert opened.model("heatmap_overflow", "m.visible") is False
    assert opened.page.evaluate(f"() => {legend_in_figure}") is False
    assert opened.page.evaluate(f"() => {keys_shown}") == [False, False]
    assert opened.readouts() == readouts_html(_served(opened))


@pytest.mark.browser
def test_the_sections_controls_move_by_keyboard_and_reach_the_url(open_export) -> None:
    opened = open_export()
    page = opened.page
    slider = page.get_by_role("slider", name=CONTROL_BY_NAME["sigma_q"].label)
    assert not slider.is_visible()
    _open_section(opened)
    # Bokeh lays the section's widgets out once it is shown.
    section = page.get_by_test_id("assumptions")
    section.get_by_role("slider", name=CONTROL_BY_NAME["sigma_q"].label).wait_for(state="visible")
    for name in SERVER_ONLY:
        assert CONTROL_BY_NAME[name].label in page.locator(".sdpa-server-only").inner_text()
    count = opened.updates()
    page.get_by_role("slider", name=CONTROL_BY_NAME["sigma_q"].label).press("End")
    opened.wait_for_update_after(count)
    count = opened.updates()
    page.get_by_test_id("assumptions").get_by_role("button", name="bfloat16").press("Enter")
    opened.wait_for_update_after(count)
    state = opened.snapshot()["state"]
    assert (state["sigma_q"], state["precision"]) == (4.0, "bfloat16")
    page.wait_for_function("() => location.search.includes('precision=bfloat16')")
    assert "sigma_q=4" in page.evaluate("location.search")
    model = _served(opened)
    assert opened.readouts() == readouts_html(model)
    assert opened.model("raw_histogram", "m.title.text").startswith("Raw q·k at d_k = 64: std ≈ ")


@pytest.mark.browser
def test_a_link_asking_for_rho_or_qk_norm_gets_a_notice(open_export) -> None:
    opened = open_export("?rho=0.5&qk_norm=true&sigma_k=99")
    state = opened.snapshot()["state"]
    assert "rho" not in state and "qk_norm" not in state
    assert state["sigma_k"] == CONTROL_BY_NAME["sigma_k"].bounds[1]
    assert opened.model("notice", "m.visible") is True


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _as_numbers(rows: list[list[str]]) -> np.ndarray:
    return np.array([[float(cell) if cell else np.nan for cell in row] for row in rows])


@pytest.mark.browser
def test_the_csv_downloads_hold_the_served_files(open_export) -> None:
    opened = open_export(LINK + "&n=16&causal=true")
    opened.wait_for_lesson_after(0)
    model = _served(opened)
    _open_section(opened)
    files = {}
    for which in ("matrix", "histogram"):
        with opened.page.expect_download() as info:
            opened.page.locator(f'button[data-download="{which}"]').click()
        download = info.value
        files[which] = (download.suggested_filename, Path(download.path()).read_text())
    name, text = files["matrix"]
    assert name == matrix_filename(model)
    page_rows, served_rows = _parse(text), _parse(matrix_csv(model))
    assert page_rows[0] == served_rows[0]
    page_values, served_values = _as_numbers(page_rows[1:]), _as_numbers(served_rows[1:])
    assert page_values.shape == served_values.shape == (16 * 16, 5)
    np.testing.assert_array_equal(np.isnan(page_values), np.isnan(served_values))
    np.testing.assert_allclose(page_values, served_values, rtol=4 * ULP["float16"], equal_nan=True)
    name, text = files["histogram"]
    assert name == histogram_filename(model)
    page_rows, served_rows = _parse(text), _parse(histogram_csv(model))
    assert [row[0] for row in page_rows] == [row[0] for row in served_rows]
    np.testing.assert_allclose(
        _as_numbers([row[1:] for row in page_rows[1:]]),
        _as_numbers([row[1:] for row in served_rows[1:]]),
        rtol=1e-12,
    )
