"""Unit and property tests of sdpa_core.softmax."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from sdpa_core import softmax

PROPERTY = settings(max_examples=60, deadline=None)

# Logits up to ±1e4 are in the contract; the subtract-the-max trick is what keeps them finite.
LOGIT = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
LOGIT32 = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=32)
SHAPES = array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=12)


def reference_softmax(row: list[float]) -> list[float]:
    """Plain-Python softmax by a different formula: p_i = 1 / Σ_j exp(x_j − x_i)."""
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return [0.0] * len(row)
    return [
        0.0 if x == -math.inf else 1.0 / math.fsum(math.exp(y - x) for y in finite) for x in row
    ]


@PROPERTY
@given(arrays(np.float64, SHAPES, elements=LOGIT))
def test_rows_sum_to_one_float64(x: np.ndarray) -> None:
    weights = softmax(x)
    assert weights.dtype == np.float64
    assert weights.shape == x.shape
    assert np.isfinite(weights).all()
    assert ((weights >= 0) & (weights <= 1)).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@PROPERTY
@given(arrays(np.float32, SHAPES, elements=LOGIT32))
def test_rows_sum_to_one_float32(x: np.ndarray) -> None:
    weights = softmax(x)
    assert weights.dtype == np.float32
    assert np.isfinite(weights).all()
    np.testing.assert_allclose(weights.sum(axis=-1, dtype=np.float64), 1.0, rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_extreme_logits_stay_finite(dtype: type) -> None:
    x = np.array([[1e4, -1e4, 0.0], [1e4, 1e4, -1e4], [-1e4, -1e4, -1e4]], dtype=dtype)
    weights = softmax(x)
    expected = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    np.testing.assert_allclose(weights, expected, rtol=1e-6, atol=0)


@PROPERTY
@given(
    arrays(np.float64, (4, 7), elements=LOGIT),
    arrays(np.bool_, (4, 7)),
)
def test_minus_inf_gets_exactly_zero(x: np.ndarray, excluded: np.ndarray) -> None:
    x = np.where(excluded, -np.inf, x)
    weights = softmax(x)
    assert (weights[excluded] == 0.0).all()
    assert not np.isnan(weights).any()
    live = ~excluded.all(axis=-1)
    np.testing.assert_allclose(weights[live].sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # A row with nothing to attend to is all zeros, never NaN.
    assert (weights[~live] == 0.0).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_all_minus_inf_row_gives_zeros(dtype: type) -> None:
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]], dtype=dtype)
    weights = softmax(x)
    assert weights.dtype == dtype
    np.testing.assert_array_equal(weights[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(weights[1], [1 / (1 + math.e), 0.0, math.e / (1 + math.e)])


@PROPERTY
@given(
    arrays(np.float64, (3, 6), elements=st.floats(-100, 100)),
    st.floats(-1e3, 1e3),
)
def test_shift_invariance(x: np.ndarray, shift: float) -> None:
    np.testing.assert_allclose(softmax(x + shift), softmax(x), rtol=1e-9, atol=1e-15)


@PROPERTY
@given(
    arrays(np.float64, (3, 6), elements=st.floats(-100, 100)),
    arrays(np.float64, (3, 1), elements=st.floats(-1e3, 1e3)),
)
def test_per_row_shift_invariance(x: np.ndarray, shifts: np.ndarray) -> None:
    np.testing.assert_allclose(softmax(x + shifts), softmax(x), rtol=1e-9, atol=1e-15)


@PROPERTY
@given(
    arrays(
        np.float64,
        array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=8),
        elements=st.one_of(st.floats(-50, 50), st.just(-math.inf)),
    )
)
def test_agrees_with_plain_python_reference(x: np.ndarray) -> None:
    expected = [reference_softmax(row) for row in x.tolist()]
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-12, atol=1e-300)


@PROPERTY
@given(arrays(np.float64, (4, 5, 3), elements=LOGIT), st.sampled_from([0, 1, 2, -1, -2, -3]))
def test_axis_argument(x: np.ndarray, axis: int) -> None:
    expected = np.moveaxis(softmax(np.moveaxis(x, axis, -1)), -1, axis)
    np.testing.assert_allclose(softmax(x, axis=axis), expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(softmax(x, axis=axis).sum(axis=axis), 1.0, rtol=0, atol=1e-12)


def test_does_not_modify_its_input() -> None:
    x = np.array([[3.0, 1.0, -np.inf]])
    before = x.copy()
    softmax(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize(
    ("x", "dtype"),
    [
        (np.array([1, 2, 3]), np.float64),
        (np.array([True, False]), np.float64),
        (np.array([1.0, 2.0], dtype=np.float16), np.float64),
        (np.array([1.0, 2.0], dtype=np.float32), np.float32),
        ([0.5, 0.25], np.float64),
    ],
)
def test_output_dtype(x: object, dtype: type) -> None:
    weights = softmax(x)
    assert weights.dtype == dtype
    assert math.isclose(float(weights.sum()), 1.0, abs_tol=1e-6)


def test_uniform_for_equal_logits() -> None:
    np.testing.assert_allclose(softmax(np.full((2, 8), 7.5)), np.full((2, 8), 1 / 8), rtol=1e-15)


@pytest.mark.parametrize(
    ("x", "kwargs", "message"),
    [
        ([1.0, np.nan], {}, "x contains NaN"),
        ([1.0, np.inf], {}, r"x contains \+inf"),
        (np.float64(1.0), {}, "at least one dimension: got a scalar"),
        ([[1.0, 2.0]], {"axis": 2}, "axis 2 is out of range for an array with 2 dimensions"),
        ([[1.0, 2.0]], {"axis": -3}, "axis -3 is out of range"),
        ([[1.0, 2.0]], {"axis": None}, "axis must be an integer: got None"),
        ([[1.0, 2.0]], {"axis": 1.0}, "axis must be an integer: got 1.0"),
        (np.zeros((2, 0)), {}, r"at least one entry along axis -1: got shape \(2, 0\)"),
        (["a", "b"], {}, "x must be a real numeric array: got dtype <U1"),
        ([1 + 2j], {}, "x must be a real numeric array: got dtype complex128"),
    ],
)
def test_value_errors(x: object, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        softmax(x, **kwargs)
