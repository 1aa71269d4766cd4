"""Collapse curves against d_k: entropy, max weight and gradient size, scaled vs unscaled."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LegendItem,
    Range1d,
)
from bokeh.plotting import figure

import sdpa_core
from app.page.views.style import band_with_line, finish_figure, view_figure
from app.simulation.model import SimulationModel
from sdpa_core import collapse_curve

COLLAPSE_D_VALUES = tuple(2**power for power in range(11))
"""The d_k of the curve points: 1, 2, 4 … 1024, evenly spaced on the log axis."""

COLLAPSE_N = 32
"""Queries and keys per draw; fixed, so the curves do not move with the n control."""

COLLAPSE_TRIALS = 32
"""Independent draws per curve point, behind each mean and 10–90 % band."""

COLLAPSE_SEED = 0
"""Seed of the curves; fixed, so Resample does not redraw them."""

SCALED_COLOUR = "#0072B2"
UNSCALED_COLOUR = "#E69F00"
"""Okabe–Ito blue and orange: told apart under every common colour-vision deficiency."""

REFERENCE_COLOUR = "#555555"

COLLAPSE_HEADING = "### Why it matters: the softmax collapses without the scale"
"""The section's heading (Markdown), above :data:`app.page.lesson_text.COLLAPSE_CURVES`."""

CAPTION_CSS = ".collapse-caption { margin: 2px 0; font-size: 13px; }"

X_RANGE = (0.65, 1580.0)
"""The d_k axis: about 5 % of the log width beyond 1 and 1024, so end markers are whole."""


@dataclass(frozen=True)
class Metric:
    """One panel: which :class:`sdpa_core.CollapseCurve` band it draws and how it is labelled."""

    name: str
    title: str
    y_label: str
    y_end: float
    reference: str


METRICS = (
    Metric("entropy", "Mean row entropy", "entropy (nats)", 3.75, "entropy log 32"),
    Metric("max_weight", "Mean max weight", "max weight", 1.05, "max weight 1/32"),
    # The norm of diag(p) − ppᵀ peaks at 0.5 (two keys sharing the weight), so this fixed
    # range holds every temperature and the axis never jumps as the curves move.
    Metric(
        "jacobian_norm",
        "Gradient size (‖Jacobian‖)",
        "Jacobian norm",
        0.52,
        "Jacobian norm √(1/32 − 1/32²)",
    ),
)
"""The three panels, left to right; ``name`` is a CollapseCurve field and a source column."""


def uniform_references(n: int = COLLAPSE_N) -> dict[str, float]:
    """Each metric's value for uniform attention over ``n`` keys, computed by sdpa_core.

    log n for the entropy, 1/n for the max weight and sqrt(1/n − 1/n²) for the Jacobian norm.
    """
    uniform = np.full((1, n), 1.0 / n)
    return {
        "entropy": float(sdpa_core.row_entropy(uniform)[0]),
        "max_weight": float(sdpa_core.max_weight(uniform)[0]),
        "jacobian_norm": float(sdpa_core.softmax_jacobian_norm(uniform)[0]),
    }


def curves(temperature: float) -> dict[bool, sdpa_core.CollapseCurve]:
    """The scaled (``True``) and unscaled (``False``) curves at ``temperature``.

    Each comes from :func:`sdpa_core.collapse_curve`, whose cache is shared by every
    session, so only the first session to ask for a temperature pays for it.
    """
    return {
        scaled: collapse_curve(
            COLLAPSE_D_VALUES,
            COLLAPSE_N,
            COLLAPSE_TRIALS,
            scaled=scaled,
            temperature=temperature,
            seed=COLLAPSE_SEED,
        )
        for scaled in (True, False)
    }


def curve_data(curve: sdpa_core.CollapseCurve, label: str) -> dict[str, object]:
    """A curve as source columns: ``d``, ``curve`` and ``<metric>``, ``_low``, ``_high``."""
    data: dict[str, object] = {
        "d": np.asarray(curve.d_values, dtype=np.float64),
        "curve": [label] * len(curve.d_values),
    }
    for metric in METRICS:
        band = getattr(curve, metric.name)
        # Copies: the core's arrays are shared through its cache and read-only.
        data[metric.name] = np.array(band.mean, dtype=np.float64)
        data[f"{metric.name}_low"] = np.array(band.low, dtype=np.float64)
        data[f"{metric.name}_high"] = np.array(band.high, dtype=np.float64)
    return data


def marker_data(curve: sdpa_core.CollapseCurve, d_k: int, scaled: bool) -> dict[str, list]:
    """The marker at ``d_k`` on ``curve``, interpolated linearly in log2 d_k between points."""
    log_d = np.log2(np.asarray(curve.d_values, dtype=np.float64))
    data: dict[str, list] = {
        "d": [float(d_k)],
        "colour": [SCALED_COLOUR if scaled else UNSCALED_COLOUR],
    }
    for metric in METRICS:
        mean = getattr(curve, metric.name).mean
        data[metric.name] = [float(np.interp(math.log2(d_k), log_d, mean))]
    return data


MARKER_CAPTION = (
    "The ring marks d_k = {d_k} on the {which} curves at temperature {temperature} "
    "(n = {n}, {trials} draws per point)."
)
"""The sentence under the curves (:func:`marker_caption`); the offline page fills it too."""

MARKER_CURVES = {True: "scaled (blue)", False: "unscaled (orange)"}
"""The curves the marker sits on, by the scale switch, in :data:`MARKER_CAPTION`'s words."""


def marker_caption(d_k: int, scaled: bool, temperature: float) -> str:
    """The sentence under the curves that says where the marker is, as HTML from numbers."""
    sentence = MARKER_CAPTION.format(
        d_k=d_k,
        which=MARKER_CURVES[scaled],
        temperature=f"{temperature:g}",
        n=COLLAPSE_N,
        trials=COLLAPSE_TRIALS,
    )
    return f'<p class="collapse-caption" data-testid="collapse-caption">{sentence}</p>'


def references_caption(references: dict[str, float]) -> str:
    """The sentence that names the dashed lines and their values, as HTML from numbers."""
    parts = ", ".join(f"{metric.reference} ≈ {references[metric.name]:.3g}" for metric in METRICS)
    return (
        f'<p class="collapse-caption">Dashed lines: uniform attention over {COLLAPSE_N} '
        f"keys ({parts}).</p>"
    )


class CollapseView:
    """Three small figures of the collapse statistics against d_k, built once for the
    model's state (lesson_drawing.js's CollapseDrawing draws every change).

    The two curve sources (scaled, unscaled) are shared by the three figures, as is the
    marker's at the state's d_k on the curve of its scale; ``caption`` is the sentence that
    says where the marker is, as HTML.
    """

    def __init__(self, model: SimulationModel) -> None:
        state = model.state
        drawn = curves(state.temperature)
        self.scaled_source = ColumnDataSource(curve_data(drawn[True], "scaled"))
        self.unscaled_source = ColumnDataSource(curve_data(drawn[False], "unscaled"))
        self.marker_source = ColumnDataSource(
            marker_data(drawn[state.scaled], state.d_k, state.scaled)
        )
        self.reference_source = ColumnDataSource(
            {"d": [COLLAPSE_D_VALUES[0], COLLAPSE_D_VALUES[-1]], **_flat(uniform_references())}
        )
        self.figures = [self._figure(metric) for metric in METRICS]
        self.caption = marker_caption(state.d_k, state.scaled, state.temperature)

    def _figure(self, metric: Metric) -> figure:
        fig = view_figure(
            name=f"collapse_{metric.name}",
            title=metric.title,
            x_axis_type="log",
            x_range=Range1d(*X_RANGE),
            # A little room below 0, so a marker on a collapsed curve is not cut in half.
            y_range=Range1d(-0.04 * metric.y_end, metric.y_end),
            x_axis_label="d_k (log scale)",
            y_axis_label=metric.y_label,
            height=300,
            min_width=240,
        )
        fig.xaxis.ticker = FixedTicker(
            ticks=[1, 4, 16, 64, 256, 1024], minor_ticks=list(COLLAPSE_D_VALUES)
        )
        lines = []
        items = []
        for source, colour, label in (
            (self.scaled_source, SCALED_COLOUR, "scaled"),
            (self.unscaled_source, UNSCALED_COLOUR, "unscaled"),
        ):
            item = band_with_line(
                fig,
                x="d",
                y=metric.name,
                source=source,
                colour=colour,
                label=label,
                fill_alpha=0.22,
                line_width=2.5,
            )
            fig.scatter(x="d", y=metric.name, source=source, size=4, color=colour, marker="circle")
            lines.append(item.renderers[0])
            items.append(item)
        reference = fig.line(
            x="d",
            y=metric.name,
            source=self.reference_source,
            line_color=REFERENCE_COLOUR,
            line_dash="dashed",
            line_width=1.5,
        )
        marker = fig.scatter(
            x="d",
            y=metric.name,
            source=self.marker_source,
            size=13,
            marker="circle",
            fill_color="white",
            line_color="colour",
            line_width=3.5,
        )
        items += [
            LegendItem(label="uniform", renderers=[reference]),
            LegendItem(label="current d_k", renderers=[marker]),
        ]
        return finish_figure(
            fig,
            items,
            hover=HoverTool(
                renderers=lines,
                tooltips=[
                    ("", "@curve"),
                    ("d_k", "@d{0}"),
                    ("mean", f"@{{{metric.name}}}{{0.000}}"),
                    (
                        "10–90 %",
                        f"@{{{metric.name}_low}}{{0.000}} – @{{{metric.name}_high}}{{0.000}}",
                    ),
                ],
                mode="mouse",
            ),
        )


def _flat(references: dict[str, float]) -> dict[str, list[float]]:
    """Each reference value as a two-point horizontal line across the d_k axis."""
    return {name: [value, value] for name, value in references.items()}
