"""Tests of sdpa_core.backward.attention_backward against central finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_core.attention import attention
from sdpa_core.backward import attention_backward

PROPERTY = settings(max_examples=60, deadline=None)
STEP = 1e-5
"""Central-difference step: truncation error ~1e-10, rounding error ~1e-11 in float64."""
TOLERANCE = 1e-6
"""Largest relative error allowed between the backward pass and finite differences."""


def numeric_gradient(loss: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    """Central finite differences of ``loss`` at ``x``, one entry at a time."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        shifted = x.copy()
        shifted[index] += STEP
        upper = loss(shifted)
        shifted[index] -= 2 * STEP
        grad[index] = (upper - loss(shifted)) / (2 * STEP)
    return grad


def numeric_gradients(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, grad_out: np.ndarray, **options: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite-difference gradients of sum(attention(q, k, v)[0] * grad_out) in q, k and v."""

    def loss(q_: np.ndarray, k_: np.ndarray, v_: np.ndarray) -> float:
        return float((attention(q_, k_, v_, **options)[0] * grad_out).sum())

    return (
        numeric_gradient(lambda x: loss(x, k, v), q),
        numeric_gradient(lambda x: loss(q, x, v), k),
        numeric_gradient(lambda x: loss(q, k, x), v),
    )


GRADIENT_FLOOR = 1e-3
"""Below this norm a gradient is compared as if it had this norm: the differences' rounding
noise (about 1e-16 × |loss| / STEP per entry, up to ~1e-10 for the largest losses drawn)
does not shrink with the gradient, so a saturated softmax's gradient of ~1e-6 cannot be
matched to 1e-6 of itself (hypothesis found one: 2e-6 off, 6e-12 absolute)."""


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """‖analytic − numeric‖ / max(‖numeric‖, GRADIENT_FLOOR): relative for a gradient of
    any size the differences resolve, absolute (to 1e-9) for one smaller than that."""
    scale = max(float(np.linalg.norm(numeric)), GRADIENT_FLOOR)
    return float(np.linalg.norm(analytic - numeric)) / scale


def check_against_differences(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, grad_out: np.ndarray, **options: object
) -> None:
    analytic = attention_backward(q, k, v, grad_out, **options)
    numeric = numeric_gradients(q, k, v, grad_out, **options)
    for name, array, ours, theirs in zip("qkv", (q, k, v), analytic, numeric, strict=True):
        assert ours.shape == array.shape, name
        assert ours.dtype == np.float64, name
        assert relative_error(ours, theirs) <= TOLERANCE, name


def random_problem(
    rng: np.random.Generator,
    q_shape: tuple[int, ...],
    k_shape: tuple[int, ...],
    v_shape: tuple[int, ...],
    **options: object,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = (rng.standard_normal(shape) for shape in (q_shape, k_shape, v_shape))
    output, _ = attention(q, k, v, **options)
    return q, k, v, rng.standard_normal(output.shape)


FULL_ROW_MASKED = np.array([[True, False, True, True], [False, False, False, False], [True] * 4])

CASES = {
    "default scale": ((3, 5), (4, 5), (4, 2), {}),
    "unscaled": ((3, 5), (4, 5), (4, 2), {"scale": 1.0}),
    "explicit scale and temperature": ((3, 5), (4, 5), (4, 3), {"scale": 0.7, "temperature": 2.5}),
    "sharp temperature": ((3, 2), (4, 2), (4, 2), {"temperature": 0.4}),
    "boolean mask with a fully masked row": ((3, 2), (4, 2), (4, 2), {"mask": FULL_ROW_MASKED}),
    "causal": ((4, 3), (4, 3), (4, 2), {"mask": "causal"}),
    "causal with batch dims": ((2, 3, 3, 2), (2, 3, 3, 2), (2, 3, 3, 2), {"mask": "causal"}),
    "bias": ((3, 2), (4, 2), (4, 2), {"bias": np.linspace(-1.0, 1.0, 12).reshape(3, 4)}),
    "broadcast batch dims": ((2, 1, 3, 2), (1, 3, 4, 2), (4, 2), {}),
    "keys shared by the batch": ((3, 2, 2), (4, 2), (3, 4, 2), {"temperature": 1.5}),
    "mask adds a batch dim": (
        (3, 2),
        (4, 2),
        (4, 2),
        {"mask": np.array([FULL_ROW_MASKED, ~FULL_ROW_MASKED])},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_matches_finite_differences(case: tuple) -> None:
    q_shape, k_shape, v_shape, options = case
    rng = np.random.default_rng(len(q_shape) * 100 + q_shape[-1])
    check_against_differences(*random_problem(rng, q_shape, k_shape, v_shape, **options), **options)


def test_fully_masked_row_gets_zero_gradient() -> None:
    rng = np.random.default_rng(1)
    q, k, v, grad_out = random_problem(rng, (3, 2), (4, 2), (4, 2), mask=FULL_ROW_MASKED)
    grad_q, _, _ = attention_backward(q, k, v, grad_out, mask=FULL_ROW_MASKED)
    np.testing.assert_array_equal(grad_q[1], 0.0)
    nothing_seen = np.zeros((3, 4), dtype=bool)
    for grad in attention_backward(q, k, v, grad_out, mask=nothing_seen):
        np.testing.assert_array_equal(grad, 0.0)


@pytest.mark.parametrize("options", [{}, {"mask": "causal", "temperature": 0.5}])
def test_float32_matches_float64_within_float32_precision(options: dict) -> None:
    rng = np.random.default_rng(7)
    problem64 = random_problem(rng, (2, 8, 16), (2, 8, 16), (2, 8, 4), **options)
    exact = attention_backward(*problem64, **options)
    single = attention_backward(*(array.astype(np.float32) for array in problem64), **options)
    for ours, reference in zip(single, exact, strict=True):
        assert ours.dtype == np.float32
        assert relative_error(ours.astype(np.float64), reference) <= 1e-5


def test_mixed_precision_computes_in_float64() -> None:
    rng = np.random.default_rng(3)
    q, k, v, grad_out = random_problem(rng, (2, 3), (3, 3), (3, 2))
    grads = attention_backward(q.astype(np.float32), k, v, grad_out.astype(np.float32))
    assert all(grad.dtype == np.float64 for grad in grads)


def test_unscaled_saturated_softmax_passes_almost_no_gradient_to_q() -> None:
    """At d_k = 1024 without the scale the weights are near one-hot: a typical dq collapses."""
    rng = np.random.default_rng(0)
    q, k, v, grad_out = random_problem(rng, (8, 1024), (16, 1024), (16, 4))
    scaled = attention_backward(q, k, v, grad_out)[0]
    unscaled = attention_backward(q, k, v, grad_out, scale=1.0)[0]
    typical = np.median(np.linalg.norm(unscaled, axis=-1) / np.linalg.norm(scaled, axis=-1))
    assert typical < 1e-2  # 1.3e-3 for this seed, despite the 32× larger factor


def test_rejects_bad_grad_out() -> None:
    q, k, v = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5))
    with pytest.raises(ValueError, match="grad_out must have the output's shape"):
        attention_backward(q, k, v, np.ones((2, 4)))
    with pytest.raises(ValueError, match="grad_out contains NaN"):
        attention_backward(q, k, v, np.full((2, 5), np.nan))
    with pytest.raises(ValueError, match="must be finite"):
        attention_backward(q, k, v, np.full((2, 5), np.inf))


def test_rejects_what_attention_rejects() -> None:
    q, k, v, grad_out = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5)), np.ones((2, 5))
    with pytest.raises(ValueError, match="same number of keys"):
        attention_backward(q, k, np.ones((3, 5)), grad_out)
    with pytest.raises(ValueError, match="temperature"):
        attention_backward(q, k, v, grad_out, temperature=0.0)
    with pytest.raises(ValueError, match="mask must be boolean"):
        attention_backward(q, k, v, grad_out, mask=np.ones((2, 4)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        attention_backward(q, k, np.ones(4), grad_out)


@st.composite
def attention_problems(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """Small random problems: broadcast batch dims, a random mask or none, any scale."""
    n_q, n_k, d_k, d_v = (draw(st.integers(1, 4)) for _ in range(4))
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))

    def batch_of_input() -> tuple[int, ...]:
        # Each input keeps a suffix of the batch dims, with some of them broadcast (size 1).
        kept = batch[draw(st.integers(0, len(batch))) :]
        return tuple(size if draw(st.booleans()) else 1 for size in kept)

    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    q = rng.uniform(-2, 2, (*batch_of_input(), n_q, d_k))
    k = rng.uniform(-2, 2, (*batch_of_input(), n_k, d_k))
    v = rng.uniform(-2, 2, (*batch_of_input(), n_k, d_v))
    options: dict[str, object] = {
        "scale": draw(st.sampled_from([None, 1.0, 0.3])),
        "temperature": draw(st.sampled_from([1.0, 0.5, 3.0])),
    }
    mask_kind = draw(st.sampled_from(["none", "causal", "random"]))
    if mask_kind == "causal":
        options["mask"] = "causal"
    elif mask_kind == "random":
        options["mask"] = rng.random((*batch_of_input(), n_q, n_k)) < 0.6
    output, _ = attention(q, k, v, **options)
    return q, k, v, rng.standard_normal(output.shape), options


@PROPERTY
@given(attention_problems())
def test_property_matches_finite_differences(problem: tuple) -> None:
    *arrays, options = problem
    check_against_differences(*arrays, **options)
