"""When the lesson's assumptions break: σ_q, σ_k, ρ, QK-norm, the softmax's precision and
max subtraction, from the spec to the state, the URL, the model, the views and the CSV."""

from __future__ import annotations

import csv
import io
import json
import math
import queue

import numpy as np
import param
import pytest

import sdpa_core
from app.page.views.heatmap import MASK_COLOUR, OVERFLOW_COLOUR, OVERFLOW_LABEL
from app.page.views.histogram import DotProductHistograms
from app.page.views.readouts import readouts_html
from app.served.components.assumptions import AssumptionsSession
from app.served.session import Session
from app.simulation import parts as derived
from app.simulation.csv_files import (
    HISTOGRAM_COLUMNS,
    MATRIX_COLUMNS,
    histogram_csv,
    histogram_filename,
    matrix_csv,
    matrix_filename,
)
from app.simulation.model import SimulationModel
from app.simulation.parts import (
    LESSON_LAW,
    QKLaw,
    dot_product_histograms,
    expected_moments,
    raw_scores,
    score_images,
)
from app.simulation.presets import PRESETS
from app.simulation.query import PARAMETER_NAMES, parse_query
from app.simulation.spec import (
    ASSUMPTION_CONTROLS,
    CONTROL_BY_NAME,
    CONTROL_NAMES,
    HISTOGRAMS,
    INPUTS,
    OUTPUT,
    RHO_GRID,
    ROW,
    SCORES,
    SIGMA_GRID,
    VIEW,
    WEIGHTS,
    nearest_on_grid,
)
from app.simulation.state import SimulationState

OVERFLOW_QUERY = {
    "d_k": "1024",
    "scaled": "false",
    "precision": "float16",
    "subtract_max": "false",
}
"""The scale off at d_k = 1024, the softmax in float16 without the max subtraction."""


def assumptions_view(session: Session) -> AssumptionsSession:
    """The lesson's assumptions section of ``session``, opened as a student opens it."""
    lesson = session.lesson
    lesson.open(lesson.assumptions)
    return lesson.assumptions.view


def model_for(**values: object) -> SimulationModel:
    state = SimulationState()
    state.set_controls(**values)
    return SimulationModel(state)


# --- The spec, the state and the URL -------------------------------------------------------


def test_the_new_controls_are_spec_entries_and_state_parameters() -> None:
    assert set(ASSUMPTION_CONTROLS) <= set(CONTROL_NAMES)
    state = SimulationState()
    for name in ASSUMPTION_CONTROLS:
        control = CONTROL_BY_NAME[name]
        assert not control.first_screen and control.lesson_section == "assumptions", name
        # The file leaves out only what needs the pooled q·q and k·k tables.
        assert control.offline is (name not in ("rho", "qk_norm")), name
        parameter = state.param[name]
        assert getattr(state, name) == control.default
        assert parameter.doc == control.doc
        if control.bounds:
            assert parameter.bounds == control.bounds
    assert isinstance(state.param["sigma_q"], param.Number)
    assert state.param["sigma_q"].bounds == (0.25, 4.0)
    assert state.param["rho"].bounds == (-0.95, 0.95)
    assert isinstance(state.param["qk_norm"], param.Boolean) and state.qk_norm is False
    assert state.param["precision"].objects == list(sdpa_core.PRECISIONS)
    assert state.precision == "float64" and state.subtract_max is True


def test_the_grids_log_for_sigma_linear_for_rho() -> None:
    assert SIGMA_GRID[0] == 0.25 and SIGMA_GRID[-1] == 4.0 and 1.0 in SIGMA_GRID
    ratios = np.diff(np.log(SIGMA_GRID))
    assert ratios.max() < 2.5 * ratios.min()  # roughly even on a log scale
    assert RHO_GRID[0] == -0.95 and RHO_GRID[-1] == 0.95 and 0.0 in RHO_GRID
    np.testing.assert_allclose(np.diff(RHO_GRID), 0.05, atol=1e-12)
    assert math.copysign(1.0, RHO_GRID[RHO_GRID.index(0.0)]) == 1.0  # no "-0" position
    # Nearest positions: linear for ρ (its grid spans 0), log for σ as for every other.
    assert nearest_on_grid(-0.33, RHO_GRID) == -0.35
    assert nearest_on_grid(0.0, RHO_GRID) == 0.0
    assert nearest_on_grid(0.9, SIGMA_GRID) == 0.8 or nearest_on_grid(0.9, SIGMA_GRID) == 1.0
    assert nearest_on_grid(3.0, SIGMA_GRID) == 2.8


def test_every_preset_keeps_the_lessons_assumptions() -> None:
    for preset in PRESETS.values():
        for name in ASSUMPTION_CONTROLS:
            assert preset.values[name] == CONTROL_BY_NAME[name].default


def test_the_url_writes_them_after_the_lessons_controls_and_reads_them_back() -> None:
    assert PARAMETER_NAMES[-len(ASSUMPTION_CONTROLS) :] == ASSUMPTION_CONTROLS
    state = SimulationState()
    query = {
        "sigma_q": "2",
        "sigma_k": "0.5",
        "rho": "-0.3",
        "qk_norm": "true",
        "precision": "bfloat16",
        "subtract_max": "off",
    }
    state.apply_query(query)
    assert state.notice == ""
    written = state.query()
    assert {name: written[name] for name in query} == {**query, "subtract_max": "false"}
    again = SimulationState()
    again.apply_query(written)
    assert {n: getattr(again, n) for n in CONTROL_NAMES} == {
        n: getattr(state, n) for n in CONTROL_NAMES
    }
    defaults = SimulationState().query()
    assert [defaults[name] for name in ASSUMPTION_CONTROLS] == [
        "1",
        "1",
        "0",
        "false",
        "float64",
        "true",
    ]


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("sigma_q", "100", 4.0),
        ("sigma_q", "0", 0.25),
        ("sigma_k", "-3", 0.25),
        ("rho", "1", 0.95),
        ("rho", "-1e9", -0.95),
        ("rho", " 0.5 ", 0.5),
        ("precision", " FLOAT16 ", "float16"),
    ],
)
def test_out_of_range_values_are_clamped_with_a_notice(name: str, text: str, value: object) -> None:
    parsed = parse_query({name: text})
    assert parsed.values == {name: value}
    if isinstance(value, float) and value != float(text):
        assert len(parsed.notices) == 1 and name in parsed.notices[0]


@pytest.mark.parametrize(
    ("name", "text"),
    [("sigma_q", "nan"), ("rho", "inf"), ("precision", "float8"), ("qk_norm", "maybe")],
)
def test_bad_values_are_ignored_with_a_notice(name: str, text: str) -> None:
    parsed = parse_query({name: text})
    assert parsed.values == {} and len(parsed.notices) == 1


def test_coerce_clamps_widget_values_from_a_page() -> None:
    state = SimulationState()
    assert state.coerce("sigma_q", 9) == 4.0
    assert state.coerce("rho", -2.0) == -0.95
    assert state.coerce("rho", float("nan")) is None
    assert state.coerce("precision", "float8") is None
    assert state.coerce("subtract_max", "yes") is None


# --- The recompute graph ---------------------------------------------------------------------


def test_the_recompute_graph() -> None:
    for name in ("sigma_q", "sigma_k", "rho", "qk_norm"):
        assert {part for part, inputs in INPUTS.items() if name in inputs} == {
            SCORES,
            WEIGHTS,
            HISTOGRAMS,
            ROW,
            OUTPUT,
        }, name
    for name in ("precision", "subtract_max"):
        assert {part for part, inputs in INPUTS.items() if name in inputs} == {WEIGHTS, OUTPUT}
    assert VIEW not in {p for p, inputs in INPUTS.items() if inputs & set(ASSUMPTION_CONTROLS)}
    model = SimulationModel()
    scores, histogram = model.scores, model.raw_histogram
    model.state.precision = "float32"
    assert model.refresh({"precision"}) == {WEIGHTS, OUTPUT}
    assert model.scores is scores and model.raw_histogram is histogram
    model.state.sigma_q = 2.0
    assert model.refresh({"sigma_q"}) == {SCORES, WEIGHTS, HISTOGRAMS, ROW, OUTPUT}
    assert model.scores is not scores and model.raw_histogram is not histogram


# --- The lesson's numbers, bit for bit ------------------------------------------------------


def test_at_the_lessons_assumptions_the_model_uses_the_lessons_cache_entries() -> None:
    model = SimulationModel()
    state = model.state
    assert derived.law_of(state) == LESSON_LAW
    # The same objects as the lesson's calls: the caches key them as they always did.
    assert model.scores is score_images(state.n, state.d_k, state.seed, False)
    assert (model.raw_histogram, model.scaled_histogram) == dot_product_histograms(64, 0)
    assert model.raw_histogram is dot_product_histograms(64, 0)[0]
    raw = raw_scores(state.n, state.d_k, state.seed)
    weights = sdpa_core.softmax(raw * (1 / math.sqrt(64)))
    assert np.array_equal(model.weights.weights, weights)
    assert model.weights.non_finite == 0 and model.weights.overflow is None
    assert model.weights.precision_report.max_abs_error == 0.0


def test_the_lessons_numbers_at_seed_0() -> None:
    lesson = SimulationState()
    lesson.choose_preset("lesson")
    model = SimulationModel(lesson)
    assert round(model.raw_histogram.std, 1) == 2.0
    assert round(model.scaled_histogram.std, 1) == 1.0
    lesson.set_controls(d_k=1024)
    model.refresh({"d_k"})
    assert round(model.raw_histogram.std) == 32
    assert round(model.scaled_histogram.std, 1) == 1.0


# --- The law of q and k ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "law",
    [
        QKLaw(2.0, 1.0, 0.0),
        QKLaw(0.5, 3.4, 0.0),
        QKLaw(1.0, 1.0, 0.6),
        QKLaw(1.4, 0.7, -0.8),
    ],
)
@pytest.mark.parametrize("d_k", [16, 256])
def test_the_histograms_curve_follows_the_moments(law: QKLaw, d_k: int) -> None:
    raw, scaled = dot_product_histograms(d_k, 0, law)
    mean, variance = sdpa_core.dot_product_moments(
        d_k, sigma_q=law.sigma_q, sigma_k=law.sigma_k, rho=law.rho
    )
    assert raw.expected_mean == pytest.approx(mean) and raw.expected_std == pytest.approx(
        math.sqrt(variance)
    )
    np.testing.assert_allclose(
        raw.curve_y, sdpa_core.normal_pdf(raw.curve_x - mean, variance), rtol=1e-12
    )
    assert raw.curve_x[0] == pytest.approx(mean - 4.5 * math.sqrt(variance))
    assert scaled.expected_std == pytest.approx(math.sqrt(variance / d_k))
    assert scaled.expected_mean == pytest.approx(mean / math.sqrt(d_k))
    # 10,000 pairs: the measured spread is within a few per cent of the law's.
    assert raw.std == pytest.approx(raw.expected_std, rel=0.05)
    values = sdpa_core.dot_product_pool(
        d_k, 0, sigma_q=law.sigma_q, sigma_k=law.sigma_k, rho=law.rho
    )
    assert float(np.mean(values)) == pytest.approx(mean, abs=0.05 * raw.expected_std)


def test_the_raw_scores_follow_the_law_of_q_and_k() -> None:
    law = QKLaw(2.0, 0.5, 0.4)
    q, k = sdpa_core.sample_qk(40, 32, 3, sigma_q=2.0, sigma_k=0.5, rho=0.4)
    np.testing.assert_array_equal(raw_scores(40, 32, 3, law), q @ k.T)
    normed = raw_scores(40, 32, 3, law._replace(qk_norm=True))
    q_hat = q / np.linalg.norm(q, axis=1, keepdims=True) * math.sqrt(32)
    k_hat = k / np.linalg.norm(k, axis=1, keepdims=True) * math.sqrt(32)
    np.testing.assert_allclose(normed, q_hat @ k_hat.T, rtol=1e-12, atol=1e-12)
    # Each row of q̂ has length √d_k: the diagonal of q̂·q̂ would be d_k.
    np.testing.assert_allclose(np.diag(q_hat @ q_hat.T), 32.0)
    # QK-norm takes the σ out: only ρ is left.
    np.testing.assert_allclose(
        normed, raw_scores(40, 32, 3, QKLaw(1.0, 1.0, 0.4, True)), rtol=1e-12, atol=1e-12
    )
    assert not raw_scores(40, 32, 3, law).flags.writeable


@pytest.mark.parametrize("rho", [0.0, 0.5, -0.7])
def test_qk_norm_restores_the_spread_whatever_the_sigma(rho: float) -> None:
    d_k = 256
    for sigma in (0.25, 4.0):
        law = QKLaw(sigma, sigma, rho, True)
        raw, _ = dot_product_histograms(d_k, 0, law)
        mean, variance = expected_moments(d_k, law)
        assert (mean, variance) == (rho * d_k, d_k * (1 - rho * rho) ** 2)
        assert raw.std == pytest.approx(math.sqrt(variance), rel=0.06)
        np.testing.assert_allclose(
            raw.curve_y, sdpa_core.normal_pdf(raw.curve_x - mean, variance), rtol=1e-12
        )
    # At ρ = 0 the scaled spread is the lesson's 1 again, not σ_q·σ_k = 16.
    model = model_for(sigma_q=4.0, sigma_k=4.0, d_k=256)
    assert model.scaled_histogram.std == pytest.approx(16.0, rel=0.05)
    model.state.qk_norm = True
    model.refresh({"qk_norm"})
    assert model.scaled_histogram.std == pytest.approx(1.0, rel=0.05)


def test_the_readouts_show_the_expected_spread() -> None:
    session = Session({"sigma_q": "2", "sigma_k": "2", "d_k": "64"})
    html = readouts_html(session.model)
    assert "expected 32.0" in html and "expected 4.00" in html  # σ_qσ_k√d_k and σ_qσ_k
    assert "√d_k = 8.0" not in html
    title = DotProductHistograms(session.model).scaled.figure.title.text
    assert "at d_k = 64:" in title and "std ≈ 4" in title
    # What the page fills its title and readouts with (text.js): the law in the frame's state.
    frame = session.figures.frame
    assert (frame["state"]["sigma_q"], frame["state"]["sigma_k"]) == (2.0, 2.0)
    assert frame["numbers"][HISTOGRAMS]["scaled"]["expectedStd"] == pytest.approx(4.0)
    session.state.qk_norm = True
    session.update_plots()
    assert "expected 1.00 · QK-norm restores it" in readouts_html(session.model)
    frame = session.figures.frame
    assert frame["state"]["qk_norm"] is True and HISTOGRAMS in frame["parts"]
    assert frame["numbers"][HISTOGRAMS]["scaled"]["expectedStd"] == pytest.approx(1.0)
    lesson = readouts_html(Session().model)
    assert "√d_k = 8.0" in lesson and "target 1.0" in lesson and "non-finite" not in lesson


# --- Precision and overflow -----------------------------------------------------------------


def test_float16_without_max_subtraction_overflows_and_with_it_stays_finite() -> None:
    session = Session(OVERFLOW_QUERY)
    weights = session.model.weights
    assert weights.precision == "float16" and not weights.stable
    nan_rows = np.isnan(weights.weights).any(axis=1)
    assert weights.non_finite == int((~np.isfinite(weights.weights)).sum()) > 0
    assert nan_rows.sum() > 0
    # A row overflows exactly when its largest logit is beyond float16's exp.
    threshold = sdpa_core.exp_overflow_threshold("float16")
    raw = raw_scores(32, 1024, 0)
    np.testing.assert_array_equal(nan_rows, raw.max(axis=1) > threshold)
    html = readouts_html(session.model)
    assert f">{weights.non_finite:,}<" in html and "float16, no max subtraction" in html
    section = assumptions_view(session).readouts["precision"]
    assert f">{weights.non_finite:,}<" in section and "exp overflows above 11.1" in section
    # The heatmap: the frame marks the overflowed cells (1, NaN elsewhere) for the page's
    # overflow layer, which the figures carry in its own colour with a legend entry.
    sent = session.figures.frame["numbers"][WEIGHTS]
    assert sent["report"]["nonFinite"] == weights.non_finite and sent["stable"] is False
    overflow = sent["overflowImage"]
    assert overflow.dtype == np.float32 and overflow.shape == (32 * 32,)
    np.testing.assert_array_equal(overflow.reshape(32, 32) == 1, ~np.isfinite(weights.weights))
    assert np.isnan(overflow[overflow != 1]).all()
    data = session.figures.page_data()
    items = json.dumps(data["items"])
    assert OVERFLOW_COLOUR != MASK_COLOUR
    assert json.dumps(OVERFLOW_COLOUR) in items and json.dumps(OVERFLOW_LABEL) in items
    assert "overflow_renderer" in data["models"]

    session.state.subtract_max = True
    session.update_plots()
    session.update_lesson_and_url()
    weights = session.model.weights
    assert weights.non_finite == 0 and np.isfinite(weights.weights).all()
    np.testing.assert_allclose(weights.weights.sum(axis=1), 1.0, atol=2e-3)
    assert 0 < weights.precision_report.max_abs_error < 0.01
    sent = session.figures.frame["numbers"][WEIGHTS]
    assert sent["overflowImage"] is None, "nothing overflows: the page hides the layer"
    assert sent["report"]["nonFinite"] == 0 and sent["stable"] is True
    assert ">0<" in assumptions_view(session).readouts["precision"]


def test_no_overflow_image_is_sent_while_nothing_overflows() -> None:
    session = Session({"precision": "float16"})
    assert session.model.weights.non_finite == 0
    assert session.figures.frame["numbers"][WEIGHTS]["overflowImage"] is None
    session.state.temperature = 0.5
    assert session.figures.frame["numbers"][WEIGHTS]["overflowImage"] is None


@pytest.mark.parametrize("precision", ["float32", "bfloat16", "float16"])
def test_lower_precisions_stay_close_to_float64_with_the_max_subtracted(precision: str) -> None:
    model = model_for(precision=precision, causal=True)
    reference = model_for(causal=True).weights.weights
    weights = model.weights
    assert weights.non_finite == 0
    tolerance = {"float32": 1e-6, "bfloat16": 2e-2, "float16": 2e-3}[precision]
    assert weights.precision_report.max_abs_error < tolerance
    np.testing.assert_allclose(weights.weights, reference, atol=tolerance)
    assert (weights.weights[np.triu_indices(32, 1)] == 0).all()  # masked cells stay 0


def test_every_row_overflowing_leaves_no_mean_to_show() -> None:
    model = model_for(d_k=1024, scaled=False, temperature=0.05, precision="float16")
    model.state.subtract_max = False
    model.refresh({"subtract_max"})
    assert math.isnan(model.weights.mean_max_weight)
    session = Session({**OVERFLOW_QUERY, "temperature": "0.05"})
    html = readouts_html(session.model)
    assert "Every row overflowed" in html and ">—<" in html
    # The page's readouts (text.js) read the same mean from the frame: NaN, not a number.
    assert math.isnan(session.figures.frame["numbers"][WEIGHTS]["meanMaxWeight"])


# --- Data out -------------------------------------------------------------------------------


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize(
    "query",
    [{}, {"causal": "true", "n": "12", "view": "raw"}, OVERFLOW_QUERY],
)
def test_the_matrix_csv_holds_the_pages_values(query: dict[str, str]) -> None:
    session = Session(query)
    model = session.model
    rows = read_csv(matrix_csv(model))
    n = model.state.n
    assert tuple(rows[0]) == MATRIX_COLUMNS and len(rows) == n * n
    drawn = session.figures.frame["numbers"]
    for column, (part, field) in {
        "raw": (SCORES, "rawImage"),
        "scaled": (SCORES, "scaledImage"),
        "weight": (WEIGHTS, "weightsImage"),
    }.items():
        image = drawn[part][field].reshape(n, n)
        values = np.array(
            [float(row[column]) if row[column] else np.nan for row in rows], dtype=np.float32
        )
        np.testing.assert_array_equal(values.reshape(n, n), image)
    assert [(int(r["query"]), int(r["key"])) for r in rows[: n + 1]] == [
        *((0, j) for j in range(n)),
        (1, 0),
    ]
    if model.state.causal:
        assert rows[1]["raw"] == rows[1]["weight"] == ""
    if model.weights.non_finite:
        assert sum(row["weight"] == "nan" for row in rows) == model.weights.non_finite


def test_the_histogram_csv_holds_the_pages_bars() -> None:
    session = Session({"sigma_q": "2", "rho": "0.5"})
    rows = read_csv(histogram_csv(session.model))
    assert tuple(rows[0]) == HISTOGRAM_COLUMNS
    drawn = session.figures.frame["numbers"][HISTOGRAMS]
    for name in ("raw", "scaled"):
        mine = [row for row in rows if row["histogram"] == name]
        bars = drawn[name]
        np.testing.assert_array_equal([float(r["left"]) for r in mine], bars["left"])
        np.testing.assert_array_equal([float(r["right"]) for r in mine], bars["right"])
        np.testing.assert_array_equal([float(r["density"]) for r in mine], bars["density"])
        counts = np.array([int(r["count"]) for r in mine])
        assert 0 < counts.sum() <= bars["count"]
        widths = np.asarray(bars["right"], dtype=np.float64) - bars["left"]
        # (The density divides by the range's nominal bin width, the edges are float32.)
        np.testing.assert_allclose(counts / (bars["count"] * widths), bars["density"], rtol=1e-5)
        centres = (np.asarray(bars["left"], dtype=np.float64) + bars["right"]) / 2
        np.testing.assert_allclose(
            [float(r["reference_density"]) for r in mine],
            sdpa_core.normal_pdf(centres - bars["expectedMean"], bars["expectedStd"] ** 2),
            rtol=1e-12,
        )


def test_file_names_carry_the_state() -> None:
    assert matrix_filename(SimulationModel()) == "sdpa_d_k-64_T-1_n-32_scaled.csv"
    assert histogram_filename(SimulationModel()) == "sdpa_d_k-64_histogram.csv"
    model = model_for(
        d_k=1024, scaled=False, temperature=0.25, causal=True, seed=3, rho=-0.5, precision="float16"
    )
    assert matrix_filename(model) == (
        "sdpa_d_k-1024_T-0.25_n-32_unscaled_causal_seed-3_rho--0.5_precision-float16.csv"
    )
    assert histogram_filename(model) == "sdpa_d_k-1024_seed-3_rho--0.5_histogram.csv"


class SentToPage:
    """What an assumptions section sends its page, by kind, in order."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def __call__(self, changes: dict) -> None:
        self.sent.append(changes)

    def of(self, kind: str) -> list:
        return [changes[kind] for changes in self.sent if kind in changes]


def test_a_download_press_sends_the_csv_of_the_state_at_the_press() -> None:
    model = model_for(n=6)
    page = SentToPage()
    section = AssumptionsSession(model, page)
    model.state.set_controls(d_k=16, precision="bfloat16")
    model.refresh({"d_k", "precision"})
    section.take({"download": "matrix"})
    section.take({"download": "histogram"})
    matrix, histogram = page.of("download")
    assert matrix == {
        "which": "matrix",
        "name": "sdpa_d_k-16_T-1_n-6_scaled_precision-bfloat16.csv",
        "text": matrix_csv(model),
    }
    assert histogram == {
        "which": "histogram",
        "name": "sdpa_d_k-16_histogram.csv",
        "text": histogram_csv(model),
    }
    assert section.downloads == 2


def test_the_file_is_written_from_the_numbers_of_the_press_in_a_thread() -> None:
    """Served, the text is written in a thread and posted back: a move made meanwhile does
    not change the file the press asked for."""
    model = model_for(n=6)
    page = SentToPage()
    posted: queue.Queue = queue.Queue()
    section = AssumptionsSession(model, page, post=posted.put, in_thread=True)
    before = matrix_csv(model)
    assert section.download("matrix")
    model.state.set_controls(d_k=16)
    model.refresh({"d_k"})
    posted.get(timeout=30)()  # the session's gate starts the job in its pool
    posted.get(timeout=30)()  # the file, written, is sent
    assert page.of("download")[0]["text"] == before != matrix_csv(model)


def test_the_section_takes_only_its_moves_and_files_from_a_page(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = model_for()
    page = SentToPage()
    section = AssumptionsSession(model, page)
    first = page.sent[0]
    assert set(first["controls"]) == {
        "sigma_q",
        "sigma_k",
        "rho",
        "qk_norm",
        "precision",
        "subtract_max",
    }
    assert set(first["readouts"]) == {"law", "precision"}
    hostile = [
        {"download": "../../etc/passwd"},
        {"download": ["matrix"]},
        {"download": "matrix", "extra": 1},
        {"control": {"name": "d_k", "index": 3}},  # not one of the section's controls
        {"control": {"name": "precision", "value": "float8"}},
        {"control": {"name": "qk_norm", "value": "yes"}},
        {"control": {"name": "sigma_q", "index": 10**9}},
        "matrix",
        None,
        [],
    ]
    for message in hostile:
        section.take(message)
    assert page.of("download") == [] and section.downloads == 0
    assert model.state.precision == "float64" and model.state.qk_norm is False
    assert model.state.sigma_q == 1 and model.state.d_k == 64
    assert "refused" in caplog.text
    section.take({"control": {"name": "precision", "value": "float16"}})
    assert model.state.precision == "float16"
    # The page shows the press already: nothing is sent back for it.
    assert page.of("controls")[-1] != {"precision": {"value": "float16"}}


def test_the_readouts_are_sent_when_their_numbers_move() -> None:
    model = model_for()
    page = SentToPage()
    section = AssumptionsSession(model, page)
    sent = len(page.sent)
    section.update(model, {"row"})
    assert len(page.sent) == sent, "nothing of the section moved"
    model.state.set_controls(precision="float16", d_k=1024, scaled=False, subtract_max=False)
    section.update(model, model.refresh({"precision", "d_k", "scaled", "subtract_max"}))
    readouts = page.of("readouts")[-1]
    assert "exp overflows above 11.1" in readouts["precision"]
    assert readouts == {
        group: html for group, html in section.readouts.items() if group in readouts
    }
