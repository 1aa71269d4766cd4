"""Two bytes per weight: how a large attention-weights image travels to the page.

A weights image of n×n float32 is 4 MiB at n = 1024, and every temperature, mask or
precision move resends it. Coded, each weight is a uint16 of its natural logarithm on a
fixed grid (:data:`STEPS_PER_UNIT` steps per unit of ln w, from ``ln w =`` :data:`LN_MAX`
down past float32's smallest weight), so every weight keeps the same relative precision,
~0.08 % (the one-hot weights of an unscaled row, 1e-30 and below, stay visible in the
hover instead of rounding to 0), and 1 decodes exactly. Three codes are reserved: +inf, 0
and NaN (a masked cell). The spec travels with each coded image (:func:`code_spec`), so
the page's decoder (app/page/assets/embedding.js) holds no constant of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

STEPS_PER_UNIT = 600
"""Codes per unit of ln w: neighbouring codes differ by a factor e^(1/600), 0.17 %."""

LN_MAX = 5.0
"""ln of the largest weight a code holds (e^5 ≈ 148; a softmax weight is at most 1, a
low-precision one a little more)."""

INF_CODE = 65533
ZERO_CODE = 65534
NAN_CODE = 65535
LAST_CODE = INF_CODE - 1
"""The largest code of a number: ln w = LN_MAX − 65532/600 ≈ −104.2, below float32's
smallest subnormal (ln 1.4e-45 ≈ −103.3)."""

CODE_NAME = "ln-uint16"
"""The codec's name, as a packed frame's text writes it."""


def code_spec() -> dict[str, object]:
    """The code as data for the page's decoder: its name, the grid and the reserved codes."""
    return {
        "name": CODE_NAME,
        "steps": STEPS_PER_UNIT,
        "lnMax": LN_MAX,
        "inf": INF_CODE,
        "zero": ZERO_CODE,
        "nan": NAN_CODE,
    }


def encode_weights(image: np.ndarray) -> np.ndarray:
    """``image`` (weights ≥ 0, NaN where masked) as flat uint16 codes.

    A negative or zero weight codes as 0, +inf as +inf, NaN as NaN; a weight above e^LN_MAX
    as e^LN_MAX (no softmax gives one)."""
    values = np.ascontiguousarray(image, dtype=np.float32).reshape(-1)
    # In place on one float32 array: at n = 1024 this runs on every temperature move.
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.log(values)
    np.subtract(np.float32(LN_MAX), steps, out=steps)
    np.multiply(steps, np.float32(STEPS_PER_UNIT), out=steps)
    # ln 0 = -inf gives +inf steps, ln inf = inf gives -inf, NaN (and a negative) stays NaN;
    # the reserved codes lie above every finite weight's (at most ~64,980).
    np.nan_to_num(steps, copy=False, nan=NAN_CODE, posinf=ZERO_CODE, neginf=INF_CODE)
    np.rint(steps, out=steps)
    np.clip(steps, 0, NAN_CODE, out=steps)
    codes = steps.astype(np.uint16)
    # fmin skips NaN (a masked cell), which min would return.
    if np.fmin.reduce(values, initial=0.0) < 0:
        codes[values < 0] = ZERO_CODE
    return codes


@functools.cache
def _table(steps: int, ln_max: float, inf: int, zero: int, nan: int) -> np.ndarray:
    table = np.exp(ln_max - np.arange(65536, dtype=np.float64) / steps).astype(np.float32)
    table[inf], table[zero], table[nan] = np.inf, 0.0, np.nan
    table.flags.writeable = False
    return table


def decode_weights(codes: np.ndarray, spec: Mapping[str, object] | None = None) -> np.ndarray:
    """The float32 weights ``codes`` stand for, under ``spec`` (:func:`code_spec` when None)."""
    spec = code_spec() if spec is None else spec
    table = _table(
        int(spec["steps"]),
        float(spec["lnMax"]),
        int(spec["inf"]),
        int(spec["zero"]),
        int(spec["nan"]),
    )
    return table[np.asarray(codes, dtype=np.uint16)]
