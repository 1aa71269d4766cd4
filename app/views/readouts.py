"""Number readouts: the spread of the dot products and how collapsed the softmax is."""

from __future__ import annotations

import math

from app.controls_spec import ONE_HOT_THRESHOLD, UNIFORM_ENTROPY_FRACTION
from app.derived import LESSON_LAW, law_of
from app.model import HISTOGRAMS, WEIGHTS, SimulationModel
from app.views.markup import ServerMarkup

READOUT_CSS = """
.readouts { display: flex; flex-wrap: wrap; gap: 8px; margin: 0; }
.readout { flex: 1 1 150px; border: 1px solid rgba(127,127,127,0.35); border-radius: 8px;
           padding: 6px 10px; min-width: 140px; }
.readout .label { font-size: 12px; opacity: 0.8; }
.readout .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.readout .ref { font-size: 12px; opacity: 0.8; }
.verdict { margin: 6px 2px 0; font-size: 14px; }
"""


def _tile(test_id: str, label: str, value: str, reference: str) -> str:
    return (
        f'<div class="readout" data-testid="{test_id}"><div class="label">{label}</div>'
        f'<div class="value">{value}</div><div class="ref">{reference}</div></div>'
    )


def verdict(mean_max_weight: float, mean_entropy: float, uniform_entropy: float) -> str:
    """One sentence that names the regime the weights are in."""
    if math.isnan(mean_max_weight):
        return "Every row overflowed: the softmax gave inf or NaN weights."
    if mean_max_weight >= ONE_HOT_THRESHOLD:
        return "Rows are nearly one-hot: the softmax has collapsed and its gradient vanishes."
    if uniform_entropy > 0 and mean_entropy >= UNIFORM_ENTROPY_FRACTION * uniform_entropy:
        return "Rows are nearly uniform: every key gets about the same weight."
    return "Rows spread their weight over several keys: the softmax is in its useful range."


def _number(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, or a dash when it is NaN (no finite row)."""
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def spread_references(model: SimulationModel) -> tuple[str, str]:
    """What the raw and scaled stds are compared with: √d_k and 1 under the lesson's law,
    else the std :func:`app.derived.expected_moments` gives (and, with QK-norm, that it
    restores the spread whatever the σ)."""
    state = model.state
    if law_of(state) == LESSON_LAW:
        return f"√d_k = {math.sqrt(state.d_k):.1f}", "target 1.0"
    raw = f"expected {model.raw_histogram.expected_std:.1f}"
    scaled = f"expected {model.scaled_histogram.expected_std:.2f}"
    if state.qk_norm:
        scaled += " · QK-norm restores it"
    return raw, scaled


def precision_tiles(model: SimulationModel) -> list[str]:
    """Non-finite weights and the largest difference from float64, when the softmax is not
    the lesson's (another format, or without the max subtraction)."""
    weights = model.weights
    report = weights.precision_report
    if report is None or (weights.precision == "float64" and weights.stable):
        return []
    error = report.max_abs_error
    how = weights.precision + ("" if weights.stable else ", no max subtraction")
    return [
        _tile(
            "non-finite",
            "non-finite weights (inf/NaN)",
            f"{report.non_finite:,}",
            f"of {report.size:,} · {how}",
        ),
        _tile(
            "max-error",
            "largest |weight − float64|",
            "—" if math.isnan(error) else f"{error:.2g}",
            "over the finite weights",
        ),
    ]


def readouts_html(model: SimulationModel) -> str:
    """The readout tiles for the model's current state, as HTML built from numbers only."""
    weights = model.weights
    raw_reference, scaled_reference = spread_references(model)
    tiles = [
        _tile(
            "std-raw",
            "std of raw q·k",
            f"{model.raw_histogram.std:.1f}",
            raw_reference,
        ),
        _tile(
            "std-scaled",
            "std of q·k / √d_k",
            f"{model.scaled_histogram.std:.1f}",
            scaled_reference,
        ),
        _tile(
            "max-weight",
            "mean max weight per row",
            _number(weights.mean_max_weight, 3),
            f"uniform {weights.uniform_max_weight:.3f} · one-hot 1",
        ),
        _tile(
            "entropy",
            "mean row entropy (nats)",
            _number(weights.mean_entropy, 2),
            f"uniform {weights.uniform_entropy:.2f} · one-hot 0",
        ),
        *precision_tiles(model),
    ]
    sentence = verdict(weights.mean_max_weight, weights.mean_entropy, weights.uniform_entropy)
    if weights.non_finite and not math.isnan(weights.mean_max_weight):
        sentence += " Rows with an inf or NaN weight are left out of these means."
    return (
        f'<div class="readouts">{"".join(tiles)}</div>'
        f'<p class="verdict" data-testid="verdict">{sentence}</p>'
    )


class ReadoutsView:
    """The readout tiles, re-rendered when the weights or the histograms change."""

    def __init__(self, model: SimulationModel) -> None:
        self.pane = ServerMarkup(
            html=readouts_html(model),
            stylesheets=[READOUT_CSS],
            sizing_mode="stretch_width",
            margin=(5, 10),
        )

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Re-render when the numbers shown can have changed."""
        if parts & {WEIGHTS, HISTOGRAMS}:
            self.pane.show(readouts_html(model))
