"""kernel.js against sdpa_core and app.simulation.parts, value for value, under Node.js and in
Chromium.

Every check feeds the JavaScript and NumPy the same inputs; float64 results must agree to
1e-12 (summation order is the only difference) and histograms bin for bin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sdpa_core
from app.page.kernel_data import build_export_data, encode_float32
from app.simulation.parts import (
    HISTOGRAM_BINS,
    HISTOGRAM_HALF_WIDTH,
    dot_product_histograms,
    score_images,
    weights_frame,
)
from app.simulation.spec import D_K_GRID, N_GRID, TEMPERATURE_GRID, nearest_on_grid

from .js_harness import Runner

SEED = 0
N_MAX, D_MAX = 48, 96
"""A small block of the pools keeps the calls quick; the browser tests use the full page."""

CURVE_POINTS = 241
TIGHT = 1e-12


@pytest.fixture(scope="module")
def data():
    """Export data for a small page: float32 Q and K and the dot-product rows."""
    return build_export_data(N_MAX, D_MAX, SEED)


def raw_from(data, n: int, d: int) -> np.ndarray:
    """Raw scores from the page's float32 Q and K, computed by the core in float64."""
    q = data.q[:n, :d].astype(np.float64)
    k = data.k[:n, :d].astype(np.float64)
    return sdpa_core.scores_logits(q, k, scale=1.0)


def test_base64_samples_decode_to_the_embedded_float32(js: Runner, data) -> None:
    (decoded,) = js([("kernel", "float32FromBase64", [encode_float32(data.q)])])
    assert decoded.dtype == np.float32
    np.testing.assert_array_equal(decoded.reshape(N_MAX, D_MAX), data.q)


@pytest.mark.parametrize("d", [1, 7, 64, D_MAX])
def test_raw_scores_match_core(js: Runner, data, d: int) -> None:
    (raw,) = js([("kernel", "rawScores", [data.q.ravel(), data.k.ravel(), D_MAX, N_MAX, d])])
    np.testing.assert_allclose(raw.reshape(N_MAX, N_MAX), raw_from(data, N_MAX, d), atol=TIGHT)


def test_raw_scores_grow_dimension_by_dimension(js: Runner, data) -> None:
    # The page adds the dimensions of a larger d_k to the scores of a smaller one.
    first = np.zeros(N_MAX * N_MAX)
    (partial,) = js([("kernel", "addDotProducts", [first, data.q, data.k, D_MAX, N_MAX, 0, 40])])
    (grown,) = js(
        [("kernel", "addDotProducts", [partial.copy(), data.q, data.k, D_MAX, N_MAX, 40, 90])]
    )
    np.testing.assert_allclose(grown.reshape(N_MAX, N_MAX), raw_from(data, N_MAX, 90), atol=TIGHT)


def test_raw_scores_built_position_by_position_match_fresh_ones(js: Runner, data) -> None:
    # The page builds every d_k position ahead, each from the one before it.
    positions = [1, 2, 3, 7, 40, 64, 90, D_MAX]
    q, k = data.q.ravel(), data.k.ravel()
    built, rebuilt = js(
        [
            ("kernel", "rawScoresAtPositions", [q, k, D_MAX, N_MAX, positions]),
            # No room to keep a position on the way: each is built again from the start.
            ("kernel", "rawScoresAtPositions", [q, k, D_MAX, N_MAX, positions, 0]),
        ]
    )
    fresh = js([("kernel", "rawScores", [q, k, D_MAX, N_MAX, d]) for d in positions])
    assert len(built) == len(rebuilt) == len(positions)
    for d, steps, again, once in zip(positions, built, rebuilt, fresh, strict=True):
        np.testing.assert_array_equal(steps, again)
        np.testing.assert_allclose(steps, once, rtol=0, atol=TIGHT)
        np.testing.assert_allclose(
            steps.reshape(N_MAX, N_MAX), raw_from(data, N_MAX, d), rtol=0, atol=TIGHT
        )
    # Each position is the previous one plus its new dimensions, exactly.
    (grown,) = js([("kernel", "addDotProducts", [built[4].copy(), q, k, D_MAX, N_MAX, 40, 64])])
    np.testing.assert_array_equal(built[5], grown)


def test_softmax_rows_match_core(js: Runner) -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(scale=30.0, size=(6, 9))
    logits[1, :4] = -np.inf  # masked keys get exactly 0
    logits[2] = -np.inf  # an all-masked row gives zeros, not NaN
    logits[3] = rng.uniform(-1e4, 1e4, size=9)  # the contract's extreme logits stay finite
    (weights,) = js([("kernel", "softmaxRows", [logits.ravel(), 6, 9])])
    expected = sdpa_core.softmax(logits)
    np.testing.assert_allclose(weights.reshape(6, 9), expected, rtol=0, atol=TIGHT)
    assert np.all(weights.reshape(6, 9)[1, :4] == 0)
    assert np.all(weights.reshape(6, 9)[2] == 0)


@pytest.mark.parametrize(
    ("n", "d", "scaled", "temperature", "causal"),
    [
        (N_MAX, 64, True, 1.0, False),
        (N_MAX, D_MAX, False, 0.05, False),  # sharpest: nearly one-hot rows
        (32, 16, True, 20.0, True),
        (17, 96, False, 0.5, True),
        (2, 1, True, 1.0, False),
    ],
)
def test_weights_frame_matches_attention_and_derived(
    js: Runner, data, n: int, d: int, scaled: bool, temperature: float, causal: bool
) -> None:
    raw = raw_from(data, N_MAX, d)
    controls = {"n": n, "d_k": d, "scaled": scaled, "temperature": temperature, "causal": causal}
    (frame,) = js([("kernel", "weightsFrame", [raw.ravel(), N_MAX, controls])])
    q = data.q[:n, :d].astype(np.float64)
    k = data.k[:n, :d].astype(np.float64)
    _, weights = sdpa_core.attention(
        q,
        k,
        k,
        scale=None if scaled else 1.0,
        temperature=temperature,
        mask="causal" if causal else None,
    )
    np.testing.assert_allclose(frame["weights"].reshape(n, n), weights, rtol=0, atol=TIGHT)
    expected = weights_frame(raw[:n, :n].copy(), controls)
    np.testing.assert_allclose(
        frame["weightsImage"].reshape(n, n), expected.weights_image, atol=1e-7, equal_nan=True
    )
    for js_name, py_name in [
        ("meanMaxWeight", "mean_max_weight"),
        ("meanEntropy", "mean_entropy"),
        ("uniformEntropy", "uniform_entropy"),
        ("uniformMaxWeight", "uniform_max_weight"),
    ]:
        assert frame[js_name] == pytest.approx(getattr(expected, py_name), rel=TIGHT, abs=TIGHT)


def test_max_weight_and_entropy_match_core(js: Runner) -> None:
    rng = np.random.default_rng(2)
    weights = sdpa_core.softmax(rng.normal(scale=4.0, size=(5, 11)))
    weights[0] = 0.0
    weights[0, 3] = 1.0  # one-hot: entropy 0, max 1
    max_weight, entropy = js(
        [
            ("kernel", "maxWeight", [weights.ravel(), 5, 11]),
            ("kernel", "rowEntropy", [weights.ravel(), 5, 11]),
        ]
    )
    np.testing.assert_allclose(max_weight, sdpa_core.max_weight(weights), rtol=0, atol=TIGHT)
    np.testing.assert_allclose(entropy, sdpa_core.row_entropy(weights), rtol=0, atol=TIGHT)
    assert entropy[0] == 0.0


@pytest.mark.parametrize("causal", [False, True])
def test_score_images_match_derived(js: Runner, data, causal: bool) -> None:
    n, d = 40, 64
    raw = raw_from(data, N_MAX, d)
    (images,) = js(
        [("kernel", "scoreImages", [raw.ravel(), N_MAX, {"n": n, "d_k": d, "causal": causal}])]
    )
    block = raw[:n, :n]
    hidden = ~sdpa_core.causal_mask(n, n) if causal else np.zeros((n, n), dtype=bool)
    expected_raw = np.where(hidden, np.nan, block).astype(np.float32)
    expected_scaled = np.where(hidden, np.nan, block / math.sqrt(d)).astype(np.float32)
    np.testing.assert_array_equal(images["rawImage"].reshape(n, n), expected_raw)
    np.testing.assert_array_equal(images["scaledImage"].reshape(n, n), expected_scaled)
    assert images["rawLimit"] == pytest.approx(np.abs(block).max(), rel=TIGHT)
    # Against the server, which computes from float64 Q and K: float32 agreement.
    server = score_images(n, d, SEED, causal)
    np.testing.assert_allclose(
        images["rawImage"].reshape(n, n), server.raw_image, rtol=1e-5, atol=1e-5, equal_nan=True
    )
    assert images["scaledLimit"] == pytest.approx(server.scaled_limit, rel=1e-6)


def test_histogram_matches_core_bin_for_bin_on_every_embedded_row(js: Runner) -> None:
    page = build_export_data(4, 512, SEED)
    calls, expected = [], []
    for row, d in zip(page.dot, page.d_values, strict=True):
        half_width = HISTOGRAM_HALF_WIDTH * math.sqrt(d)
        calls.append(("kernel", "histogram", [row, HISTOGRAM_BINS, -half_width, half_width]))
        expected.append(sdpa_core.histogram(row, HISTOGRAM_BINS, (-half_width, half_width)))
    for got, (density, edges) in zip(js(calls), expected, strict=True):
        np.testing.assert_array_equal(got["density"], density)
        np.testing.assert_array_equal(got["edges"], edges)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_edges_and_outliers_match_core(js: Runner, dtype: type) -> None:
    # Values exactly on the edges, one ULP either side, and outside the range: the cases
    # where np.histogram's index arithmetic needs its edge corrections.
    low, high, bins = -3.7, 2.9, 13
    edges = np.linspace(low, high, bins + 1).astype(dtype)
    values = np.concatenate(
        [
            edges,
            np.nextafter(edges, dtype(np.inf)),
            np.nextafter(edges, dtype(-np.inf)),
            np.array([low - 1.0, high + 1.0, 0.0], dtype=dtype),
        ]
    ).astype(dtype)
    (got,) = js([("kernel", "histogram", [values, bins, low, high])])
    density, expected_edges = sdpa_core.histogram(values, bins, (low, high))
    np.testing.assert_array_equal(got["density"], density)
    np.testing.assert_array_equal(got["edges"], expected_edges)


@pytest.mark.parametrize("d", [1, 4, 64, 512])
def test_histogram_frames_match_the_servers(js: Runner, d: int) -> None:
    values = sdpa_core.dot_product_pool(d, SEED)
    scaled, raw_frame = js(
        [
            ("kernel", "scaleFloat32", [values, d]),
            (
                "kernel",
                "histogramFrame",
                [values, d, HISTOGRAM_BINS, HISTOGRAM_HALF_WIDTH, CURVE_POINTS],
            ),
        ]
    )
    (scaled_frame,) = js(
        [
            (
                "kernel",
                "histogramFrame",
                [scaled, 1.0, HISTOGRAM_BINS, HISTOGRAM_HALF_WIDTH, CURVE_POINTS],
            )
        ]
    )
    np.testing.assert_array_equal(scaled, values / np.float32(math.sqrt(d)))
    for frame, server in zip(
        (raw_frame, scaled_frame), dot_product_histograms(d, SEED), strict=True
    ):
        np.testing.assert_array_equal(frame["left"], server.left)
        np.testing.assert_array_equal(frame["right"], server.right)
        np.testing.assert_array_equal(frame["density"], server.density)
        np.testing.assert_array_equal(frame["curveX"], server.curve_x)
        np.testing.assert_allclose(frame["curveY"], server.curve_y, rtol=1e-14, atol=0)
        assert frame["std"] == pytest.approx(server.std, rel=TIGHT)
        assert frame["expectedStd"] == server.expected_std
        assert frame["count"] == server.count


def test_std_normal_pdf_and_linspace_match_numpy(js: Runner) -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(loc=2.0, scale=5.0, size=1001).astype(np.float32)
    x = np.linspace(-12.0, 12.0, 97)
    std, pdf, grid = js(
        [
            ("kernel", "std", [values]),
            ("kernel", "normalPdf", [x, 9.0]),
            ("kernel", "linspace", [-7.25, 3.5, 61]),
        ]
    )
    assert std == pytest.approx(float(np.std(values, dtype=np.float64)), rel=TIGHT)
    np.testing.assert_allclose(pdf, sdpa_core.normal_pdf(x, 9.0), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(grid, np.linspace(-7.25, 3.5, 61))


def test_nearest_index_matches_controls_spec(js: Runner) -> None:
    rng = np.random.default_rng(4)
    cases = [
        (grid, float(value))
        for grid in (D_K_GRID, N_GRID, TEMPERATURE_GRID)
        for value in [*grid, *np.exp(rng.uniform(math.log(0.01), math.log(2000.0), 40))]
    ]
    got = js([("kernel", "nearestIndex", [grid, value]) for grid, value in cases])
    assert [grid[index] for (grid, _), index in zip(cases, got, strict=True)] == [
        nearest_on_grid(value, grid) for grid, value in cases
    ]
