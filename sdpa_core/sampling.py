"""Seeded sampling of queries, keys and dot products.

Two kinds of sampling live here:

* :func:`sample_dot_products` is the lesson's experiment, drawing fresh pairs from a
  caller's generator.
* :func:`sample_qk` and :func:`dot_product_pool` serve the app: nested, deterministic
  samples from shared, read-only, bounded caches, so moving a slider never reshuffles
  the picture and never resamples.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from sdpa_core.validation import positive_int, qk_law

QK_BLOCK = 64
"""Side of the square blocks Q and K pools are generated in (tokens × dimensions)."""

QK_POOL_SEEDS = 4
"""How many seeds' Q/K pools are kept; the least recently used one is dropped."""

DOT_POOL_PAIRS = 10_000
"""Number of (q, k) pairs behind the app's dot-product histogram, as in the lesson."""

DOT_POOL_MAX_D = 1024
"""Largest d_k the dot-product pool covers."""


def _seed(seed: object) -> int:
    return positive_int("seed", seed, minimum=0)


def _is_lesson_law(sigma_q: float, sigma_k: float, rho: float) -> bool:
    """Whether (σ_q, σ_k, ρ) is the lesson's law: unit variances, no correlation."""
    return sigma_q == 1.0 and sigma_k == 1.0 and rho == 0.0


def _correlate(
    q: np.ndarray, k: np.ndarray, sigma_q: float, sigma_k: float, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal q, k mapped to q' = σ_q·q, k' = σ_k·(ρ·q + √(1−ρ²)·k) (new arrays)."""
    q_out = q * sigma_q
    k_out = k * (sigma_k * math.sqrt((1.0 - rho) * (1.0 + rho)))
    if rho != 0.0:
        k_out += q * (sigma_k * rho)
    return q_out, k_out


def sample_dot_products(
    d_k: int,
    n_pairs: int = 10_000,
    rng: np.random.Generator | None = None,
    *,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    rho: float = 0.0,
) -> np.ndarray:
    """Draw ``n_pairs`` independent (q, k) pairs of dimension ``d_k``; return q·k.

    This is the lesson's experiment, draw for draw: ``q, k = rng.normal(size=(2, n_pairs,
    d_k))``. The result has mean ≈ 0 and standard deviation ≈ √d_k. With
    ``rng = np.random.default_rng(0)``, calling it for d_k=4 and then d_k=1024 on the same
    generator gives standard deviations that round to 2.0 and 32.0 (1.0 and 1.0 once divided
    by √d_k).

    ``sigma_q``, ``sigma_k`` and ``rho`` relax the lesson's assumptions: the same draw is
    mapped to q' = σ_q·q and k' = σ_k·(ρ·q + √(1−ρ²)·k), so each (q'_i, k'_i) has those
    standard deviations and correlation ρ (see :func:`sdpa_core.dot_product_moments`). The
    generator is consumed identically whatever they are, and the defaults give exactly the
    lesson's values.

    Raises:
        ValueError: if ``d_k`` or ``n_pairs`` is not an integer ≥ 1, a sigma is not a
            positive finite number or ``rho`` is not in [-1, 1].
    """
    d_k = positive_int("d_k", d_k)
    n_pairs = positive_int("n_pairs", n_pairs)
    law = qk_law(sigma_q, sigma_k, rho)
    if rng is None:
        rng = np.random.default_rng()
    q, k = rng.normal(size=(2, n_pairs, d_k))
    if not _is_lesson_law(*law):
        q, k = _correlate(q, k, *law)
    return (q * k).sum(axis=1)


def _qk_block(seed: int, matrix: int, token_block: int, dim_block: int) -> np.ndarray:
    rng = np.random.default_rng([seed, matrix, token_block, dim_block])
    return rng.standard_normal((QK_BLOCK, QK_BLOCK))


class _QKPools:
    """Per-seed Q and K pools that grow in whole blocks; shared, read-only, LRU-bounded."""

    def __init__(self, max_seeds: int) -> None:
        self._max_seeds = max_seeds
        self._pools: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, seed: int, n: int, d_k: int) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            pools = self._pools.get(seed)
            if pools is None or pools[0].shape[0] < n or pools[0].shape[1] < d_k:
                have_n, have_d = pools[0].shape if pools is not None else (0, 0)
                pools = (
                    self._build(seed, 0, max(n, have_n), max(d_k, have_d)),
                    self._build(seed, 1, max(n, have_n), max(d_k, have_d)),
                )
                self._pools[seed] = pools
            self._pools.move_to_end(seed)
            while len(self._pools) > self._max_seeds:
                self._pools.popitem(last=False)
            return pools

    @staticmethod
    def _build(seed: int, matrix: int, n: int, d_k: int) -> np.ndarray:
        token_blocks = -(-n // QK_BLOCK)
        dim_blocks = -(-d_k // QK_BLOCK)
        pool = np.empty((token_blocks * QK_BLOCK, dim_blocks * QK_BLOCK))
        for i in range(token_blocks):
            for j in range(dim_blocks):
                pool[i * QK_BLOCK : (i + 1) * QK_BLOCK, j * QK_BLOCK : (j + 1) * QK_BLOCK] = (
                    _qk_block(seed, matrix, i, j)
                )
        pool.flags.writeable = False
        return pool


_QK_POOLS = _QKPools(QK_POOL_SEEDS)


def sample_qk(
    n: int,
    d_k: int,
    seed: int = 0,
    *,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    rho: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Nested, deterministic normal queries and keys, each of shape (n, d_k).

    Entry (i, j) of Q (and of K) depends only on the seed, i and j: increasing ``d_k`` adds
    dimensions to the same tokens, increasing ``n`` adds tokens, so a slider move never
    reshuffles what is on screen. Entries are generated in 64×64 blocks, each from its own
    ``np.random.default_rng([seed, matrix, token_block, dim_block])``, so any size works.

    The returned arrays are read-only views of float64 pools shared by every caller. The
    pools of a seed grow to the largest (n, d_k) asked for, rounded up to 64: 2 × 8 bytes
    × n × d_k, that is 16 MiB per seed at n = d_k = 1024. At most :data:`QK_POOL_SEEDS`
    seeds are kept (least recently used dropped): 64 MiB in all at that size.

    With the defaults the entries are standard normal. Other ``sigma_q``, ``sigma_k`` or
    ``rho`` map the same pools to Q' = σ_q·Q and K' = σ_k·(ρ·Q + √(1−ρ²)·K), entry by
    entry: each (q'_ij, k'_ij) then has standard deviations σ_q, σ_k and correlation ρ, and
    a move of any of the three is a rescale of what is on screen, never a resample. Those
    are new read-only arrays of the same shape; the defaults return the pools' views.

    Raises:
        ValueError: if ``n`` or ``d_k`` is not an integer ≥ 1, ``seed`` not one ≥ 0, a
            sigma is not a positive finite number or ``rho`` is not in [-1, 1].
    """
    n = positive_int("n", n)
    d_k = positive_int("d_k", d_k)
    law = qk_law(sigma_q, sigma_k, rho)
    q_pool, k_pool = _QK_POOLS.get(_seed(seed), n, d_k)
    q, k = q_pool[:n, :d_k], k_pool[:n, :d_k]
    if _is_lesson_law(*law):
        return q, k
    q, k = _correlate(q, k, *law)
    q.flags.writeable = False
    k.flags.writeable = False
    return q, k


@lru_cache(maxsize=16)
def _values(n: int, d_v: int, seed: int) -> np.ndarray:
    values = _QKPools._build(seed, 2, n, d_v)[:n, :d_v].copy()
    values.flags.writeable = False
    return values


def sample_values(n: int, d_v: int, seed: int = 0) -> np.ndarray:
    """Nested, deterministic standard-normal values V of shape (n, d_v) for the same seed.

    Drawn like :func:`sample_qk` (same 64×64 blocks, a third stream beside Q and K), so V
    nests the same way: more tokens or dimensions extend the same matrix. Read-only; the
    16 most recent (n, d_v, seed) are cached (128 KiB each at n = 1024, d_v = 16).

    Raises:
        ValueError: if ``n`` or ``d_v`` is not an integer ≥ 1, or ``seed`` not one ≥ 0.
    """
    return _values(positive_int("n", n), positive_int("d_v", d_v), _seed(seed))


def _prefix_table(products: np.ndarray) -> np.ndarray:
    """Read-only float32 table whose row d-1 sums ``products`` over its first d columns.

    Overwrites ``products``. Row-major per d_k, so each d_k is one contiguous row.
    """
    np.cumsum(products, axis=1, out=products)
    table = products.T.astype(np.float32, order="C")
    table.flags.writeable = False
    return table


class _RecentTables:
    """One table per seed, built by ``build`` on first use; the ``keep`` most recently
    used are kept. Shared and read-only; thread-safe, and a table is built outside the
    lock, so a thread building one (~0.5 s: 20 M normal draws and their prefix sums, with
    the GIL released) never holds up a reader of another."""

    def __init__(self, build: Callable[[int], np.ndarray], keep: int = 2) -> None:
        self._build = build
        self._keep = keep
        self._tables: OrderedDict[int, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, seed: int) -> np.ndarray:
        with self._lock:
            table = self._tables.get(seed)
            if table is not None:
                self._tables.move_to_end(seed)
                return table
        table = self._build(seed)
        with self._lock:
            # Two threads may have built the same seed: the first one kept wins.
            table = self._tables.setdefault(seed, table)
            self._tables.move_to_end(seed)
            while len(self._tables) > self._keep:
                self._tables.popitem(last=False)
        return table

    def holds(self, seed: int) -> bool:
        """Whether the table of ``seed`` is built (a call is then a lookup)."""
        with self._lock:
            return seed in self._tables


def _build_dot_product_table(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, DOT_POOL_PAIRS, DOT_POOL_MAX_D))
    np.multiply(q, k, out=q)
    del k
    return _prefix_table(q)


def _build_square_norm_table(seed: int) -> np.ndarray:
    # The first half of the lesson's draw is q: the same stream, without drawing k.
    q = np.random.default_rng(seed).normal(size=(DOT_POOL_PAIRS, DOT_POOL_MAX_D))
    np.square(q, out=q)
    return _prefix_table(q)


def _build_key_square_norm_table(seed: int) -> np.ndarray:
    # The second half of the lesson's draw is k: skip q in chunks (the stream is the same
    # whatever the chunk size), then square and sum k.
    rng = np.random.default_rng(seed)
    chunk = 500
    for _ in range(0, DOT_POOL_PAIRS, chunk):
        rng.normal(size=(chunk, DOT_POOL_MAX_D))
    table = np.empty((DOT_POOL_MAX_D, DOT_POOL_PAIRS), dtype=np.float32)
    for start in range(0, DOT_POOL_PAIRS, chunk):
        k = rng.normal(size=(chunk, DOT_POOL_MAX_D))
        np.square(k, out=k)
        np.cumsum(k, axis=1, out=k)
        table[:, start : start + chunk] = k.T
    table.flags.writeable = False
    return table


_dot_product_table = _RecentTables(_build_dot_product_table)
_square_norm_table = _RecentTables(_build_square_norm_table)
_key_square_norm_table = _RecentTables(_build_key_square_norm_table)


def dot_product_pool_ready(seed: int = 0, *, rho: float = 0.0, qk_norm: bool = False) -> bool:
    """Whether :func:`dot_product_pool` for ``seed`` (under correlation ``rho``, with or
    without QK-norm) is a lookup now: every table it reads is built. Building one takes
    about half a second (see :func:`dot_product_pool`), so a server asking for a new seed
    can do it off the thread that serves everyone else. Invalid arguments: False (the
    call itself raises)."""
    try:
        seed = _seed(seed)
    except ValueError:
        return False
    ready = _dot_product_table.holds(seed)
    if qk_norm:
        return ready and _square_norm_table.holds(seed) and _key_square_norm_table.holds(seed)
    return ready and (rho == 0.0 or _square_norm_table.holds(seed))


def _normalised_pool(d_k: int, seed: int, rho: float) -> np.ndarray:
    """The pooled pairs' q̂·k̂ = d_k·q'·k' / (|q'|·|k'|) under correlation ``rho`` (the σ
    cancel), from the q·k, q·q and k·k tables: float32, rounded once from float64."""
    c = math.sqrt((1.0 - rho) * (1.0 + rho))
    q_dot_k = _dot_product_table(seed)[d_k - 1].astype(np.float64)
    q_dot_q = _square_norm_table(seed)[d_k - 1].astype(np.float64)
    k_dot_k = _key_square_norm_table(seed)[d_k - 1].astype(np.float64)
    qk = rho * q_dot_q + c * q_dot_k
    kk = rho * rho * q_dot_q + 2.0 * rho * c * q_dot_k + c * c * k_dot_k
    # |q'|²·|k'|² is ≥ 0, but rounded from the float32 tables it can come out a hair below
    # zero when k' nearly cancels (at d_k = 1 a pair or two per seed and ρ): floored, the
    # quotient then tends to ±d_k, which Cauchy–Schwarz bounds it by in any case.
    norms = np.sqrt(np.maximum(q_dot_q * kk, np.finfo(np.float64).tiny))
    values = np.clip(d_k * qk / norms, -d_k, d_k).astype(np.float32)
    values.flags.writeable = False
    return values


def dot_product_pool(
    d_k: int,
    seed: int = 0,
    *,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    rho: float = 0.0,
    qk_norm: bool = False,
) -> np.ndarray:
    """The raw dot products of 10,000 fixed (q, k) pairs over their first ``d_k`` dimensions.

    The pairs are the lesson's draw ``q, k = default_rng(seed).normal(size=(2, 10_000,
    1024))``; a table of prefix sums over dimensions makes every d_k a lookup, not a
    resample, so the histogram changes smoothly as d_k moves. At d_k = 1024 the values equal
    ``sample_dot_products(1024, 10_000, np.random.default_rng(seed))`` (to float32
    precision). With seed 0 the standard deviation rounds to 2.0 at d_k = 4 and 32.0 at
    d_k = 1024, the lesson's numbers.

    ``sigma_q``, ``sigma_k`` and ``rho`` give the dot products of the same pairs mapped as
    in :func:`sample_dot_products`: q'·k' = σ_q·σ_k·(ρ·q·q + √(1−ρ²)·q·k), a lookup in the
    q·k table (and, for ρ ≠ 0, in a second table of prefix sums of q·q) and a rescale. The
    values equal ``sample_dot_products(d_k, 10_000, default_rng(seed), sigma_q=…,
    sigma_k=…, rho=…)`` at d_k = 1024, to float32 precision.

    ``qk_norm`` normalises each q' and k' to length √d_k first (QK-norm, as
    :func:`sdpa_core.qk_normalise` does): the values are d_k·q'·k' / (|q'|·|k'|), which no
    longer depend on the σ; a third table, of k·k, gives |k'|.

    Each table is float32, 1024 × 10,000 × 4 bytes = 39 MiB per seed, built on first use;
    the two most recently used seeds are kept. With the defaults the result is a read-only
    float32 view of the q·k table; otherwise a new read-only float32 array.

    Raises:
        ValueError: if ``d_k`` is not an integer in [1, 1024], ``seed`` not one ≥ 0, a
            sigma is not a positive finite number or ``rho`` is not in [-1, 1].
    """
    d_k = positive_int("d_k", d_k)
    if d_k > DOT_POOL_MAX_D:
        raise ValueError(f"d_k must be ≤ {DOT_POOL_MAX_D} for the dot-product pool: got {d_k}")
    seed = _seed(seed)
    sigma_q, sigma_k, rho = qk_law(sigma_q, sigma_k, rho)
    if not isinstance(qk_norm, bool | np.bool_):
        raise ValueError(f"qk_norm must be True or False: got {qk_norm!r}")
    if qk_norm:
        return _normalised_pool(d_k, seed, rho)
    q_dot_k = _dot_product_table(seed)[d_k - 1]
    if _is_lesson_law(sigma_q, sigma_k, rho):
        return q_dot_k
    scale = sigma_q * sigma_k
    # Combined in float64 and rounded to float32 once.
    values = q_dot_k.astype(np.float64) * (scale * math.sqrt((1.0 - rho) * (1.0 + rho)))
    if rho != 0.0:
        values += _square_norm_table(seed)[d_k - 1] * (scale * rho)
    values = values.astype(np.float32)
    values.flags.writeable = False
    return values
