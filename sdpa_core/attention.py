"""Numerically stable softmax and scaled dot-product attention with masks and bias.

Both compute in float64 or float32 by default; ``dtype`` selects float16 or bfloat16 too
and ``stable=False`` drops the max subtraction, to show how the textbook formula overflows.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Literal

import numpy as np

from sdpa_core.precision import DTypeLike, accumulator_dtype, resolve_dtype, round_to_format
from sdpa_core.validation import as_float_array, finite_real, positive_finite, positive_int

MaskLike = np.ndarray | Literal["causal"] | None


def _softmax_inplace(scores: np.ndarray, axis: int) -> np.ndarray:
    """Softmax of ``scores`` along ``axis``, overwriting ``scores`` (which holds no NaN or +inf)."""
    row_max = scores.max(axis=axis, keepdims=True)
    # A row that is entirely -inf has max -inf; shifting by 0 keeps it -inf, so exp gives 0.
    row_max[~np.isfinite(row_max)] = 0
    scores -= row_max
    np.exp(scores, out=scores)
    row_sum = scores.sum(axis=axis, keepdims=True)
    row_sum[row_sum == 0] = 1
    scores /= row_sum
    return scores


def _softmax_in_format(work: np.ndarray, axis: int, *, stable: bool, fmt: np.dtype) -> np.ndarray:
    """Softmax along ``axis`` of ``work`` (values of the format ``fmt``, held in its
    accumulator dtype), overwriting it; returns the weights in the accumulator dtype.

    The subtraction, exp, the row sum and the division are each rounded to ``fmt``, so
    overflow gives inf and inf / inf gives NaN, as the format would; a row whose every exp
    underflows gives 0 / 0 = NaN. Only rows that are entirely ``-inf`` (fully masked) get
    zeros, by the core's convention.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        masked = np.isneginf(work).all(axis=axis, keepdims=True)
        if stable:
            row_max = work.max(axis=axis, keepdims=True)
            row_max[masked] = 0
            work -= row_max
            work = round_to_format(work, fmt)
        np.exp(work, out=work)
        work = round_to_format(work, fmt)
        row_sum = round_to_format(work.sum(axis=axis, keepdims=True), fmt)
        row_sum[masked] = 1
        work /= row_sum
        return round_to_format(work, fmt)


def _operand(array: np.ndarray, fmt: np.dtype | None, compute: np.dtype) -> np.ndarray:
    """``array`` in the ``compute`` dtype, rounded to the format ``fmt`` first when given."""
    if fmt is None:
        return array.astype(compute, copy=False)
    return round_to_format(array, fmt)


def softmax(
    x: np.typing.ArrayLike,
    axis: int = -1,
    *,
    stable: bool = True,
    dtype: DTypeLike | None = None,
) -> np.ndarray:
    """Numerically stable softmax of ``x`` along ``axis``.

    The row maximum is subtracted before exponentiating, so any finite input (logits of
    ±1e4 included) gives finite weights that sum to 1. ``-inf`` entries get weight exactly 0,
    and a row that is entirely ``-inf`` gives all zeros rather than NaN. Float32 input stays
    float32; anything else is computed in float64.

    ``dtype`` (float64, float32, float16 or bfloat16, as a name, type or dtype) rounds ``x``
    to that format and computes exp, the sum and the division in it, returning that dtype;
    ``stable=False`` is the textbook exp(x) / Σ exp(x) without the max subtraction. Either
    way overflow is not hidden: a logit above :func:`~sdpa_core.exp_overflow_threshold` gives
    inf, inf / inf gives NaN, and those are returned as they are, without warnings.

    Raises:
        ValueError: if ``x`` holds NaN or ``+inf``, ``axis`` is not an integer, is out of
            range or names an empty axis, or ``dtype`` is not one of the four formats.
    """
    array = as_float_array("x", x)
    if array.ndim == 0:
        raise ValueError("x must have at least one dimension: got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, Integral):
        raise ValueError(f"axis must be an integer: got {axis!r}")
    if not -array.ndim <= axis < array.ndim:
        raise ValueError(f"axis {axis} is out of range for an array with {array.ndim} dimensions")
    if array.shape[axis] == 0:
        raise ValueError(
            f"x must have at least one entry along axis {axis}: got shape {array.shape}"
        )
    if np.isposinf(array).any():
        raise ValueError(
            "x contains +inf: softmax needs finite logits or -inf for excluded entries"
        )
    if dtype is None and stable:
        return _softmax_inplace(array.copy(), axis)
    fmt = array.dtype if dtype is None else resolve_dtype(dtype)
    # Logits beyond the format's range become ±inf, as storing them in it would.
    work = round_to_format(array, fmt)
    if work is array:
        work = work.copy()
    return _softmax_in_format(work, axis, stable=stable, fmt=fmt).astype(fmt, copy=False)


def qk_normalise(rows: np.typing.ArrayLike) -> np.ndarray:
    """QK-norm: each row of ``rows`` (…, d) scaled to length √d, that is to unit RMS, as
    models normalise queries and keys before the dot product. Returns a new float array.

    Raises:
        ValueError: if ``rows`` is not a finite float array of at least one dimension with a
            non-zero last dimension, or a row is all zeros (it has no direction).
    """
    array = as_float_array("rows", rows)
    if array.ndim == 0 or array.shape[-1] == 0:
        raise ValueError(f"rows must have a non-empty last dimension: got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("rows must be finite")
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("rows must not be all zeros: a zero row has no direction to keep")
    return array * (math.sqrt(array.shape[-1]) / norms)


def causal_mask(n_q: int, n_k: int) -> np.ndarray:
    """Boolean (n_q, n_k) mask where True means "may attend": query i sees keys j ≤ i.

    The mask is aligned top-left, like PyTorch's ``is_causal=True``.
    """
    n_q = positive_int("n_q", n_q)
    n_k = positive_int("n_k", n_k)
    return np.tri(n_q, n_k, dtype=bool)


def _check_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
    for name, array in (("q", q), ("k", k), ("v", v)):
        if array.ndim < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (tokens, features): "
                f"got shape {array.shape}"
            )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dimension d_k: got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys n_k: got {k.shape[-2]} and {v.shape[-2]}"
        )
    if q.shape[-1] < 1:
        raise ValueError("d_k must be ≥ 1: q and k have an empty last dimension")
    if k.shape[-2] < 1:
        raise ValueError("n_k must be ≥ 1: k and v hold no keys, so there is nothing to attend to")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            "the batch dimensions of q, k and v do not broadcast: "
            f"got {q.shape[:-2]}, {k.shape[:-2]} and {v.shape[:-2]}"
        ) from None


def _resolve_mask(mask: MaskLike, scores_shape: tuple[int, ...]) -> np.ndarray | None:
    n_q, n_k = scores_shape[-2:]
    if mask is None:
        return None
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f'mask must be a boolean array, "causal" or None: got {mask!r}')
        return causal_mask(n_q, n_k)
    mask_array = np.asarray(mask)
    if mask_array.dtype != bool:
        raise ValueError(
            f"mask must be boolean (True means may attend): got dtype {mask_array.dtype}"
        )
    try:
        np.broadcast_shapes(mask_array.shape, scores_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask_array.shape} does not broadcast to the scores' shape "
            f"{scores_shape} (n_q={n_q}, n_k={n_k})"
        ) from None
    return mask_array


def scores_logits(
    q: np.typing.ArrayLike,
    k: np.typing.ArrayLike,
    *,
    scale: float | None = None,
    temperature: float = 1.0,
    mask: MaskLike = None,
    bias: np.typing.ArrayLike | None = None,
) -> np.ndarray:
    """The logits that attention's softmax sees: ``(q @ kᵀ) * scale / temperature + bias``.

    Masked-out entries (mask False) are ``-inf``. Arguments are as in :func:`attention`,
    which this function shares its validation with.
    """
    q_arr = as_float_array("q", q, finite=True)
    k_arr = as_float_array("k", k, finite=True)
    _check_shapes(q_arr, k_arr, k_arr)
    return _logits(q_arr, k_arr, scale, temperature, mask, bias)


def _logits(
    q: np.ndarray,
    k: np.ndarray,
    scale: float | None,
    temperature: float,
    mask: MaskLike,
    bias: np.typing.ArrayLike | None,
    fmt: np.dtype | None = None,
) -> np.ndarray:
    """The logits in q's dtype, or rounded to ``fmt`` after the matmul when it is given.

    Without ``fmt`` overflow raises; with it, it gives ±inf or NaN as the format would.
    """
    d_k = q.shape[-1]
    factor = (1.0 / math.sqrt(d_k) if scale is None else finite_real("scale", scale)) / (
        positive_finite("temperature", temperature)
    )
    # Overflow is either reported as a ValueError just below or the intended result (fmt),
    # so NumPy's warning is noise.
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.matmul(q, np.swapaxes(k, -1, -2))
        if fmt is None:
            if factor != 1.0:
                scores *= scores.dtype.type(factor)
        else:
            scores = round_to_format(scores, fmt)
            if factor != 1.0:
                scores *= round_to_format(np.array(factor), fmt)
                scores = round_to_format(scores, fmt)
    if fmt is None and not np.isfinite(scores).all():
        raise ValueError(
            "the scores overflowed to infinity: q, k or the scale are too large for their dtype"
        )
    if bias is not None:
        bias_arr = as_float_array("bias", bias)
        if np.isposinf(bias_arr).any():
            raise ValueError("bias contains +inf: use finite values, or -inf to exclude a key")
        try:
            np.broadcast_shapes(bias_arr.shape, scores.shape)
        except ValueError:
            raise ValueError(
                f"bias of shape {bias_arr.shape} does not broadcast to the scores' shape "
                f"{scores.shape}"
            ) from None
        with np.errstate(over="ignore", invalid="ignore"):
            scores = scores + _operand(bias_arr, fmt, scores.dtype)
            if fmt is not None:
                scores = round_to_format(scores, fmt)
        if fmt is None and np.isposinf(scores).any():
            raise ValueError("scores + bias overflowed to +inf: the bias is too large")
    resolved = _resolve_mask(mask, scores.shape)
    if resolved is not None:
        full_shape = np.broadcast_shapes(resolved.shape, scores.shape)
        if full_shape != scores.shape:
            # The mask carries batch dimensions the scores lack (e.g. one mask per head).
            scores = np.broadcast_to(scores, full_shape).copy()
        np.copyto(scores, -np.inf, where=~resolved)
    return scores


def attention(
    q: np.typing.ArrayLike,
    k: np.typing.ArrayLike,
    v: np.typing.ArrayLike,
    *,
    scale: float | None = None,
    temperature: float = 1.0,
    mask: MaskLike = None,
    bias: np.typing.ArrayLike | None = None,
    dtype: DTypeLike | None = None,
    stable: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention; returns ``(output, weights)``.

    ``weights = softmax((q @ kᵀ) * scale / temperature + bias)`` and ``output = weights @ v``.

    Args:
        q: queries, shape (..., n_q, d_k).
        k: keys, shape (..., n_k, d_k).
        v: values, shape (..., n_k, d_v). Leading batch dimensions broadcast.
        scale: multiplies the raw scores; ``None`` means 1/√d_k, ``1.0`` means unscaled.
        temperature: divides the logits; > 1 flattens the weights, < 1 sharpens them.
        mask: boolean array broadcastable to (..., n_q, n_k), True meaning "may attend"
            (PyTorch's convention), or ``"causal"`` (query i sees keys j ≤ i, top-left).
        bias: additive logits broadcastable to (..., n_q, n_k); ``-inf`` excludes a key.
        dtype: ``None``, or the format to compute in: float64, float32, float16 or bfloat16
            (a name, type or dtype). q, k, v and every intermediate are rounded to it; the
            two matrix products accumulate in float32 for the 16-bit formats, as GPU matrix
            units do. Both results are returned in it.
        stable: subtract each row's maximum before exponentiating (default); ``False`` is
            the textbook softmax, which overflows once a logit's exp exceeds the format.

    A query whose every key is masked gets all-zero weights and a zero output (PyTorch
    would give NaN). With ``dtype=None``, float32 inputs compute in float32, anything else
    in float64, and overflow in the scores raises; with a ``dtype`` it gives inf or NaN, as
    that format would, without warnings.

    Raises:
        ValueError: on mismatched shapes, no keys, NaN or infinite q, k or v, a temperature
            that is ≤ 0 or not finite, a non-finite scale, a mask of the wrong shape or dtype,
            a bias with NaN or +inf, an unknown ``dtype``, or (``dtype=None``) overflow.
    """
    q_arr = as_float_array("q", q, finite=True)
    k_arr = as_float_array("k", k, finite=True)
    # An infinite value would leak into the output as inf, or as NaN where its weight is 0.
    v_arr = as_float_array("v", v, finite=True)
    _check_shapes(q_arr, k_arr, v_arr)
    fmt = None if dtype is None else resolve_dtype(dtype)
    compute = np.result_type(q_arr, k_arr, v_arr) if fmt is None else accumulator_dtype(fmt)
    scores = _logits(
        _operand(q_arr, fmt, compute),
        _operand(k_arr, fmt, compute),
        scale,
        temperature,
        mask,
        bias,
        fmt,
    )
    v_compute = _operand(v_arr, fmt, compute)
    if fmt is None:
        if stable:
            weights = _softmax_inplace(scores, axis=-1)
        else:
            weights = _softmax_in_format(scores, -1, stable=False, fmt=compute)
        return np.matmul(weights, v_compute), weights
    weights = _softmax_in_format(scores, -1, stable=stable, fmt=fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        output = np.matmul(weights, v_compute)
    return output.astype(fmt, copy=False), weights.astype(fmt, copy=False)
