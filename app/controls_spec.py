"""The controls as data: bounds, defaults and log-scale slider grids."""

from __future__ import annotations

import math

D_K_BOUNDS = (1, 1024)
TEMPERATURE_BOUNDS = (0.05, 20.0)
N_BOUNDS = (2, 1024)
SEED_BOUNDS = (0, 2**32 - 1)
ROW_BOUNDS = (0, 1023)

D_K_DEFAULT = 64
TEMPERATURE_DEFAULT = 1.0
N_DEFAULT = 32

VIEWS = {
    "weights": "attention weights",
    "scaled": "scaled scores",
    "raw": "raw scores",
}
"""Heatmap views: URL value → what it shows, in words."""


def _log_int_grid(low: int, high: int, per_octave: int) -> list[int]:
    """Integers from ``low`` to ``high``, evenly spaced on a log scale, with every power of two."""
    octaves = math.log2(high / low)
    steps = round(octaves * per_octave)
    values = {round(low * 2 ** (i / per_octave)) for i in range(steps + 1)}
    values |= {2**p for p in range(math.ceil(math.log2(low)), int(math.log2(high)) + 1)}
    return sorted(v for v in values if low <= v <= high)


D_K_GRID = _log_int_grid(*D_K_BOUNDS, per_octave=8)
"""d_k slider positions: eight per octave on a log scale, with every power of two."""

N_GRID = _log_int_grid(*N_BOUNDS, per_octave=8)
"""Sequence-length slider positions: eight per octave on a log scale."""

TEMPERATURE_GRID = [
    0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0,
]  # fmt: skip
"""Temperature slider positions: round numbers on a roughly log scale from 0.05 to 20."""


def nearest_on_grid(value: float, grid: list) -> float:
    """The grid position closest to ``value`` on a log scale (grids hold positive numbers)."""
    target = math.log(value)
    return min(grid, key=lambda option: abs(math.log(option) - target))
