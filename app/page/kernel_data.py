"""The numbers an exported page carries: Q/K pools, dot-product rows and the slider grids.

Everything here comes from :mod:`sdpa_core` (and the grids from :mod:`app.simulation.spec`),
so the page computes from exactly the samples the server uses.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass

import numpy as np

import sdpa_core
from app.simulation.spec import D_K_BOUNDS, D_K_GRID, N_BOUNDS, N_GRID, SEED_BOUNDS
from sdpa_core.sampling import DOT_POOL_MAX_D, DOT_POOL_PAIRS

N_MAX_DEFAULT = 128
"""Largest sequence length an exported page offers by default."""

D_MAX_DEFAULT = 512
"""Largest d_k an exported page offers by default."""

D_K_STEPS_PER_OCTAVE = 4
"""d_k slider positions per octave in the page: every other position of the served app's
grid (which has eight), because each position costs one 40 kB row of dot products."""


def _quarter_octaves(d_max: int) -> set[int]:
    top = math.ceil(math.log2(d_max) * D_K_STEPS_PER_OCTAVE)
    return {round(2 ** (i / D_K_STEPS_PER_OCTAVE)) for i in range(top + 1)}


def d_k_positions(d_max: int) -> list[int]:
    """The d_k slider positions of a page that goes up to ``d_max``.

    A subset of the served app's grid (so a shared link's d_k usually lands on one), with
    ``d_max`` itself as the last position so the whole range is reachable.
    """
    steps = _quarter_octaves(d_max)
    positions = [d for d in D_K_GRID if d <= d_max and d in steps]
    return positions if positions[-1] == d_max else [*positions, d_max]


def n_positions(n_max: int) -> list[int]:
    """The sequence-length slider positions: the served app's grid up to ``n_max``."""
    positions = [n for n in N_GRID if n <= n_max]
    return positions if positions[-1] == n_max else [*positions, n_max]


N_MAX_BOUNDS = (3, N_BOUNDS[1])
"""Allowed n_max: at least two slider positions (2 and 3), at most the served app's n."""

D_MAX_BOUNDS = (2, min(D_K_BOUNDS[1], DOT_POOL_MAX_D))
"""Allowed d_max: at least two slider positions, at most what the dot-product pool covers."""


def check_limits(n_max: int, d_max: int, seed: int) -> None:
    """Raise ValueError unless the export limits are integers the page and core can serve."""
    for name, number, (low, high) in (
        ("n_max", n_max, N_MAX_BOUNDS),
        ("d_max", d_max, D_MAX_BOUNDS),
        ("seed", seed, SEED_BOUNDS),
    ):
        if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
            raise ValueError(f"{name} must be a whole number from {low} to {high}: got {number!r}")


@dataclass(frozen=True)
class ExportData:
    """The samples embedded in a page, in the dtypes and layouts the page decodes.

    ``q`` and ``k`` are float32 (n_max, d_max), row-major: the first n_max tokens and d_max
    dimensions of ``sdpa_core.sample_qk`` (nested, so every n ≤ n_max and d_k ≤ d_max is a
    top-left block). ``dot`` holds one row per entry of ``d_values``: the 10,000 raw dot
    products of ``sdpa_core.dot_product_pool(d, seed)``, float32 exactly as the core has them.
    """

    seed: int
    n_max: int
    d_max: int
    d_values: list[int]
    n_values: list[int]
    q: np.ndarray
    k: np.ndarray
    dot: np.ndarray


def build_export_data(n_max: int, d_max: int, seed: int) -> ExportData:
    """Sample what a page with these limits needs, from the core's seeded pools."""
    check_limits(n_max, d_max, seed)
    q, k = sdpa_core.sample_qk(n_max, d_max, seed)
    d_values = d_k_positions(d_max)
    dot = np.stack([sdpa_core.dot_product_pool(d, seed) for d in d_values])
    return ExportData(
        seed=seed,
        n_max=n_max,
        d_max=d_max,
        d_values=d_values,
        n_values=n_positions(n_max),
        q=np.ascontiguousarray(q, dtype=np.float32),
        k=np.ascontiguousarray(k, dtype=np.float32),
        dot=np.ascontiguousarray(dot, dtype=np.float32),
    )


FIXED_CONTROLS = ("seed",)
"""Controls the samples fix, each to the :class:`ExportData` field of its name: the page
offers no widget for them, keeps the exported value (a link asking for another gets a
notice) and writes it into its URL."""


def slider_grids(data: ExportData) -> dict[str, list[int]]:
    """Slider positions of the controls the samples limit, by control name (the others keep
    their spec's grid): d_k moves over the steps that have dot products, n up to n_max."""
    return {"d_k": data.d_values, "n": data.n_values}


FIT_NOTICES = {
    "largest": (
        "{name} = {value} is above {largest}, the largest {name} this offline page carries; "
        "using {largest}."
    ),
    "steps": "{name} = {value} is not one of this offline page's {name} steps; using {nearest}.",
    "fixed": (
        "{name} = {value}: this offline page was exported with {name} {fixed}, "
        "so it keeps that one."
    ),
}
"""The notice for a valid value the samples lack, by the limit that moved it (the keys of
:func:`sample_limits`), as ``str.format`` templates: query.js fills them with text.js's
``fill``. The numbers come written as query.js writes them (a whole number in full,
another as ``.6g``); only the offline page has these notices."""


def sample_limits(data: ExportData) -> dict[str, dict]:
    """What the samples can show, by control name, for query.js to fit a link's values to.

    ``largest``: the largest value carried; ``steps``: the only values carried (d_k: one
    row of dot products each); ``fixed``: the one value carried (the seed the samples
    were drawn with); ``notices``: the notice for each of these fits (:data:`FIT_NOTICES`).
    """
    return {
        "largest": {"d_k": data.d_max, "n": data.n_max},
        "steps": {"d_k": data.d_values},
        "fixed": {name: getattr(data, name) for name in FIXED_CONTROLS},
        "notices": dict(FIT_NOTICES),
    }


def encode_float32(array: np.ndarray) -> str:
    """Base64 of the little-endian float32 bytes of ``array`` (what the page decodes)."""
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode("ascii")


def payload(data: ExportData) -> dict[str, object]:
    """The samples as a JSON-ready dict: shapes, grids and base64 float32 arrays."""
    return {
        "seed": data.seed,
        "n_max": data.n_max,
        "d_max": data.d_max,
        "pairs": DOT_POOL_PAIRS,
        "d_values": data.d_values,
        "n_values": data.n_values,
        "q": encode_float32(data.q),
        "k": encode_float32(data.k),
        "dot": encode_float32(data.dot),
    }
