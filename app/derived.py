"""Pure functions from the simulation's controls to the arrays the views draw.

All numerics come from :mod:`sdpa_core`; this module only chooses what to compute, caches
what sessions can share (read-only), and converts to the float32 the browser receives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import sdpa_core
from app.cache import byte_budget_cache

SCORES_CACHE_BYTES = 128 * 2**20
"""Memory for the raw score matrices all sessions share, and as much again for their images:
16 at n = 1024 (8 MiB each), 512 at n = 256, thousands at the default n = 32."""

HISTOGRAM_BINS = 60
"""Bins of the dot-product histograms."""

HISTOGRAM_HALF_WIDTH = 4.5
"""Histograms span ±4.5 standard deviations of their theoretical normal law."""


@byte_budget_cache(SCORES_CACHE_BYTES, size_of=lambda scores: scores.nbytes)
def raw_scores(n: int, d_k: int, seed: int) -> np.ndarray:
    """The raw scores q·k (n×n, float64, read-only) of the app's sampled Q and K.

    Shared by all sessions: only n, d_k and the seed change them, so temperature, scale
    and mask changes never redo the matmul. The most recently used are kept, within
    :data:`SCORES_CACHE_BYTES`.
    """
    q, k = sdpa_core.sample_qk(n, d_k, seed)
    scores = sdpa_core.scores_logits(q, k, scale=1.0)
    scores.flags.writeable = False
    return scores


@dataclass(frozen=True)
class ScoreImages:
    """The raw and scaled score matrices as the heatmap draws them.

    Contiguous float32 (what Bokeh sends as binary) with NaN in masked cells, so they are
    drawn in the mask colour. The limits are the largest |score| of each (for the colour bar).
    """

    raw_image: np.ndarray
    scaled_image: np.ndarray
    raw_limit: float
    scaled_limit: float


@byte_budget_cache(
    SCORES_CACHE_BYTES,
    size_of=lambda images: images.raw_image.nbytes + images.scaled_image.nbytes,
)
def score_images(n: int, d_k: int, seed: int, causal: bool) -> ScoreImages:
    """Display images of the raw scores and of the scores / √d_k. Cached, shared, read-only."""
    raw = raw_scores(n, d_k, seed)
    mask = sdpa_core.causal_mask(n, n) if causal else None
    raw_image = _image(raw, mask)
    # max(max, -min) rather than abs().max(): no n×n temporary (8 MiB at n = 1024).
    raw_limit = float(max(raw.max(), -raw.min()))
    images = ScoreImages(
        raw_image=raw_image,
        # Scaled in float32 from the image: NaN stays NaN in masked cells.
        scaled_image=raw_image * np.float32(1.0 / math.sqrt(d_k)),
        raw_limit=raw_limit,
        scaled_limit=raw_limit / math.sqrt(d_k),
    )
    images.raw_image.flags.writeable = False
    images.scaled_image.flags.writeable = False
    return images


@dataclass(frozen=True)
class WeightsFrame:
    """Attention weights of one state and the collapse readouts computed from them.

    ``weights`` is the float64 truth (masked cells exactly 0); ``weights_image`` the float32
    copy the heatmap draws (masked cells NaN). ``uniform_entropy`` is the mean over rows of
    log(number of keys a row may attend to): the entropy of uniform attention, the maximum;
    ``uniform_max_weight`` the mean max weight of uniform attention, the minimum.
    """

    weights: np.ndarray
    weights_image: np.ndarray
    mean_max_weight: float
    mean_entropy: float
    uniform_entropy: float
    uniform_max_weight: float


def _softmax_weights(
    raw: np.ndarray, d_k: int, *, scaled: bool, temperature: float, mask: np.ndarray | None
) -> np.ndarray:
    """Softmax weights of raw scores, with the logits ``sdpa_core.attention`` would use.

    They equal ``attention(q, k, v, scale=1/√d_k or 1, temperature=..., mask=mask)[1]``
    for the q and k behind ``raw`` (the model tests check it); taking the raw scores lets
    a temperature or scale change skip the matmul.
    """
    scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
    logits = raw * (scale / temperature)
    if mask is not None:
        logits[~mask] = -np.inf
    return sdpa_core.softmax(logits)


def weights_frame(
    raw: np.ndarray, d_k: int, *, scaled: bool, temperature: float, causal: bool
) -> WeightsFrame:
    """Attention weights from raw scores for the given scale, temperature and mask."""
    n_q, n_k = raw.shape
    mask = sdpa_core.causal_mask(n_q, n_k) if causal else None
    weights = _softmax_weights(raw, d_k, scaled=scaled, temperature=temperature, mask=mask)
    visible_keys = mask.sum(axis=1) if mask is not None else np.full(n_q, n_k)
    return WeightsFrame(
        weights=weights,
        weights_image=_image(weights, mask),
        mean_max_weight=float(sdpa_core.max_weight(weights).mean()),
        mean_entropy=float(sdpa_core.row_entropy(weights).mean()),
        uniform_entropy=float(np.log(visible_keys).mean()),
        uniform_max_weight=float((1.0 / visible_keys).mean()),
    )


@dataclass(frozen=True)
class RowComparison:
    """One query's weights with and without the 1/√d_k scale, over the keys it may see."""

    row: int
    keys: np.ndarray
    scaled: np.ndarray
    unscaled: np.ndarray
    scaled_entropy: float
    unscaled_entropy: float


def row_comparison(
    raw: np.ndarray, row: int, d_k: int, *, temperature: float, causal: bool
) -> RowComparison:
    """Weights of query ``row`` (clamped to the matrix) scaled and unscaled, side by side."""
    row = min(max(int(row), 0), raw.shape[0] - 1)
    visible = row + 1 if causal else raw.shape[1]
    scores = raw[row : row + 1, :visible]
    scaled, unscaled = (
        _softmax_weights(scores, d_k, scaled=flag, temperature=temperature, mask=None)[0]
        for flag in (True, False)
    )
    return RowComparison(
        row=row,
        keys=np.arange(visible),
        scaled=scaled,
        unscaled=unscaled,
        scaled_entropy=float(sdpa_core.row_entropy(scaled)),
        unscaled_entropy=float(sdpa_core.row_entropy(unscaled)),
    )


OUTPUT_DIM = 8
"""d_v of the values the output view multiplies the weights with."""


@dataclass(frozen=True)
class OutputFrame:
    """The values V (n×d_v) and what attention returns, weights·V (n×d_v), as float32."""

    values_image: np.ndarray
    output_image: np.ndarray
    limit: float


def output_frame(weights: np.ndarray, seed: int) -> OutputFrame:
    """``weights @ V`` for the app's sampled values V; the limit is the largest |V| entry."""
    values = sdpa_core.sample_values(weights.shape[1], OUTPUT_DIM, seed)
    return OutputFrame(
        values_image=np.ascontiguousarray(values, dtype=np.float32),
        output_image=np.ascontiguousarray(weights @ values, dtype=np.float32),
        limit=float(np.abs(values).max()),
    )


def _image(values: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    image = np.ascontiguousarray(values, dtype=np.float32)
    if image is values:
        image = image.copy()
    if mask is not None:
        image[~mask] = np.nan
    return image


@dataclass(frozen=True)
class HistogramFrame:
    """A histogram of dot products against the density of its theoretical normal law."""

    left: np.ndarray
    right: np.ndarray
    density: np.ndarray
    curve_x: np.ndarray
    curve_y: np.ndarray
    std: float
    expected_std: float
    count: int


def _histogram_frame(values: np.ndarray, variance: float) -> HistogramFrame:
    half_width = HISTOGRAM_HALF_WIDTH * math.sqrt(variance)
    density, edges = sdpa_core.histogram(values, HISTOGRAM_BINS, (-half_width, half_width))
    curve_x = np.linspace(-half_width, half_width, 241)
    return HistogramFrame(
        left=edges[:-1],
        right=edges[1:],
        density=density,
        curve_x=curve_x,
        curve_y=sdpa_core.normal_pdf(curve_x, variance),
        std=float(np.std(values, dtype=np.float64)),
        expected_std=math.sqrt(variance),
        count=int(values.size),
    )


@lru_cache(maxsize=1024)
def dot_product_histograms(d_k: int, seed: int) -> tuple[HistogramFrame, HistogramFrame]:
    """Histograms of the 10,000 pooled raw dot products (against Normal(0, d_k)) and of the
    same dot products divided by √d_k (against Normal(0, 1)). Cached (1024 pairs, ~10 KiB
    each: every slider position for many seeds) and shared."""
    raw = sdpa_core.dot_product_pool(d_k, seed)
    scaled = raw / np.float32(math.sqrt(d_k))
    return _histogram_frame(raw, float(d_k)), _histogram_frame(scaled, 1.0)
