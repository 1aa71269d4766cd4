"""Floating-point formats the core can compute attention in, and how a result compares.

The lesson computes in float64, where nothing overflows. Real accelerators hold scores and
weights in float32, float16 or bfloat16; this module names those formats, says where their
exponential overflows, and measures how far a result in one of them is from float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

PRECISIONS = ("float64", "float32", "float16", "bfloat16")
"""Names of the formats :func:`sdpa_core.softmax` and :func:`sdpa_core.attention` accept."""

_FORMATS = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
}

DTypeLike = np.dtype | type | str


def resolve_dtype(dtype: DTypeLike) -> np.dtype:
    """The NumPy dtype of one of the formats in :data:`PRECISIONS`, given as a dtype, a type
    (``np.float16``, ``ml_dtypes.bfloat16``) or its name, so every caller spells it alike.

    Raises:
        ValueError: if ``dtype`` is none of float64, float32, float16 and bfloat16.
    """
    if isinstance(dtype, str):
        resolved = _FORMATS.get(dtype)
    else:
        try:
            resolved = np.dtype(dtype)  # type: ignore[arg-type]
        except TypeError:
            resolved = None
        if resolved not in _FORMATS.values():
            resolved = None
    if resolved is None:
        raise ValueError(
            f"dtype must be one of {', '.join(PRECISIONS)} (a name, type or NumPy dtype): "
            f"got {dtype!r}"
        )
    return resolved


def accumulator_dtype(dtype: DTypeLike) -> np.dtype:
    """The format sums and matrix products in ``dtype`` accumulate in before rounding.

    float16 and bfloat16 accumulate in float32, as GPU matrix units and NumPy's float16 sum
    do (summing many small terms in a 16-bit accumulator would lose them outright); float32
    and float64 accumulate in themselves.
    """
    resolved = resolve_dtype(dtype)
    return np.dtype(np.float32) if resolved.itemsize == 2 else resolved


def _round_to_float16(x: np.ndarray) -> np.ndarray:
    """Float32 or float64 ``x`` rounded to the nearest float16 value (ties to even, beyond the
    maximum to ±inf, subnormals included), kept in x's dtype: ``x.astype(float16)`` and back,
    without NumPy's float16 casts, which are scalar loops and several times slower."""
    info = np.finfo(x.dtype)
    uint = np.uint32 if x.dtype == np.float32 else np.uint64
    drop = info.nmant - 10
    bits = x.view(uint)
    # Round the significand to 10 bits in place: add half an ulp (minus one unless the kept
    # last bit is odd, so ties go to even), then clear the dropped bits; a carry moves the
    # exponent up, as rounding should.
    bits = bits + (uint((1 << (drop - 1)) - 1) + ((bits >> uint(drop)) & uint(1)))
    bits &= ~uint((1 << drop) - 1)
    out = bits.view(x.dtype)
    # Rounded up to 2**16 or beyond: float16 has no such number, so ±inf. (Boolean indexing
    # rather than np.where: both cases are rare, and where is a full pass over the array.)
    huge = np.abs(out) >= 65536.0
    if huge.any():
        out[huge] = np.copysign(np.inf, out[huge])
    tiny = np.abs(x) < 2.0**-14
    if tiny.any():
        # Float16's subnormals are the multiples of 2**-24: round in fixed point, by adding a
        # constant whose ulp in x's dtype is 2**-24.
        shift = x.dtype.type(1.5 * 2.0 ** (info.nmant - 24))
        out[tiny] = (x[tiny] + shift) - shift
    return out


def round_to_format(x: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """Float32 or float64 ``x`` rounded to the format ``dtype``, held in its
    :func:`accumulator_dtype` so the next operation can run there and be rounded again.

    This is how the core emulates a 16-bit format: compute in float32, round every result
    to the format (double rounding through float32 is exact for +, −, × and ÷ of 16-bit
    values). Values beyond the format's range become ±inf, without warnings.
    """
    fmt = resolve_dtype(dtype)
    compute = accumulator_dtype(fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == np.float16:
            return _round_to_float16(x).astype(compute, copy=False)
        return x.astype(fmt, copy=False).astype(compute, copy=False)


def exp_overflow_threshold(dtype: DTypeLike) -> float:
    """The largest x whose exp(x) is finite in ``dtype``: the log of the format's maximum.

    Above it exp overflows to inf, so softmax without the max subtraction breaks on any row
    holding such a logit.
    """
    return math.log(float(ml_dtypes.finfo(resolve_dtype(dtype)).max))


@dataclass(frozen=True)
class PrecisionReport:
    """How a result computed in a low-precision format compares with its float64 reference.

    ``nan`` and ``inf`` count the result's non-finite entries out of ``size``;
    ``max_abs_error`` is the largest |result − reference| over the entries where both are
    finite (NaN when there is no such entry).
    """

    size: int
    nan: int
    inf: int
    max_abs_error: float

    @property
    def non_finite(self) -> int:
        """How many entries are NaN or ±inf."""
        return self.nan + self.inf


def precision_report(
    values: np.typing.ArrayLike, reference: np.typing.ArrayLike
) -> PrecisionReport:
    """Count the non-finite entries of ``values`` and measure its largest absolute difference
    from ``reference`` (e.g. the same weights in float64), so a view can say what a format cost.

    Raises:
        ValueError: if the two do not have the same shape or are not real numeric arrays.
    """
    result = np.asarray(values)
    expected = np.asarray(reference)
    for name, array in (("values", result), ("reference", expected)):
        if array.dtype.kind not in "biuf" and array.dtype != _FORMATS["bfloat16"]:
            raise ValueError(f"{name} must be a real numeric array: got dtype {array.dtype}")
    if result.shape != expected.shape:
        raise ValueError(
            f"values and reference must have the same shape: got {result.shape} and "
            f"{expected.shape}"
        )
    result = result.astype(np.float64)
    expected = expected.astype(np.float64)
    finite = np.isfinite(result)
    both = finite & np.isfinite(expected)
    max_abs_error = float(np.abs(result[both] - expected[both]).max()) if both.any() else math.nan
    nan = int(np.isnan(result).sum())
    return PrecisionReport(
        size=int(result.size),
        nan=nan,
        inf=int(result.size - finite.sum()) - nan,
        max_abs_error=max_abs_error,
    )
