"""Statistics of scores and attention weights: densities, histograms, collapse measures."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sdpa_core.attention import scores_logits, softmax
from sdpa_core.validation import as_float_array, positive_finite, positive_int


def normal_pdf(x: np.typing.ArrayLike, var: float) -> np.ndarray:
    """Density of Normal(0, ``var``) at ``x``; the theoretical law of raw q·k is Normal(0, d_k).

    Raises:
        ValueError: if ``var`` is not a positive finite number or ``x`` holds NaN.
    """
    var = positive_finite("var", var)
    x_arr = as_float_array("x", x)
    return np.exp(-0.5 * x_arr * x_arr / var) / math.sqrt(2.0 * math.pi * var)


def histogram(
    values: np.typing.ArrayLike, bins: int, value_range: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of ``values`` over ``bins`` equal bins of ``value_range``, as a density.

    Returns ``(density, edges)`` with ``len(edges) == bins + 1``. The density is normalised
    by the total number of values (not only those inside the range), so it can be drawn
    against a probability density and a clipped tail shows as missing area.

    Raises:
        ValueError: for an empty ``values``, ``bins`` < 1, or a ``value_range`` that is not a
            pair of numbers, or is empty or non-finite.
    """
    bins = positive_int("bins", bins)
    array = as_float_array("values", values).ravel()
    if array.size == 0:
        raise ValueError("values must not be empty")
    try:
        low, high = (float(bound) for bound in value_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"value_range must be a (low, high) pair of numbers: got {value_range!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"value_range must be finite with low < high: got ({low}, {high})")
    counts, edges = np.histogram(array, bins=bins, range=(low, high))
    density = counts / (array.size * (high - low) / bins)
    return density, edges


def _check_weights(weights: np.typing.ArrayLike) -> np.ndarray:
    array = as_float_array("weights", weights)
    if array.ndim == 0:
        raise ValueError("weights must have at least one dimension: got a scalar")
    if array.shape[-1] == 0:
        raise ValueError("weights must have at least one key per row")
    if (array < 0).any():
        raise ValueError("weights must be non-negative probabilities")
    return array


def row_entropy(weights: np.typing.ArrayLike) -> np.ndarray:
    """Shannon entropy in nats of each row (last axis) of ``weights``; 0·log 0 counts as 0.

    A uniform row over n keys has entropy log n, a one-hot row 0.
    """
    p = _check_weights(weights)
    # log only where p > 0 (0 elsewhere, so 0·log 0 adds 0), and the row sums of p·log p as
    # one einsum: 3-4× faster than np.where over p·log p, which the app pays on every move.
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)
    return np.maximum(-np.einsum("...i,...i->...", p, log_p), 0.0)


def max_weight(weights: np.typing.ArrayLike) -> np.ndarray:
    """Largest weight of each row (last axis): 1/n for a uniform row, 1 for a one-hot row."""
    return _check_weights(weights).max(axis=-1)


def softmax_jacobian_norm(weights: np.typing.ArrayLike) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian ``diag(p) − p pᵀ`` of each row p (last axis).

    It is the size of the gradient that flows back through the softmax: sqrt(1/n − 1/n²)
    for a uniform row, 0 for a one-hot row. Closed form, without building the n×n matrix,
    arranged so that a nearly one-hot row (the collapse this project shows) keeps full
    relative precision: with m the row's largest entry and r = Σ_{j≠m} p_j²,
    ``‖J‖²_F = Σ p_i²(1 − p_i)² + 2 p_m² r + (r² − Σ_{j≠m} p_j⁴)``.
    """
    p = _check_weights(weights)
    p2 = p * p
    # Diagonal part Σ (p_i − p_i²)²: 1 − p_i is exact for p_i ≥ 1/2, so no cancellation.
    diagonal = (p2 * (1.0 - p) ** 2).sum(axis=-1)
    # Off-diagonal part Σ_{i≠j} p_i² p_j². The textbook (Σp²)² − Σp⁴ subtracts two numbers
    # near 1 when a row collapses, leaving ~1e-8 absolute error in the norm; splitting off
    # the largest entry keeps every remaining term a sum of non-negative parts.
    top = np.argmax(p, axis=-1)[..., np.newaxis]
    top2 = np.take_along_axis(p2, top, axis=-1)[..., 0]
    others2 = p2.copy()
    np.put_along_axis(others2, top, 0.0, axis=-1)
    rest = others2.sum(axis=-1)
    among_others = np.maximum(rest * rest - (others2 * others2).sum(axis=-1), 0.0)
    return np.sqrt(diagonal + 2.0 * top2 * rest + among_others)


@dataclass(frozen=True)
class Band:
    """A Monte-Carlo statistic per d_k: the mean and its 10 % and 90 % quantiles."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class CollapseCurve:
    """Collapse statistics of softmax attention against d_k (see :func:`collapse_curve`)."""

    d_values: np.ndarray
    entropy: Band
    max_weight: Band
    jacobian_norm: Band


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _band(per_trial: np.ndarray) -> Band:
    low, high = np.quantile(per_trial, [0.1, 0.9], axis=1)
    # The band is shared through the cache: a caller writing into it would corrupt every
    # later call with the same arguments.
    return Band(_read_only(per_trial.mean(axis=1)), _read_only(low), _read_only(high))


@lru_cache(maxsize=64)
def _collapse_scores(d_k: int, n: int, trials: int, seed: int) -> np.ndarray:
    # Raw q·k of `trials` independent (n, d_k) draws: the only costly part of a curve
    # point, shared by both scale settings and every temperature. One generator per d_k,
    # so a point does not depend on which others were asked for. 8·trials·n² bytes each.
    rng = np.random.default_rng([seed, d_k, n, trials])
    q, k = rng.standard_normal((2, trials, n, d_k))
    return _read_only(scores_logits(q, k, scale=1.0))


COLLAPSE_CURVE_CACHE_SIZE = 128
"""Curves :func:`collapse_curve` keeps (each a few kB): enough for a slider's few dozen
temperatures with the scale on and off, so a class sweeping them computes each once."""


@lru_cache(maxsize=COLLAPSE_CURVE_CACHE_SIZE)
def _collapse_curve(
    d_values: tuple[int, ...], n: int, trials: int, scaled: bool, temperature: float, seed: int
) -> CollapseCurve:
    entropy, peak, jacobian = (np.empty((len(d_values), trials)) for _ in range(3))
    for row, d_k in enumerate(d_values):
        scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
        weights = softmax(_collapse_scores(d_k, n, trials, seed) * (scale / temperature))
        entropy[row] = row_entropy(weights).mean(axis=-1)
        peak[row] = max_weight(weights).mean(axis=-1)
        jacobian[row] = softmax_jacobian_norm(weights).mean(axis=-1)
    return CollapseCurve(
        d_values=_read_only(np.asarray(d_values)),
        entropy=_band(entropy),
        max_weight=_band(peak),
        jacobian_norm=_band(jacobian),
    )


def collapse_curve(
    d_values: np.typing.ArrayLike,
    n: int,
    trials: int,
    *,
    scaled: bool,
    temperature: float = 1.0,
    seed: int = 0,
) -> CollapseCurve:
    """Monte-Carlo collapse statistics of softmax attention over standard-normal Q and K.

    For each d_k in ``d_values``, ``trials`` independent draws of (n, d_k) queries and keys
    give per-draw means over rows of the entropy (nats), the max weight and the softmax
    Jacobian norm; each statistic is returned as its mean over draws and its 10–90 % band.
    Unscaled (``scaled=False``), entropy and gradient fall towards 0 as d_k grows; scaled,
    they stay flat. Results are cached (the :data:`COLLAPSE_CURVE_CACHE_SIZE` most recent
    argument sets) and read-only, and so are the sampled scores behind each point (64 most
    recent (d_k, n, trials, seed), 8·trials·n² bytes each): another temperature or scale
    costs a softmax, not a resample.

    Raises:
        ValueError: for an empty or non-integer ``d_values``, any d_k, ``n`` or ``trials``
            < 1, or a temperature that is not a positive finite number.
    """
    d_tuple = tuple(
        positive_int("d_k", int(d) if isinstance(d, float) and d.is_integer() else d)
        for d in np.asarray(d_values).ravel().tolist()
    )
    if not d_tuple:
        raise ValueError("d_values must hold at least one d_k")
    return _collapse_curve(
        d_tuple,
        positive_int("n", n),
        positive_int("trials", trials),
        bool(scaled),
        positive_finite("temperature", temperature),
        positive_int("seed", seed, minimum=0),
    )
