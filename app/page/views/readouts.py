"""Number readouts: the spread of the dot products and how collapsed the softmax is."""

from __future__ import annotations

import math

from app.simulation.model import SimulationModel
from app.simulation.parts import LESSON_LAW, law_of
from app.simulation.spec import ONE_HOT_THRESHOLD, UNIFORM_ENTROPY_FRACTION

READOUT_CSS = """
.readouts { display: flex; flex-wrap: wrap; gap: 8px; margin: 0; }
.readout { flex: 1 1 150px; border: 1px solid rgba(127,127,127,0.35); border-radius: 8px;
           padding: 6px 10px; min-width: 140px; }
.readout .label { font-size: 12px; opacity: 0.8; }
.readout .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.readout .ref { font-size: 12px; opacity: 0.8; }
.verdict { margin: 6px 2px 0; font-size: 14px; }
"""


MISSING = "—"
"""What a readout shows in place of a number it has not got (a mean over no finite row)."""

TILE_HTML = (
    '<div class="readout" data-testid="{test_id}"><div class="label">{label}</div>'
    '<div class="value">{value}</div><div class="ref">{reference}</div></div>'
)
"""One readout's markup: its label, its value and what the value compares with."""

READOUT_TEXTS = {
    "tile": TILE_HTML,
    "readouts": (
        '<div class="readouts">{tiles}</div><p class="verdict" data-testid="verdict">{sentence}</p>'
    ),
    "missing": MISSING,
    "std_raw_label": "std of raw q·k",
    "std_scaled_label": "std of q·k / √d_k",
    "std": "{value:.1f}",
    "lesson_raw_reference": "√d_k = {sqrt_d_k:.1f}",
    "lesson_scaled_reference": "target 1.0",
    "raw_reference": "expected {std:.1f}",
    "scaled_reference": "expected {std:.2f}",
    "qk_norm_reference": " · QK-norm restores it",
    "max_weight_label": "mean max weight per row",
    "max_weight": "{value:.3f}",
    "max_weight_reference": "uniform {uniform:.3f} · one-hot 1",
    "entropy_label": "mean row entropy (nats)",
    "entropy": "{value:.2f}",
    "entropy_reference": "uniform {uniform:.2f} · one-hot 0",
    "non_finite_label": "non-finite weights (inf/NaN)",
    "non_finite": "{value:,}",
    "non_finite_reference": "of {size:,} · {precision}{unstable}",
    "unstable": ", no max subtraction",
    "error_label": "largest |weight − float64|",
    "error": "{value:.2g}",
    "error_reference": "over the finite weights",
    "verdict_overflowed": "Every row overflowed: the softmax gave inf or NaN weights.",
    "verdict_one_hot": (
        "Rows are nearly one-hot: the softmax has collapsed and its gradient vanishes."
    ),
    "verdict_uniform": "Rows are nearly uniform: every key gets about the same weight.",
    "verdict_useful": (
        "Rows spread their weight over several keys: the softmax is in its useful range."
    ),
    "left_out": " Rows with an inf or NaN weight are left out of these means.",
}
"""Every word, number format and piece of markup of the readouts, as ``str.format``
templates with named fields (a value's own format takes ``{value}``; the labels and
sentences have no field and are used as they are). The offline page receives them as data
(``config["texts"]``) and text.js fills them as :meth:`str.format` does: the words live here
only, the choice of which applies on both sides."""


def readout_tile(test_id: str, label: str, value: str, reference: str) -> str:
    """One readout's markup: its label, its value and what it compares with (text.js's
    ``tile`` writes the same)."""
    return TILE_HTML.format(test_id=test_id, label=label, value=value, reference=reference)


def verdict(mean_max_weight: float, mean_entropy: float, uniform_entropy: float) -> str:
    """One sentence that names the regime the weights are in."""
    if math.isnan(mean_max_weight):
        return READOUT_TEXTS["verdict_overflowed"]
    if mean_max_weight >= ONE_HOT_THRESHOLD:
        return READOUT_TEXTS["verdict_one_hot"]
    if uniform_entropy > 0 and mean_entropy >= UNIFORM_ENTROPY_FRACTION * uniform_entropy:
        return READOUT_TEXTS["verdict_uniform"]
    return READOUT_TEXTS["verdict_useful"]


def readout_number(template: str, value: float) -> str:
    """``value`` written by ``template``, or the dash when it is NaN (no finite row)."""
    return MISSING if math.isnan(value) else template.format(value=value)


def spread_references(model: SimulationModel) -> tuple[str, str]:
    """What the raw and scaled stds are compared with: √d_k and 1 under the lesson's law,
    else the std :func:`app.simulation.parts.expected_moments` gives (and, with QK-norm, that it
    restores the spread whatever the σ)."""
    state = model.state
    texts = READOUT_TEXTS
    if law_of(state) == LESSON_LAW:
        return (
            texts["lesson_raw_reference"].format(sqrt_d_k=math.sqrt(state.d_k)),
            texts["lesson_scaled_reference"],
        )
    raw = texts["raw_reference"].format(std=model.raw_histogram.expected_std)
    scaled = texts["scaled_reference"].format(std=model.scaled_histogram.expected_std)
    if state.qk_norm:
        scaled += texts["qk_norm_reference"]
    return raw, scaled


def precision_tiles(model: SimulationModel) -> list[str]:
    """Non-finite weights and the largest difference from float64, when the softmax is not
    the lesson's (another format, or without the max subtraction)."""
    weights = model.weights
    report = weights.precision_report
    if report is None or (weights.precision == "float64" and weights.stable):
        return []
    texts = READOUT_TEXTS
    reference = texts["non_finite_reference"].format(
        size=report.size,
        precision=weights.precision,
        unstable="" if weights.stable else texts["unstable"],
    )
    return [
        readout_tile(
            "non-finite",
            texts["non_finite_label"],
            texts["non_finite"].format(value=report.non_finite),
            reference,
        ),
        readout_tile(
            "max-error",
            texts["error_label"],
            readout_number(texts["error"], report.max_abs_error),
            texts["error_reference"],
        ),
    ]


def readouts_html(model: SimulationModel) -> str:
    """The readout tiles for the model's current state, as HTML built from numbers only."""
    weights = model.weights
    texts = READOUT_TEXTS
    raw_reference, scaled_reference = spread_references(model)
    tiles = [
        readout_tile(
            "std-raw",
            texts["std_raw_label"],
            texts["std"].format(value=model.raw_histogram.std),
            raw_reference,
        ),
        readout_tile(
            "std-scaled",
            texts["std_scaled_label"],
            texts["std"].format(value=model.scaled_histogram.std),
            scaled_reference,
        ),
        readout_tile(
            "max-weight",
            texts["max_weight_label"],
            readout_number(texts["max_weight"], weights.mean_max_weight),
            texts["max_weight_reference"].format(uniform=weights.uniform_max_weight),
        ),
        readout_tile(
            "entropy",
            texts["entropy_label"],
            readout_number(texts["entropy"], weights.mean_entropy),
            texts["entropy_reference"].format(uniform=weights.uniform_entropy),
        ),
        *precision_tiles(model),
    ]
    sentence = verdict(weights.mean_max_weight, weights.mean_entropy, weights.uniform_entropy)
    if weights.non_finite and not math.isnan(weights.mean_max_weight):
        sentence += texts["left_out"]
    return texts["readouts"].format(tiles="".join(tiles), sentence=sentence)
