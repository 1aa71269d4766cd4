"""Histograms of the pooled dot products against their normal laws, built once per process;
the browser draws every change (figures.js)."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, DataRange1d, Range1d

from app.page.views.style import legend_above, view_figure, without_glyph_copies
from app.simulation.model import SimulationModel
from app.simulation.parts import LESSON_LAW, HistogramFrame, law_of

BAR_COLOUR = "#4c78a8"
CURVE_COLOUR = "#e45756"

HISTOGRAM_TEXTS = {
    # The titles keep "at d_k = …:" (pages and tests wait on it).
    "lesson_raw_title": "Raw q·k at d_k = {d_k}: std ≈ √d_k = {sqrt_d_k:.3g}",
    "lesson_raw_curve": "Normal(0, {d_k})",
    "lesson_scaled_title": "Scaled q·k / √d_k at d_k = {d_k}: std ≈ 1",
    "lesson_scaled_curve": "Normal(0, 1)",
    "raw_title": "Raw q·k{normed} at d_k = {d_k}: std ≈ {std:.3g}",
    "scaled_title": "Scaled q·k / √d_k{normed} at d_k = {d_k}: std ≈ {std:.3g}",
    "qk_norm": " (QK-norm)",
    "normal_label": "Normal({mean:.3g}, {variance:.3g})",
}
"""The histograms' titles and curve labels, as ``str.format`` templates with named fields.
The offline page receives them as data (``config["texts"]``) and text.js fills them as
:meth:`str.format` does."""


class HistogramView:
    """One histogram (bars) with the density of its theoretical normal law drawn over it,
    titled ``title``, its curve labelled ``curve_label`` (:func:`histogram_words`)."""

    def __init__(
        self, name: str, frame: HistogramFrame, x_label: str, title: str, curve_label: str
    ) -> None:
        self.bars = ColumnDataSource(
            {"left": frame.left, "right": frame.right, "top": frame.density}
        )
        self.curve = ColumnDataSource({"x": frame.curve_x, "y": frame.curve_y})
        self.figure = view_figure(
            name=name,
            title=title,
            x_range=Range1d(float(frame.left[0]), float(frame.right[-1])),
            y_range=DataRange1d(start=0, only_visible=True),
            x_axis_label=x_label,
            y_axis_label="density",
            height=230,
            min_width=260,
        )
        self.figure.quad(
            left="left",
            right="right",
            top="top",
            bottom=0,
            source=self.bars,
            fill_color=BAR_COLOUR,
            fill_alpha=0.55,
            line_color=BAR_COLOUR,
            line_alpha=0.8,
            legend_label="10,000 pairs",
        )
        self.figure.line(
            x="x",
            y="y",
            source=self.curve,
            line_color=CURVE_COLOUR,
            line_width=2.5,
            legend_label=curve_label,
        )
        legend_above(self.figure)
        without_glyph_copies(self.figure)
        self.curve_legend = self.figure.legend[0].items[1]


class DotProductHistograms:
    """Raw q·k against Normal(0, d_k), and q·k / √d_k against Normal(0, 1), side by side,
    for the model's state."""

    def __init__(self, model: SimulationModel) -> None:
        words = histogram_words(model)
        self.raw = HistogramView("raw_histogram", model.raw_histogram, "q·k", *words["raw"])
        self.scaled = HistogramView(
            "scaled_histogram", model.scaled_histogram, "q·k / √d_k", *words["scaled"]
        )


def histogram_words(model: SimulationModel) -> dict[str, tuple[str, str]]:
    """The title and curve label of the ``raw`` and the ``scaled`` histogram for the model's
    state: the lesson's own words under its law, the law's numbers under any other."""
    d_k = model.state.d_k
    texts = HISTOGRAM_TEXTS
    if law_of(model.state) == LESSON_LAW:
        return {
            "raw": (
                texts["lesson_raw_title"].format(d_k=d_k, sqrt_d_k=d_k**0.5),
                texts["lesson_raw_curve"].format(d_k=d_k),
            ),
            "scaled": (
                texts["lesson_scaled_title"].format(d_k=d_k),
                texts["lesson_scaled_curve"],
            ),
        }
    normed = texts["qk_norm"] if model.state.qk_norm else ""
    raw, scaled = model.raw_histogram, model.scaled_histogram
    return {
        "raw": (
            texts["raw_title"].format(normed=normed, d_k=d_k, std=raw.expected_std),
            normal_label(raw),
        ),
        "scaled": (
            texts["scaled_title"].format(normed=normed, d_k=d_k, std=scaled.expected_std),
            normal_label(scaled),
        ),
    }


def normal_label(frame: HistogramFrame) -> str:
    """``Normal(mean, variance)`` of a histogram's curve, in three significant digits."""
    mean = frame.expected_mean + 0.0  # no "-0"
    return HISTOGRAM_TEXTS["normal_label"].format(mean=mean, variance=frame.expected_std**2)
