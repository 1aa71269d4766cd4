"""Input checks shared by the core: each raises a ValueError that says what was expected."""

from __future__ import annotations

import math
from numbers import Integral, Real

import ml_dtypes
import numpy as np

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def as_float_array(name: str, value: object, *, finite: bool = False) -> np.ndarray:
    """Return ``value`` as a float32 or float64 NumPy array, rejecting NaN and non-numeric input.

    Float32 and float64 arrays keep their dtype; every other real dtype (integers, booleans,
    float16, bfloat16, long double) becomes float64, so callers compute in one of the two
    precisions their docstrings promise. With ``finite=True`` infinite entries are rejected too.
    """
    array = np.asarray(value)
    if array.dtype == _BFLOAT16:
        array = array.astype(np.float64)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real numeric array: got dtype {array.dtype}")
    if array.dtype not in (np.float32, np.float64):
        array = array.astype(np.float64)
    # One isfinite pass covers the common all-finite case; only a failure pays for the
    # second pass that tells NaN from inf apart for the message.
    if finite and np.isfinite(array).all():
        return array
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN: every entry must be a number")
    if finite:
        require_finite(name, array)
    return array


def require_finite(name: str, array: np.ndarray) -> None:
    """Raise if ``array`` holds an infinite entry (NaN is assumed already rejected)."""
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite: it contains an infinite entry")


def positive_int(name: str, value: object, *, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer ≥ {minimum}: got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}: got {value}")
    return int(value)


def positive_finite(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number > 0."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a positive finite number: got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} must be a positive finite number: got {number}")
    return number


def finite_real(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a finite number: got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number: got {number}")
    return number


def correlation(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a real number in [-1, 1], a valid correlation."""
    number = finite_real(name, value)
    if not -1.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a correlation in [-1, 1]: got {number}")
    return number


def qk_law(sigma_q: object, sigma_k: object, rho: object) -> tuple[float, float, float]:
    """Check the parameters of the (q_i, k_i) normal law: two positive finite standard
    deviations and a correlation in [-1, 1]; return them as floats."""
    return (
        positive_finite("sigma_q", sigma_q),
        positive_finite("sigma_k", sigma_k),
        correlation("rho", rho),
    )
