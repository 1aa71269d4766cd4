"""Input checks shared by the core: each raises a ValueError that says what was expected."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def as_float_array(name: str, value: object) -> np.ndarray:
    """Return ``value`` as a floating NumPy array, rejecting NaN and non-numeric input.

    Float32 and float64 arrays keep their dtype; integers and booleans become float64.
    """
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real numeric array: got dtype {array.dtype}")
    if array.dtype.kind != "f":
        array = array.astype(np.float64)
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN: every entry must be a number")
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
