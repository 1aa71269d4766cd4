"""The lesson's "When the assumptions break" section, what both pages show of it: its words,
its groups of controls, its readouts (other variances, correlated q and k, QK-norm, the
softmax's precision and max subtraction) and their templates.

The served page draws it with app/served/components/assumptions.py, the offline page with
app/page/assumptions.py.
"""

from __future__ import annotations

import math

import sdpa_core
from app.page.views.readouts import MISSING, READOUT_TEXTS, TILE_HTML, readout_number, readout_tile
from app.simulation.model import HISTOGRAMS, SimulationModel
from app.simulation.parts import expected_moments, law_of
from app.simulation.spec import ASSUMPTION_CONTROLS, CONTROL_BY_NAME

ASSUMPTIONS_TITLE = "When the assumptions break: variance, correlation, precision; CSV data"
"""The section's button, on both pages."""

HEADING = "### When the assumptions break"
"""The section's heading (Markdown), above :data:`LAW_TEXT`."""

LAW_TEXT = """\
Dividing by √d_k gives the scores a spread of 1 only if every entry of q and k has
variance 1 and q and k are independent: then Var[q·k] = d_k. With standard deviations
**σ_q**, **σ_k** and a correlation **ρ** between q_i and k_i, the dot product has mean
ρ·d_k·σ_q·σ_k and variance d_k·σ_q²·σ_k²·(1 + ρ²): the scaled scores spread by
σ_q·σ_k·√(1 + ρ²), and the softmax collapses again at large σ. Models do not rely on
the assumption: **QK-norm** (as in ViT-22B and OLMo 2) normalises each query and key to
length √d_k before the dot product, which restores the spread whatever the σ. The
histogram with the sliders is the scaled one of the plots above: watch its bars leave
Normal(0, 1) as you move them.
"""
"""Above the law's controls and their histogram: what σ_q, σ_k, ρ and QK-norm change."""

PRECISION_TEXT = """\
The softmax's exponential is the other weak point. exp(x) overflows above
x ≈ 709.8 in float64 but above 88.7 in float32 and bfloat16 and only 11.1 in float16:
unscaled scores at d_k = 1024 reach 100 and more, so the textbook exp(x) / Σ exp(x)
gives inf / inf = NaN. Every framework therefore **subtracts the row max** first (the
weights do not change, and the largest exp is 1); the tiles with these controls count
the weights that overflowed, and the heatmap marks them in red. Here the logits are
computed in float64 and rounded to the chosen format, then exp, the row sum and the
division run in it.
"""
"""Above the softmax's controls and their readouts: the format and the max subtraction."""

LAW_CONTROLS = tuple(
    name for name in ASSUMPTION_CONTROLS if HISTOGRAMS in CONTROL_BY_NAME[name].feeds
)
"""The section's controls that move the law of q·k (the histograms), top to bottom."""

PRECISION_CONTROLS = tuple(name for name in ASSUMPTION_CONTROLS if name not in LAW_CONTROLS)
"""The section's controls that change only how the softmax computes, top to bottom."""

READOUT_GROUPS = {
    "law": ("law-mean", "law-std"),
    "precision": ("largest-logit", "precision-non-finite", "precision-error"),
}
"""The readout tiles shown beside each group of controls (by tile id), in order: the law's
under its histogram, the softmax's beside its switches."""

GROUP_BASIS = (280, 360)
"""Narrowest widths of a group's controls and of what they change, side by side: below their
sum the figure goes directly under its controls."""

SECTION_CSS = ".assumptions-readouts { margin: 4px 0; }"
"""The readouts' spacing within the section (both pages)."""


ASSUMPTION_TEXTS = {
    "tile": TILE_HTML,
    "section": '<div class="readouts assumptions-readouts">{tiles}</div>',
    "missing": MISSING,
    "mean_label": "mean of raw q·k",
    "mean": "{value:.3g}",
    "mean_reference": "expected ρ·d_k·σ_q·σ_k",
    "qk_norm_mean_reference": "expected ρ·d_k (QK-norm)",
    "std_label": READOUT_TEXTS["std_scaled_label"],
    "std": "{value:.2f}",
    "std_reference": "expected {expected:.2f} (raw {raw:.3g})",
    "logit_label": "largest logit",
    "logit": "{value:.4g}",
    "logit_reference": "exp overflows above {threshold:.1f} in {precision}",
    # The readouts' own words for the same two numbers (app.page.views.readouts).
    "non_finite_label": READOUT_TEXTS["non_finite_label"],
    "non_finite": READOUT_TEXTS["non_finite"],
    "non_finite_reference": "of {size:,}",
    "error_label": READOUT_TEXTS["error_label"],
    "error": READOUT_TEXTS["error"],
    "error_reference": READOUT_TEXTS["error_reference"],
}
"""Every word, number format and piece of markup of the section's readouts, as
``str.format`` templates with named fields; what it shares with the readouts (the tile, the
dash, the precision tiles' words) is theirs. The offline page receives them as data
(``config["assumptions"]["texts"]``) and assumptions.js fills them as :meth:`str.format`
does."""


def finite_readout(template: str, value: float) -> str:
    """``value`` written by ``template``, or the dash when it is not finite."""
    return MISSING if not math.isfinite(value) else template.format(value=value)


def assumptions_html(model: SimulationModel, group: str | None = None) -> str:
    """The section's readouts: the law of q·k (expected vs measured) and the softmax's
    overflow in the chosen format, as HTML built from numbers only; with ``group`` (a key
    of :data:`READOUT_GROUPS`), that group's tiles only."""
    state, weights = model.state, model.weights
    texts = ASSUMPTION_TEXTS
    law = law_of(state)
    mean, variance = expected_moments(state.d_k, law)
    raw, scaled = model.raw_histogram, model.scaled_histogram
    report = weights.precision_report
    threshold = sdpa_core.exp_overflow_threshold(state.precision)
    non_finite = report.non_finite if report is not None else 0
    size = report.size if report is not None else weights.weights.size
    error = report.max_abs_error if report is not None else 0.0
    tiles = {
        "law-mean": (
            texts["mean_label"],
            finite_readout(texts["mean"], float(mean)),
            texts["mean_reference"] if not law.qk_norm else texts["qk_norm_mean_reference"],
        ),
        "law-std": (
            texts["std_label"],
            texts["std"].format(value=scaled.std),
            texts["std_reference"].format(
                expected=math.sqrt(variance / state.d_k), raw=raw.expected_std
            ),
        ),
        "largest-logit": (
            texts["logit_label"],
            finite_readout(texts["logit"], weights.max_logit),
            texts["logit_reference"].format(threshold=threshold, precision=state.precision),
        ),
        "precision-non-finite": (
            texts["non_finite_label"],
            texts["non_finite"].format(value=non_finite),
            texts["non_finite_reference"].format(size=size),
        ),
        "precision-error": (
            texts["error_label"],
            readout_number(texts["error"], error),
            texts["error_reference"],
        ),
    }
    shown = READOUT_GROUPS[group] if group is not None else tuple(tiles)
    return texts["section"].format(tiles="".join(readout_tile(key, *tiles[key]) for key in shown))
