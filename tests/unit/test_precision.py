"""Tests of softmax and attention in float64, float32, float16 and bfloat16, stable or not."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import sdpa_core
from sdpa_core import (
    PRECISIONS,
    attention,
    exp_overflow_threshold,
    precision_report,
    resolve_dtype,
    sample_qk,
    sample_values,
    softmax,
)

PROPERTY = settings(max_examples=60, deadline=None)

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
LOW = [np.dtype(np.float16), BFLOAT16]
ALL = [np.dtype(np.float64), np.dtype(np.float32), *LOW]

ROWS = st.tuples(st.integers(1, 6), st.integers(1, 12))


def unit_roundoff(dtype: np.dtype) -> float:
    """Half the gap between 1 and the next number of the format."""
    return float(ml_dtypes.finfo(dtype).eps) / 2


def assert_within_softmax_bound(weights: np.ndarray, logits: np.ndarray, *, stable: bool) -> None:
    """``weights`` (computed in a format) are the float64 softmax of the same, already rounded
    ``logits`` within the format's first-order rounding bound.

    Each weight exp(y_i)/Σ exp(y_j) (y = x − max, or x when not stable) is off by a relative
    (|y_i| + n + 3)·u at most: u from rounding y, |y_i|·u from exp magnifying it, u from exp
    itself, n·u through the sum and u from the division (Blanchard, Higham & Higham, 2021).
    Results in the subnormal range carry an absolute error up to the smallest subnormal.
    """
    dtype = weights.dtype
    u = unit_roundoff(dtype)
    reference = softmax(logits.astype(np.float64))
    y = logits - logits.max(axis=-1, keepdims=True) if stable else logits
    n = logits.shape[-1]
    relative = np.expm1((np.abs(y) + n + 3) * u)
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    error = np.abs(weights.astype(np.float64) - reference)
    assert (error <= relative * reference + 2 * tiny).all()


# --- formats --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("float64", np.float64),
        ("float32", np.float32),
        ("float16", np.float16),
        ("bfloat16", ml_dtypes.bfloat16),
        (np.float16, np.float16),
        (np.dtype(np.float32), np.float32),
        (ml_dtypes.bfloat16, ml_dtypes.bfloat16),
        (BFLOAT16, ml_dtypes.bfloat16),
        (float, np.float64),
    ],
)
def test_resolve_dtype(spelling: object, expected: type) -> None:
    assert resolve_dtype(spelling) == np.dtype(expected)


@pytest.mark.parametrize("spelling", ["float8", "half", "int32", np.int32, object, 3, "Float16"])
def test_resolve_dtype_rejects_other_formats(spelling: object) -> None:
    with pytest.raises(ValueError, match="dtype must be one of float64, float32, float16"):
        resolve_dtype(spelling)
    with pytest.raises(ValueError, match="dtype must be one of"):
        softmax([1.0, 2.0], dtype=spelling)
    with pytest.raises(ValueError, match="dtype must be one of"):
        attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), dtype=spelling)


def test_precisions_and_thresholds() -> None:
    assert PRECISIONS == ("float64", "float32", "float16", "bfloat16")
    assert exp_overflow_threshold("float16") == pytest.approx(math.log(65504), rel=1e-15)
    assert exp_overflow_threshold(np.float32) == pytest.approx(math.log(3.4028234663852886e38))
    assert exp_overflow_threshold("bfloat16") == pytest.approx(math.log(3.3895313892515355e38))
    assert exp_overflow_threshold("float64") == pytest.approx(709.782712893384)
    assert sdpa_core.accumulator_dtype("float16") == np.float32
    assert sdpa_core.accumulator_dtype("bfloat16") == np.float32
    assert sdpa_core.accumulator_dtype("float64") == np.float64


def test_new_names_are_exported() -> None:
    for name in (
        "PRECISIONS",
        "PrecisionReport",
        "accumulator_dtype",
        "dot_product_moments",
        "exp_overflow_threshold",
        "precision_report",
        "resolve_dtype",
    ):
        assert name in sdpa_core.__all__
        assert getattr(sdpa_core, name).__doc__


# --- dtype=None is today's behaviour --------------------------------------------------------


@PROPERTY
@given(arrays(np.float64, ROWS, elements=st.floats(-1e4, 1e4)))
def test_float64_and_float32_formats_are_the_default_path_bit_for_bit(x: np.ndarray) -> None:
    np.testing.assert_array_equal(softmax(x, dtype="float64"), softmax(x))
    np.testing.assert_array_equal(softmax(x, dtype=None, stable=True), softmax(x))
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(softmax(x, dtype=np.float32), softmax(x32))
    assert softmax(x32).dtype == np.float32


@pytest.mark.parametrize("mask", [None, "causal"])
def test_attention_float64_format_is_the_default_path(mask: str | None) -> None:
    q, k = sample_qk(40, 16, seed=0)
    v = sample_values(40, 8, seed=0)
    bias = np.linspace(-1, 1, 40)
    for kwargs in ({}, {"scale": 1.0, "temperature": 0.5}, {"bias": bias}):
        expected = attention(q, k, v, mask=mask, **kwargs)
        for got in (
            attention(q, k, v, mask=mask, dtype="float64", **kwargs),
            attention(q, k, v, mask=mask, dtype=None, stable=True, **kwargs),
        ):
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
    out32, weights32 = attention(q, k, v, dtype="float32")
    expected32 = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    np.testing.assert_array_equal(weights32, expected32[1])
    np.testing.assert_array_equal(out32, expected32[0])


def test_default_path_still_raises_on_overflow() -> None:
    big = np.full((2, 2), 1e200)
    with pytest.raises(ValueError, match="overflowed to infinity"):
        attention(big, big, np.ones((2, 2)))


# --- accuracy of the low-precision formats when finite --------------------------------------


@PROPERTY
@given(arrays(np.float64, ROWS, elements=st.floats(-60, 60)), st.sampled_from(LOW))
def test_stable_low_precision_softmax_is_within_rounding(x: np.ndarray, dtype: np.dtype) -> None:
    weights = softmax(x, dtype=dtype)
    assert weights.dtype == dtype
    assert np.isfinite(weights.astype(np.float64)).all()
    assert_within_softmax_bound(weights, x.astype(dtype).astype(np.float64), stable=True)


@PROPERTY
@given(arrays(np.float64, ROWS, elements=st.floats(-8, 8)), st.sampled_from(LOW))
def test_unstable_low_precision_softmax_is_within_rounding(x: np.ndarray, dtype: np.dtype) -> None:
    # |x| ≤ 8: exp stays in float16's normal range and no row sum overflows.
    weights = softmax(x, dtype=dtype, stable=False)
    assert np.isfinite(weights.astype(np.float64)).all()
    assert_within_softmax_bound(weights, x.astype(dtype).astype(np.float64), stable=False)


@pytest.mark.parametrize("dtype", LOW)
def test_low_precision_attention_is_close_to_float64(dtype: np.dtype) -> None:
    q, k = sample_qk(64, 64, seed=1)
    v = sample_values(64, 16, seed=1)
    output, weights = attention(q, k, v, dtype=dtype, mask="causal")
    assert output.dtype == weights.dtype == dtype
    output64, weights64 = attention(q, k, v, mask="causal")
    u = unit_roundoff(dtype)
    # Inputs, scores, weights and output each rounded a few times: errors of a few u.
    weights_report = precision_report(weights, weights64)
    assert weights_report.non_finite == 0
    assert weights_report.max_abs_error < 64 * u
    assert precision_report(output, output64).max_abs_error < 64 * u * np.abs(v).max()
    # Masked cells stay exactly 0 in every format.
    assert (weights.astype(np.float64)[~sdpa_core.causal_mask(64, 64)] == 0).all()


# --- overflow: exactly the cells the format's maximum predicts ------------------------------


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", ALL)
def test_unstable_softmax_overflows_just_above_the_threshold(dtype: np.dtype) -> None:
    threshold = exp_overflow_threshold(dtype)
    # The format's neighbours of the threshold: the largest number whose exp is finite and
    # the next one up.
    below = dtype.type(threshold)
    if float(below) > threshold:
        below = np.nextafter(below, dtype.type(0))
    above = np.nextafter(below, dtype.type(np.inf))
    x = np.array([[float(below), 0.0], [float(above), 0.0], [float(below), float(below)]])
    weights = softmax(x, dtype=dtype, stable=False).astype(np.float64)
    # Row 0: finite. Row 1: inf / inf = NaN in the overflowing cell, 1 / inf = 0 beside it.
    assert np.isfinite(weights[0]).all()
    assert np.isnan(weights[1, 0])
    assert weights[1, 1] == 0
    # Row 2: no exp overflows but their sum does: every weight is x / inf = 0, not NaN.
    np.testing.assert_array_equal(weights[2], [0.0, 0.0])
    stable = softmax(x, dtype=dtype).astype(np.float64)
    np.testing.assert_allclose(stable, [[1, 0], [1, 0], [0.5, 0.5]], atol=4 * unit_roundoff(dtype))


@pytest.mark.filterwarnings("error")
@PROPERTY
@given(arrays(np.float64, ROWS, elements=st.floats(-10, 20)), st.sampled_from(LOW))
def test_unstable_softmax_nan_cells_are_the_overflowing_logits(
    x: np.ndarray, dtype: np.dtype
) -> None:
    rounded = x.astype(dtype).astype(np.float64)
    weights = softmax(x, dtype=dtype, stable=False).astype(np.float64)
    predicted = rounded > exp_overflow_threshold(dtype)
    np.testing.assert_array_equal(np.isnan(weights), predicted)
    assert not np.isinf(weights).any()
    # Stable, the same logits always give finite weights summing to 1.
    stable = softmax(x, dtype=dtype).astype(np.float64)
    assert np.isfinite(stable).all()
    np.testing.assert_allclose(
        stable.sum(axis=-1), 1.0, atol=(x.shape[-1] + 2) * 2 * unit_roundoff(dtype)
    )


@pytest.mark.filterwarnings("error")
def test_float16_row_above_log_65504_is_nan_unstable_finite_stable() -> None:
    x = np.array([[1.0, 2.0, 3.0], [1.0, 12.0, 3.0]])
    unstable = softmax(x, dtype="float16", stable=False)
    assert not np.isnan(unstable[0]).any()
    assert np.isnan(unstable[1]).any()
    assert np.isfinite(softmax(x, dtype="float16")).all()


def scores_in(dtype: np.dtype, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Raw scores as the documented low-precision pipeline forms them: q and k rounded to the
    format, the matmul accumulated in float32, the result rounded to the format."""
    q32 = q.astype(dtype).astype(np.float32)
    k32 = k.astype(dtype).astype(np.float32)
    return (q32 @ k32.T).astype(dtype).astype(np.float64)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", LOW)
def test_unscaled_d_k_1024_without_max_subtraction_turns_rows_nan(dtype: np.dtype) -> None:
    q, k = sample_qk(64, 1024, seed=0)
    v = sample_values(64, 8, seed=0)
    raw = scores_in(dtype, q, k)
    predicted = raw > exp_overflow_threshold(dtype)
    output, weights = attention(q, k, v, scale=1.0, dtype=dtype, stable=False)
    # Exactly the cells whose raw score's exp overflows the format are NaN.
    np.testing.assert_array_equal(np.isnan(weights.astype(np.float64)), predicted)
    # A NaN weight poisons its whole output row.
    np.testing.assert_array_equal(
        np.isnan(output.astype(np.float64)).any(axis=1), predicted.any(axis=1)
    )
    # Subtracting the row maximum keeps every row finite, scaled or not.
    for scale in (1.0, None):
        output, weights = attention(q, k, v, scale=scale, dtype=dtype)
        assert np.isfinite(weights.astype(np.float64)).all()
        assert np.isfinite(output.astype(np.float64)).all()


@pytest.mark.filterwarnings("error")
def test_unscaled_d_k_1024_float16_loses_every_row_scaled_keeps_them() -> None:
    q, k = sample_qk(64, 1024, seed=0)
    v = sample_values(64, 8, seed=0)
    # Raw dot products have a std of 32: every row's maximum is far above log(65504) ≈ 11.09.
    _, weights = attention(q, k, v, scale=1.0, dtype="float16", stable=False)
    assert np.isnan(weights).any(axis=1).all()
    report = precision_report(weights, attention(q, k, v, scale=1.0)[1])
    assert report.nan == int(np.isnan(weights).sum()) > 0
    # Divided by √d_k = 32 they have a std of 1: even the textbook formula stays finite.
    _, weights = attention(q, k, v, dtype="float16", stable=False)
    assert np.isfinite(weights).all()


def test_attention_weights_are_softmax_of_the_format_logits() -> None:
    q, k = sample_qk(32, 256, seed=3)
    v = sample_values(32, 4, seed=3)
    for stable in (True, False):
        _, weights = attention(q, k, v, scale=1.0, dtype="float16", stable=stable)
        expected = softmax(scores_in(np.dtype(np.float16), q, k), dtype="float16", stable=stable)
        np.testing.assert_array_equal(weights, expected)


@pytest.mark.filterwarnings("error")
def test_logits_beyond_the_format_become_inf_and_nan_not_clamped() -> None:
    # 70000 is beyond float16's 65504: stored in float16 it is inf, and inf − inf is NaN.
    weights = softmax([[70000.0, 0.0], [1.0, 0.0]], dtype="float16")
    assert np.isnan(weights[0]).all()
    assert np.isfinite(weights[1]).all()


@pytest.mark.filterwarnings("error")
def test_whole_row_underflow_without_max_subtraction_is_nan() -> None:
    # exp(-20) ≈ 2e-9 is below float16's smallest subnormal: the row sums to 0, and 0 / 0.
    weights = softmax([[-20.0, -21.0], [-1.0, -2.0]], dtype="float16", stable=False)
    assert np.isnan(weights[0]).all()
    assert np.isfinite(weights[1]).all()


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("stable", [True, False])
def test_fully_masked_rows_are_zero_in_every_format(dtype: np.dtype, stable: bool) -> None:
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    weights = softmax(x, dtype=dtype, stable=stable).astype(np.float64)
    np.testing.assert_array_equal(weights, [[0.0, 0.0], [1.0, 0.0]])


def test_default_unstable_path_keeps_the_input_precision() -> None:
    x = np.array([[1.0, 2.0, 700.0], [1.0, 2.0, 710.0]])
    weights = softmax(x, stable=False)
    assert weights.dtype == np.float64
    np.testing.assert_allclose(weights[0], softmax(x[0]), rtol=1e-13)
    assert np.isnan(weights[1, 2])
    assert softmax(x.astype(np.float32), stable=False).dtype == np.float32


def test_bfloat16_input_is_accepted() -> None:
    x = np.array([[0.5, 1.5, -2.0]], dtype=BFLOAT16)
    np.testing.assert_array_equal(softmax(x), softmax(x.astype(np.float64)))
    assert softmax(x, dtype="bfloat16").dtype == BFLOAT16


# --- precision_report -------------------------------------------------------------------------


def test_precision_report_counts_and_measures() -> None:
    reference = np.array([[0.25, 0.75], [0.5, 0.5], [0.1, 0.9]])
    values = np.array([[0.25, 0.7], [np.nan, 0.0], [np.inf, 0.875]], dtype=np.float16)
    report = precision_report(values, reference)
    assert report == sdpa_core.PrecisionReport(
        size=6, nan=1, inf=1, max_abs_error=pytest.approx(0.5)
    )
    assert report.non_finite == 2


def test_precision_report_of_exact_and_all_nan_results() -> None:
    reference = np.array([0.5, 0.5])
    assert precision_report(reference, reference).max_abs_error == 0.0
    report = precision_report(np.full(2, np.nan), reference)
    assert report.nan == 2
    assert math.isnan(report.max_abs_error)
    bf = np.array([0.5, 0.25], dtype=BFLOAT16)
    assert precision_report(bf, [0.5, 0.25]).max_abs_error == 0.0


@pytest.mark.parametrize(
    ("values", "reference", "message"),
    [
        (np.ones(3), np.ones(2), r"same shape: got \(3,\) and \(2,\)"),
        (np.array(["a"]), np.ones(1), "values must be a real numeric array"),
        (np.ones(1), np.array([1j]), "reference must be a real numeric array"),
    ],
)
def test_precision_report_errors(values: object, reference: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        precision_report(values, reference)
