"""Pure functions from the simulation's controls to the arrays the views draw.

All numerics come from :mod:`sdpa_core`; this module only chooses what to compute, caches
what sessions can share (read-only), and converts to the float32 the browser receives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

import sdpa_core
from app.simulation.cache import byte_budget_cache

SCORES_CACHE_BYTES = 128 * 2**20
"""Memory for the raw score matrices all sessions share, and as much again for their images:
16 at n = 1024 (8 MiB each), 512 at n = 256, thousands at the default n = 32."""

HISTOGRAM_BINS = 60
"""Bins of the dot-product histograms."""

HISTOGRAM_HALF_WIDTH = 4.5
"""Histograms span ±4.5 standard deviations of their theoretical normal law."""


class QKLaw(NamedTuple):
    """How the queries and keys are drawn: each entry's standard deviations, the correlation
    of q_i with k_i, and whether each row is normalised (QK-norm) before the dot product."""

    sigma_q: float = 1.0
    sigma_k: float = 1.0
    rho: float = 0.0
    qk_norm: bool = False


LESSON_LAW = QKLaw()
"""The lesson's assumptions: unit variances, independent q and k, no normalisation."""


Values = Mapping[str, object]
"""The controls' values by the spec's names (what :meth:`SimulationState.control_values`
returns): what every part function reads."""


def law_of(state: object) -> QKLaw:
    """The :class:`QKLaw` of a state's controls (``sigma_q``, ``sigma_k``, ``rho``,
    ``qk_norm``): of a state (its attributes) or of the controls' values (a mapping)."""
    # The views hand a state, the model its values mapping: read either by the same names.
    get = state.__getitem__ if isinstance(state, Mapping) else state.__getattribute__
    return QKLaw(
        float(get("sigma_q")), float(get("sigma_k")), float(get("rho")), bool(get("qk_norm"))
    )


def _law_args(law: QKLaw) -> tuple[QKLaw, ...]:
    """``(law,)``, or ``()`` for the lesson's law: the caches then key the lesson's entries
    as they always have, ``(n, d_k, seed)``, whoever asks for them."""
    return () if law == LESSON_LAW else (QKLaw(*law),)


def expected_moments(d_k: int, law: QKLaw = LESSON_LAW) -> tuple[float, float]:
    """Mean and variance of the raw q·k behind the histogram, for ``law``.

    Without QK-norm they are :func:`sdpa_core.dot_product_moments`' exact ones. With it,
    q·k = d_k·cos θ, whose law no longer depends on the σ: for a large d_k it is close to
    Normal(ρ·d_k, d_k·(1 − ρ²)²), the delta method's law of an (uncentred) sample
    correlation, and exactly of variance d_k at ρ = 0.
    """
    if law.qk_norm:
        return law.rho * d_k, d_k * (1.0 - law.rho * law.rho) ** 2
    return sdpa_core.dot_product_moments(d_k, sigma_q=law.sigma_q, sigma_k=law.sigma_k, rho=law.rho)


@byte_budget_cache(SCORES_CACHE_BYTES, size_of=lambda scores: scores.nbytes)
def raw_scores(n: int, d_k: int, seed: int, law: QKLaw = LESSON_LAW) -> np.ndarray:
    """The raw scores q·k (n×n, float64, read-only) of the app's sampled Q and K.

    Shared by all sessions: only n, d_k, the seed and the law of Q and K (σ_q, σ_k, ρ,
    QK-norm; pass it only when it is not the lesson's, see :func:`scores_for`) change them,
    so temperature, scale, mask and precision changes never redo the matmul. The most
    recently used are kept, within :data:`SCORES_CACHE_BYTES`.
    """
    q, k = sdpa_core.sample_qk(n, d_k, seed, sigma_q=law.sigma_q, sigma_k=law.sigma_k, rho=law.rho)
    if law.qk_norm:
        q, k = sdpa_core.qk_normalise(q), sdpa_core.qk_normalise(k)
    scores = sdpa_core.scores_logits(q, k, scale=1.0)
    scores.flags.writeable = False
    return scores


def scores_for(n: int, d_k: int, seed: int, law: QKLaw = LESSON_LAW) -> np.ndarray:
    """:func:`raw_scores`, keyed as the lesson's entries always were when ``law`` is the
    lesson's."""
    return raw_scores(n, d_k, seed, *_law_args(law))


def scores_of(values: Values) -> np.ndarray:
    """The raw scores of the controls' ``values`` (n, d_k, seed and the law of Q and K)."""
    return scores_for(int(values["n"]), int(values["d_k"]), int(values["seed"]), law_of(values))


def scale_factor(d_k: int) -> np.float32:
    """1/√d_k in float32: the scaled scores image is the raw one times it, in float32 (so
    the page can rebuild it exactly from the raw image, app/page/frames.py)."""
    return np.float32(1.0 / math.sqrt(d_k))


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
def score_images(n: int, d_k: int, seed: int, causal: bool, law: QKLaw = LESSON_LAW) -> ScoreImages:
    """Display images of the raw scores and of the scores / √d_k. Cached, shared, read-only.

    Pass ``law`` only when it is not the lesson's (:func:`images_for` does)."""
    raw = scores_for(n, d_k, seed, law)
    mask = sdpa_core.causal_mask(n, n) if causal else None
    raw_image = masked_image(raw, mask)
    # max(max, -min) rather than abs().max(): no n×n temporary (8 MiB at n = 1024).
    raw_limit = float(max(raw.max(), -raw.min()))
    images = ScoreImages(
        raw_image=raw_image,
        # Scaled in float32 from the image: NaN stays NaN in masked cells.
        scaled_image=raw_image * scale_factor(d_k),
        raw_limit=raw_limit,
        scaled_limit=raw_limit / math.sqrt(d_k),
    )
    images.raw_image.flags.writeable = False
    images.scaled_image.flags.writeable = False
    return images


def images_for(values: Values) -> ScoreImages:
    """The scores part of the controls' ``values``: :func:`score_images` of their n, d_k,
    seed, mask and law, keyed as the lesson's entries always were for its law."""
    law = _law_args(law_of(values))
    n, d_k, seed = int(values["n"]), int(values["d_k"]), int(values["seed"])
    return score_images(n, d_k, seed, bool(values["causal"]), *law)


@dataclass(frozen=True)
class WeightsFrame:
    """Attention weights of one state and the collapse readouts computed from them.

    ``weights`` is the float64 truth (masked cells exactly 0); ``weights_image`` the float32
    copy the heatmap draws (masked cells NaN). ``uniform_entropy`` is the mean over rows of
    log(number of keys a row may attend to): the entropy of uniform attention, the maximum;
    ``uniform_max_weight`` the mean max weight of uniform attention, the minimum.

    ``precision`` and ``stable`` say how the softmax was computed; ``precision_report``
    compares its weights with the float64, stable ones (non-finite weights, largest
    difference); ``overflow`` is True where a weight is inf or NaN (None when none is).
    The max weight and entropy are means over the rows whose weights are all finite
    (NaN when no row is).
    """

    weights: np.ndarray
    weights_image: np.ndarray
    mean_max_weight: float
    mean_entropy: float
    uniform_entropy: float
    uniform_max_weight: float
    precision: str = "float64"
    stable: bool = True
    precision_report: sdpa_core.PrecisionReport | None = None
    overflow: np.ndarray | None = field(default=None, repr=False)
    max_logit: float = math.nan

    @property
    def non_finite(self) -> int:
        """How many weights are inf or NaN."""
        return self.precision_report.non_finite if self.precision_report else 0


def _logits(
    raw: np.ndarray, d_k: int, *, scaled: bool, temperature: float, mask: np.ndarray | None
) -> np.ndarray:
    """The logits ``sdpa_core.attention`` would use for the q and k behind ``raw`` (a new
    float64 array, -inf in masked cells)."""
    scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
    logits = raw * (scale / temperature)
    if mask is not None:
        logits[~mask] = -np.inf
    return logits


def _softmax_weights(
    raw: np.ndarray, d_k: int, *, scaled: bool, temperature: float, mask: np.ndarray | None
) -> np.ndarray:
    """Softmax weights of raw scores, with the logits ``sdpa_core.attention`` would use.

    They equal ``attention(q, k, v, scale=1/√d_k or 1, temperature=..., mask=mask)[1]``
    for the q and k behind ``raw`` (the model tests check it); taking the raw scores lets
    a temperature or scale change skip the matmul.
    """
    logits = _logits(raw, d_k, scaled=scaled, temperature=temperature, mask=mask)
    return sdpa_core.softmax(logits)


def _row_means(weights: np.ndarray, overflow: np.ndarray | None) -> tuple[float, float]:
    """Mean max weight and mean entropy over the rows whose weights are all finite
    (``overflow``: where a weight is not, None when every weight is)."""
    if overflow is not None:
        weights = weights[~overflow.any(axis=1)]
        if weights.size == 0:
            return math.nan, math.nan
    return (
        float(sdpa_core.max_weight(weights).mean()),
        float(sdpa_core.row_entropy(weights).mean()),
    )


def weights_frame(raw: np.ndarray, values: Values) -> WeightsFrame:
    """The weights part: attention weights from raw scores for the scale, temperature,
    mask and softmax that the controls' ``values`` set (``d_k``, ``scaled``,
    ``temperature``, ``causal``, ``precision``, ``subtract_max``).

    ``precision`` and ``subtract_max`` choose how the softmax computes: the float64 logits
    are rounded to that format and exp, the row sum and the division computed in it
    (``sdpa_core.softmax(logits, stable=, dtype=)``), with or without the row max
    subtracted; overflow is kept as inf or NaN. Float64 with the max subtracted (also what
    ``values`` without them mean) is the lesson's softmax, bit for bit.
    """
    d_k, scaled = int(values["d_k"]), bool(values["scaled"])
    temperature, causal = float(values["temperature"]), bool(values["causal"])
    # Absent from a spec without the assumptions' controls: the lesson's softmax.
    precision = str(values.get("precision", "float64"))
    stable = bool(values.get("subtract_max", True))
    n_q, n_k = raw.shape
    mask = sdpa_core.causal_mask(n_q, n_k) if causal else None
    logits = _logits(raw, d_k, scaled=scaled, temperature=temperature, mask=mask)
    max_logit = float(logits.max())
    if precision == "float64" and stable:
        weights = sdpa_core.softmax(logits)
        report = sdpa_core.PrecisionReport(size=int(weights.size), nan=0, inf=0, max_abs_error=0.0)
        overflow = None
    else:
        reference = sdpa_core.softmax(logits)
        weights = sdpa_core.softmax(logits, stable=stable, dtype=precision).astype(np.float64)
        report = sdpa_core.precision_report(weights, reference)
        overflow = ~np.isfinite(weights) if report.non_finite else None
    visible_keys = mask.sum(axis=1) if mask is not None else np.full(n_q, n_k)
    mean_max_weight, mean_entropy = _row_means(weights, overflow)
    return WeightsFrame(
        weights=weights,
        weights_image=masked_image(weights, mask),
        mean_max_weight=mean_max_weight,
        mean_entropy=mean_entropy,
        uniform_entropy=float(np.log(visible_keys).mean()),
        uniform_max_weight=float((1.0 / visible_keys).mean()),
        precision=precision,
        stable=stable,
        precision_report=report,
        overflow=overflow,
        max_logit=max_logit,
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


def row_comparison(raw: np.ndarray, values: Values) -> RowComparison:
    """The row part: weights of query ``row`` of the controls' ``values`` (clamped to the
    matrix) scaled and unscaled, side by side, at their ``d_k``, ``temperature`` and mask."""
    d_k, temperature, causal = int(values["d_k"]), float(values["temperature"]), values["causal"]
    row = min(max(int(values["row"]), 0), raw.shape[0] - 1)
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


def output_frame(weights: np.ndarray, controls: Values) -> OutputFrame:
    """The output part: ``weights @ V`` for the app's values V sampled with the ``seed`` of
    the controls' values ``controls``; the limit is the largest |V| entry."""
    values = sdpa_core.sample_values(weights.shape[1], OUTPUT_DIM, int(controls["seed"]))
    return OutputFrame(
        values_image=np.ascontiguousarray(values, dtype=np.float32),
        output_image=np.ascontiguousarray(weights @ values, dtype=np.float32),
        limit=float(np.abs(values).max()),
    )


def masked_image(values: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """A float32 copy of ``values`` for the heatmap, NaN where ``mask`` hides a cell (the
    causal mask; assumptions.js builds the same image in the browser)."""
    image = np.ascontiguousarray(values, dtype=np.float32)
    if image is values:
        image = image.copy()
    if mask is not None:
        image[~mask] = np.nan
    return image


@dataclass(frozen=True)
class HistogramFrame:
    """A histogram of dot products against the density of its theoretical normal law,
    Normal(``expected_mean``, ``expected_std``²)."""

    left: np.ndarray
    right: np.ndarray
    density: np.ndarray
    curve_x: np.ndarray
    curve_y: np.ndarray
    std: float
    expected_std: float
    count: int
    expected_mean: float = 0.0

    @property
    def counts(self) -> np.ndarray:
        """How many values fall in each bin (the density times the count and bin width)."""
        return np.rint(self.density * self.count * (self.right - self.left)).astype(np.int64)


def _histogram_frame(values: np.ndarray, variance: float, mean: float = 0.0) -> HistogramFrame:
    half_width = HISTOGRAM_HALF_WIDTH * math.sqrt(variance)
    low, high = mean - half_width, mean + half_width
    density, edges = sdpa_core.histogram(values, HISTOGRAM_BINS, (low, high))
    curve_x = np.linspace(low, high, 241)
    return HistogramFrame(
        left=edges[:-1],
        right=edges[1:],
        density=density,
        curve_x=curve_x,
        curve_y=sdpa_core.normal_pdf(curve_x - mean, variance),
        std=float(np.std(values, dtype=np.float64)),
        expected_std=math.sqrt(variance),
        count=int(values.size),
        expected_mean=mean,
    )


@lru_cache(maxsize=1024)
def dot_product_histograms(
    d_k: int, seed: int, law: QKLaw = LESSON_LAW
) -> tuple[HistogramFrame, HistogramFrame]:
    """Histograms of the 10,000 pooled raw dot products (against Normal(0, d_k)) and of the
    same dot products divided by √d_k (against Normal(0, 1)). Cached (1024 pairs, ~10 KiB
    each: every slider position for many seeds) and shared.

    Under another ``law`` (pass it only when it is not the lesson's:
    :func:`histograms_for` does) the curves are Normal(mean, variance) of
    :func:`expected_moments`, and that law divided by √d_k.
    """
    raw = sdpa_core.dot_product_pool(d_k, seed, **law._asdict())
    scaled = raw / np.float32(math.sqrt(d_k))
    if law == LESSON_LAW:
        return _histogram_frame(raw, float(d_k)), _histogram_frame(scaled, 1.0)
    mean, variance = expected_moments(d_k, law)
    root = math.sqrt(d_k)
    return (
        _histogram_frame(raw, variance, mean),
        _histogram_frame(scaled, variance / d_k, mean / root),
    )


def histograms_ready(seed: int, law: QKLaw = LESSON_LAW) -> bool:
    """Whether :func:`histograms_for` at ``seed`` under ``law`` reads only tables already
    built (``sdpa_core.dot_product_pool_ready``): a new seed's tables take about half a
    second to build."""
    return sdpa_core.dot_product_pool_ready(seed, rho=law.rho, qk_norm=law.qk_norm)


def histograms_for(values: Values) -> tuple[HistogramFrame, HistogramFrame]:
    """The histograms part of the controls' ``values``: :func:`dot_product_histograms` of
    their d_k, seed and law, keyed as the lesson's entries always were for its law."""
    law = _law_args(law_of(values))
    return dot_product_histograms(int(values["d_k"]), int(values["seed"]), *law)
