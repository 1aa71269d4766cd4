"""The backward pass of scaled dot-product attention: exact gradients for training runs.

With ``P = softmax(S)``, ``S = (q @ kᵀ) * factor + bias`` (``factor`` = scale / temperature,
the scale 1/√d_k unless given) and ``O = P @ v``, the chain rule through the softmax Jacobian
``diag(p) − p pᵀ`` of each row gives

* ``dv = Pᵀ @ dO``
* ``dS = P ⊙ (dO @ vᵀ − rowsum(P ⊙ (dO @ vᵀ)))``
* ``dq = factor · dS @ k`` and ``dk = factor · dSᵀ @ q``.

A saturated (one-hot) row has ``P ⊙ (… − rowsum)`` ≈ 0: this is where gradients vanish.
"""

from __future__ import annotations

import math

import numpy as np

from sdpa_core.attention import MaskLike, scores_logits, softmax
from sdpa_core.validation import as_float_array, finite_real, positive_finite


def _matmul_to_shape(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a @ b`` summed over the batch axes along which an input of ``shape`` was broadcast.

    The summed axes join the contraction of a single matrix product, so a key or value shared
    across a batch (one set of keys for many examples) never has one gradient per example in
    memory.
    """
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    target = (1,) * (len(batch) + 2 - len(shape)) + shape[:-2]
    summed = [axis for axis, size in enumerate(batch) if target[axis] == 1 and size != 1]
    if not summed:
        return np.matmul(a, b).reshape(shape)
    kept = [axis for axis in range(len(batch)) if axis not in summed]
    penultimate, last = len(batch), len(batch) + 1
    kept_shape = tuple(batch[axis] for axis in kept)
    contraction = math.prod(batch[axis] for axis in summed) * a.shape[-1]
    # a as (*kept, rows, *summed, inner) and b as (*kept, *summed, inner, columns), so that
    # flattening (*summed, inner) makes one contraction.
    a_moved = np.broadcast_to(a, batch + a.shape[-2:]).transpose(*kept, penultimate, *summed, last)
    b_moved = np.broadcast_to(b, batch + b.shape[-2:]).transpose(*kept, *summed, penultimate, last)
    product = np.matmul(
        a_moved.reshape(*kept_shape, a.shape[-2], contraction),
        b_moved.reshape(*kept_shape, contraction, b.shape[-1]),
    )
    return product.reshape(shape)


def _logit_factor(d_k: int, scale: float | None, temperature: float) -> float:
    """The number the raw scores q·k are multiplied by: scale (1/√d_k if None) / temperature."""
    scale_value = 1.0 / math.sqrt(d_k) if scale is None else finite_real("scale", scale)
    return scale_value / positive_finite("temperature", temperature)


def attention_backward(
    q: np.typing.ArrayLike,
    k: np.typing.ArrayLike,
    v: np.typing.ArrayLike,
    grad_out: np.typing.ArrayLike,
    *,
    scale: float | None = None,
    temperature: float = 1.0,
    mask: MaskLike = None,
    bias: np.typing.ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(grad_q, grad_k, grad_v)`` of ``sum(attention(q, k, v, …)[0] * grad_out)``.

    This is the exact vector-Jacobian product of :func:`sdpa_core.attention.attention`'s
    output, through the softmax Jacobian, so a training loop can learn the projections that
    make q and k. Every argument but ``grad_out`` means what it means for ``attention`` (the
    bias is a constant and gets no gradient); ``grad_out`` has the output's shape
    (..., n_q, d_v). Each gradient has the shape of its input, summed over the batch
    dimensions that input was broadcast along. The weights are recomputed, in the forward's
    dtype (float32 if q, k and v are all float32, else float64), which the gradients share.
    A fully masked query row, whose output is the constant 0, gets zero gradient.

    Raises:
        ValueError: for anything ``attention`` refuses, and for a ``grad_out`` that is not
            finite or does not have the output's shape.
    """
    q_arr = as_float_array("q", q, finite=True)
    k_arr = as_float_array("k", k, finite=True)
    v_arr = as_float_array("v", v, finite=True)
    if v_arr.ndim < 2:
        raise ValueError(
            f"v must have at least 2 dimensions (tokens, features): got shape {v_arr.shape}"
        )
    dtype = np.result_type(q_arr, k_arr, v_arr)
    q_arr = q_arr.astype(dtype, copy=False)
    k_arr = k_arr.astype(dtype, copy=False)
    v_arr = v_arr.astype(dtype, copy=False)
    # scores_logits checks q and k, the scale, the temperature, the mask and the bias.
    logits = scores_logits(q_arr, k_arr, scale=scale, temperature=temperature, mask=mask, bias=bias)
    if k_arr.shape[-2] != v_arr.shape[-2]:
        raise ValueError(
            "k and v must have the same number of keys n_k: "
            f"got {k_arr.shape[-2]} and {v_arr.shape[-2]}"
        )
    try:
        batch = np.broadcast_shapes(logits.shape[:-2], v_arr.shape[:-2])
    except ValueError:
        raise ValueError(
            "the batch dimensions of q, k and v do not broadcast: "
            f"got {q_arr.shape[:-2]}, {k_arr.shape[:-2]} and {v_arr.shape[:-2]}"
        ) from None
    out_shape = (*batch, logits.shape[-2], v_arr.shape[-1])
    grad_arr = as_float_array("grad_out", grad_out, finite=True)
    if grad_arr.shape != out_shape:
        raise ValueError(f"grad_out must have the output's shape {out_shape}: got {grad_arr.shape}")
    grad_arr = grad_arr.astype(dtype, copy=False)

    weights = softmax(logits)
    weights_t = np.swapaxes(weights, -1, -2)
    grad_v = _matmul_to_shape(weights_t, grad_arr, v_arr.shape)
    # dS = P ⊙ (dP − rowsum(P ⊙ dP)), built in place in dP's buffer.
    grad_scores = np.matmul(grad_arr, np.swapaxes(v_arr, -1, -2))
    row_dot = np.einsum("...ij,...ij->...i", grad_scores, weights)[..., np.newaxis]
    grad_scores -= row_dot
    grad_scores *= weights
    grad_scores *= dtype.type(_logit_factor(q_arr.shape[-1], scale, temperature))
    grad_q = _matmul_to_shape(grad_scores, k_arr, q_arr.shape)
    grad_k = _matmul_to_shape(np.swapaxes(grad_scores, -1, -2), q_arr, k_arr.shape)
    return grad_q, grad_k, grad_v
