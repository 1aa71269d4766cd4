"""Unit and property tests of sdpa_core.metrics: densities, histograms and collapse measures."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from sdpa_core import (
    CollapseCurve,
    collapse_curve,
    histogram,
    max_weight,
    normal_pdf,
    row_entropy,
    sample_dot_products,
    softmax,
    softmax_jacobian_norm,
)

PROPERTY = settings(max_examples=60, deadline=None)

LOGITS = arrays(
    np.float64,
    array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=10),
    elements=st.floats(-30, 30),
)


def trapezoid(y: np.ndarray, x: np.ndarray) -> float:
    """Trapezoid rule (np.trapezoid is NumPy ≥ 2 only; the package supports 1.26)."""
    return float(np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2)


def trapezoid_area(density: np.ndarray, edges: np.ndarray) -> float:
    """Area under a step-function density."""
    return float(np.sum(density * np.diff(edges)))


# --- normal_pdf ---------------------------------------------------------------------------


@PROPERTY
@given(st.floats(1e-2, 1e4))
def test_normal_pdf_integrates_to_one(var: float) -> None:
    sigma = math.sqrt(var)
    x = np.linspace(-12 * sigma, 12 * sigma, 20_001)
    assert math.isclose(trapezoid(normal_pdf(x, var), x), 1.0, abs_tol=1e-9)


def test_normal_pdf_known_values() -> None:
    var = 64.0
    peak = 1 / math.sqrt(2 * math.pi * var)
    one_sigma = peak / math.sqrt(math.e)
    np.testing.assert_allclose(normal_pdf([0.0, 8.0, -8.0], var), [peak, one_sigma, one_sigma])
    assert normal_pdf(0.0, 1.0) == pytest.approx(0.3989422804014327, rel=1e-15)
    # Far tails underflow to 0 rather than NaN.
    assert normal_pdf([1e6, -np.inf], 1.0).tolist() == [0.0, 0.0]


def test_normal_pdf_matches_the_dot_product_histogram() -> None:
    d_k = 64
    s = sample_dot_products(d_k, 20_000, np.random.default_rng(9))
    density, edges = histogram(s, 40, (-32.0, 32.0))
    centres = (edges[1:] + edges[:-1]) / 2
    # Raw q·k is approximately Normal(0, d_k): the histogram hugs the curve.
    assert np.abs(density - normal_pdf(centres, d_k)).max() < 0.006


@pytest.mark.parametrize("var", [0.0, -1.0, math.nan, math.inf, "1", True])
def test_normal_pdf_bad_var(var: object) -> None:
    with pytest.raises(ValueError, match="var must be a positive finite number: got"):
        normal_pdf([0.0], var)


def test_normal_pdf_nan_x() -> None:
    with pytest.raises(ValueError, match="x contains NaN"):
        normal_pdf([0.0, math.nan], 1.0)


# --- histogram ----------------------------------------------------------------------------


@PROPERTY
@given(
    arrays(np.float64, st.integers(1, 500), elements=st.floats(-100, 100)),
    st.integers(1, 60),
    st.floats(-50, 0),
    st.floats(0.5, 60),
)
def test_histogram_density_normalisation(
    values: np.ndarray, bins: int, low: float, width: float
) -> None:
    high = low + width
    density, edges = histogram(values, bins, (low, high))
    assert density.shape == (bins,)
    np.testing.assert_allclose(edges, np.linspace(low, high, bins + 1), rtol=1e-12, atol=1e-12)
    inside = np.count_nonzero((values >= low) & (values <= high))
    # Normalised by all values, so the area is the fraction inside the range.
    assert math.isclose(trapezoid_area(density, edges), inside / values.size, abs_tol=1e-12)


def test_histogram_of_values_inside_integrates_to_one() -> None:
    values = np.random.default_rng(10).uniform(-1, 1, 5_000)
    density, edges = histogram(values, 20, (-1.0, 1.0))
    assert math.isclose(trapezoid_area(density, edges), 1.0, rel_tol=1e-12)
    # Uniform on [-1, 1] has density 1/2.
    assert np.abs(density - 0.5).max() < 0.1


def test_histogram_known_counts() -> None:
    density, edges = histogram([0.5, 1.5, 1.6, 5.0], 2, (0.0, 2.0))
    np.testing.assert_array_equal(edges, [0.0, 1.0, 2.0])
    # 1 and 2 of the 4 values over bins of width 1; the clipped 5.0 is missing area.
    np.testing.assert_allclose(density, [0.25, 0.5])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0], 0, (0, 1)), "bins must be ≥ 1: got 0"),
        (([1.0], 2.0, (0, 1)), "bins must be an integer ≥ 1: got 2.0"),
        (([], 3, (0, 1)), "values must not be empty"),
        (([1.0, math.nan], 3, (0, 1)), "values contains NaN"),
        (([1.0], 3, (1, 1)), r"value_range must be finite with low < high: got \(1.0, 1.0\)"),
        (([1.0], 3, (2, 1)), r"value_range must be finite with low < high: got \(2.0, 1.0\)"),
        (([1.0], 3, (0, math.inf)), "value_range must be finite with low < high"),
        (([1.0], 3, (math.nan, 1)), "value_range must be finite with low < high"),
        (([1.0], 3, (0.0,)), r"value_range must be a \(low, high\) pair of numbers: got \(0.0,\)"),
        (([1.0], 3, (0, 1, 2)), r"value_range must be a \(low, high\) pair of numbers"),
        (([1.0], 3, (None, 1)), r"value_range must be a \(low, high\) pair of numbers"),
        (([1.0], 3, 5.0), r"value_range must be a \(low, high\) pair of numbers: got 5.0"),
    ],
)
def test_histogram_errors(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        histogram(*args)


# --- row_entropy, max_weight, softmax_jacobian_norm ----------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 16, 1024])
def test_uniform_row_known_values(n: int) -> None:
    uniform = np.full((2, n), 1 / n)
    np.testing.assert_allclose(row_entropy(uniform), math.log(n), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(max_weight(uniform), 1 / n, rtol=1e-15)
    np.testing.assert_allclose(
        softmax_jacobian_norm(uniform), math.sqrt(1 / n - 1 / n**2), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_one_hot_row_known_values(n: int) -> None:
    one_hot = np.eye(n)
    np.testing.assert_array_equal(row_entropy(one_hot), np.zeros(n))
    np.testing.assert_array_equal(max_weight(one_hot), np.ones(n))
    np.testing.assert_array_equal(softmax_jacobian_norm(one_hot), np.zeros(n))


def test_two_point_row_known_values() -> None:
    p = np.array([0.25, 0.75])
    assert row_entropy(p) == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))
    assert max_weight(p) == 0.75
    # diag(p) − ppᵀ = [[3/16, −3/16], [−3/16, 3/16]]: Frobenius norm 3/8.
    assert softmax_jacobian_norm(p) == pytest.approx(0.375, rel=1e-14)


def test_batch_shapes_are_kept() -> None:
    weights = softmax(np.random.default_rng(11).standard_normal((2, 3, 4, 5)))
    for statistic in (row_entropy, max_weight, softmax_jacobian_norm):
        assert statistic(weights).shape == (2, 3, 4)


@PROPERTY
@given(LOGITS)
def test_entropy_and_max_weight_bounds(logits: np.ndarray) -> None:
    p = softmax(logits)
    n = p.shape[-1]
    entropy = row_entropy(p)
    assert ((entropy >= 0) & (entropy <= math.log(n) + 1e-12)).all()
    peak = max_weight(p)
    assert ((peak >= 1 / n - 1e-15) & (peak <= 1)).all()
    reference = [-math.fsum(x * math.log(x) for x in row if x > 0) for row in p.reshape(-1, n)]
    np.testing.assert_allclose(entropy.ravel(), np.maximum(reference, 0), rtol=1e-9, atol=1e-12)


@PROPERTY
@given(LOGITS)
def test_jacobian_closed_form_matches_explicit_matrix(logits: np.ndarray) -> None:
    p = softmax(logits)
    rows = p.reshape(-1, p.shape[-1])
    explicit = [np.linalg.norm(np.diag(row) - np.outer(row, row), "fro") for row in rows]
    # The explicit matrix's entries carry ~1e-16 absolute rounding, hence the tiny atol; a
    # closed form that cancels (Σp² − 2Σp³ + (Σp²)²) is off by ~1e-8 on near one-hot rows.
    np.testing.assert_allclose(softmax_jacobian_norm(p).ravel(), explicit, rtol=1e-9, atol=1e-15)


@PROPERTY
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-40, 40)))
def test_jacobian_norm_is_accurate_on_collapsed_rows(logits: np.ndarray) -> None:
    p = softmax(logits)
    exact = [Fraction(x) for x in p.tolist()]
    # ‖diag(p) − ppᵀ‖²_F of the float vector p, in exact rational arithmetic.
    squared = sum(
        ((pi if i == j else 0) - pi * pj) ** 2
        for i, pi in enumerate(exact)
        for j, pj in enumerate(exact)
    )
    assert softmax_jacobian_norm(p) == pytest.approx(math.sqrt(squared), rel=1e-12, abs=1e-300)


def test_jacobian_norm_of_a_nearly_one_hot_row() -> None:
    p = softmax(np.array([17.0, 0.0]))
    epsilon = 1 / (1 + math.exp(17))
    # J = p₀p₁ [[1, −1], [−1, 1]]: norm 2 p₀ p₁ = 2ε(1 − ε), with ε = σ(−17) ≈ 4e-8. The
    # cancelling closed form gave 8.16e-8 here instead of 8.28e-8, 1.4 % off.
    assert softmax_jacobian_norm(p) == pytest.approx(2 * epsilon * (1 - epsilon), rel=1e-8)


@PROPERTY
@given(arrays(np.float64, st.integers(2, 8), elements=st.floats(-5, 5)))
def test_diag_minus_outer_is_the_softmax_jacobian(x: np.ndarray) -> None:
    p = softmax(x)
    step = 1e-6
    # Central differences: column j is ∂softmax/∂x_j.
    numeric = np.column_stack(
        [(softmax(x + step * e) - softmax(x - step * e)) / (2 * step) for e in np.eye(x.size)]
    )
    np.testing.assert_allclose(numeric, np.diag(p) - np.outer(p, p), atol=1e-8)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([0.5, -0.5, 1.0], "weights must be non-negative probabilities"),
        (np.float64(1.0), "weights must have at least one dimension: got a scalar"),
        (np.zeros((3, 0)), "weights must have at least one key per row"),
        ([0.5, math.nan], "weights contains NaN"),
        (["a"], "weights must be a real numeric array"),
    ],
)
@pytest.mark.parametrize("statistic", [row_entropy, max_weight, softmax_jacobian_norm])
def test_weight_statistics_errors(statistic: object, weights: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        statistic(weights)


# --- collapse_curve -------------------------------------------------------------------------

D_VALUES = (1, 4, 16, 64, 256, 1024)


@pytest.fixture(scope="module")
def unscaled() -> CollapseCurve:
    """The collapse curve without the 1/√d_k scaling."""
    return collapse_curve(D_VALUES, 16, 8, scaled=False)


@pytest.fixture(scope="module")
def scaled() -> CollapseCurve:
    """The collapse curve with the 1/√d_k scaling."""
    return collapse_curve(D_VALUES, 16, 8, scaled=True)


def test_unscaled_entropy_falls_with_d_k(unscaled: CollapseCurve) -> None:
    entropy = unscaled.entropy.mean
    assert (np.diff(entropy) < 0).all()
    # From near log 16 ≈ 2.77 at d_k = 1 to a nearly one-hot ~0.05 at d_k = 1024.
    assert entropy[-1] < 0.1 * entropy[0]
    assert (np.diff(unscaled.max_weight.mean) > 0).all()
    assert unscaled.max_weight.mean[-1] > 0.9
    assert unscaled.jacobian_norm.mean[-1] < 0.2 * unscaled.jacobian_norm.mean.max()


def test_scaled_entropy_stays_flat(scaled: CollapseCurve, unscaled: CollapseCurve) -> None:
    entropy = scaled.entropy.mean
    assert entropy.max() / entropy.min() < 1.05
    assert 0.8 * math.log(16) < entropy.min()
    assert scaled.jacobian_norm.mean.max() / scaled.jacobian_norm.mean.min() < 1.15
    # At d_k = 1 the scale is 1, so both curves start from the very same draws.
    assert scaled.entropy.mean[0] == unscaled.entropy.mean[0]
    assert (scaled.entropy.mean[1:] > unscaled.entropy.mean[1:]).all()


@pytest.mark.parametrize("name", ["entropy", "max_weight", "jacobian_norm"])
def test_bands_are_ordered(scaled: CollapseCurve, unscaled: CollapseCurve, name: str) -> None:
    for curve in (scaled, unscaled):
        band = getattr(curve, name)
        assert band.mean.shape == band.low.shape == band.high.shape == (len(D_VALUES),)
        assert (band.low <= band.mean).all()
        assert (band.mean <= band.high).all()
        assert (band.low < band.high).all()


def test_curve_is_cached_and_read_only(scaled: CollapseCurve) -> None:
    assert collapse_curve(list(D_VALUES), 16, 8, scaled=True) is scaled
    assert collapse_curve(np.array(D_VALUES, dtype=float), 16, 8, scaled=1) is scaled
    np.testing.assert_array_equal(scaled.d_values, D_VALUES)
    for array in (scaled.d_values, scaled.entropy.mean, scaled.entropy.low, scaled.max_weight.high):
        assert not array.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        scaled.entropy.mean[0] = 0.0


def test_curve_points_do_not_depend_on_the_other_d_values(scaled: CollapseCurve) -> None:
    single = collapse_curve([64], 16, 8, scaled=True)
    assert single.entropy.mean[0] == scaled.entropy.mean[D_VALUES.index(64)]


def test_temperature_and_seed_change_the_curve() -> None:
    cold = collapse_curve([64], 16, 8, scaled=True, temperature=0.5)
    hot = collapse_curve([64], 16, 8, scaled=True, temperature=4.0)
    assert hot.entropy.mean[0] > cold.entropy.mean[0]
    other_seed = collapse_curve([64], 16, 8, scaled=True, seed=1)
    assert other_seed.entropy.mean[0] != collapse_curve([64], 16, 8, scaled=True).entropy.mean[0]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([], 8, 4), {}, "d_values must hold at least one d_k"),
        (([4, 0], 8, 4), {}, "d_k must be ≥ 1: got 0"),
        (([4, 2.5], 8, 4), {}, "d_k must be an integer ≥ 1: got 2.5"),
        ((["x"], 8, 4), {}, "d_k must be an integer ≥ 1: got 'x'"),
        (([4], 0, 4), {}, "n must be ≥ 1: got 0"),
        (([4], 8, 0), {}, "trials must be ≥ 1: got 0"),
        (([4], 8, 4), {"temperature": 0.0}, "temperature must be a positive finite number"),
        (([4], 8, 4), {"temperature": math.nan}, "temperature must be a positive finite number"),
        (([4], 8, 4), {"seed": -1}, "seed must be ≥ 0: got -1"),
    ],
)
def test_collapse_curve_errors(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        collapse_curve(*args, scaled=True, **kwargs)
