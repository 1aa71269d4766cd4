"""The score-matrix heatmap: Bokeh ``image`` glyphs, built once per process; the browser
draws every change (figures.js)."""

from __future__ import annotations

import numpy as np
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    CustomJSHover,
    HoverTool,
    Legend,
    LegendItem,
    LinearColorMapper,
    Range1d,
)
from bokeh.palettes import RdBu11, Viridis256, interp_palette
from bokeh.plotting import figure

from app.page.facts import HEATMAP_BORDER_TOP, HEATMAP_FIRST_SIDE
from app.page.views.style import without_glyph_copies
from app.simulation.model import SimulationModel

WEIGHTS_PALETTE = Viridis256
"""Sequential and colour-blind safe; weights always span the fixed range [0, 1]."""

SCORES_PALETTE = interp_palette(RdBu11, 255)
"""Diverging and colour-blind safe (blue negative, red positive), symmetric around 0."""

MASK_COLOUR = "#9e9e9e"

OVERFLOW_COLOUR = "#ff1f5b"
"""Cells whose weight overflowed to inf or NaN: a vivid red-pink, in none of the palettes
and far from the mask's grey."""

TRANSPARENT = "rgba(0, 0, 0, 0)"

OVERFLOW_LABEL = "inf/NaN weight (overflow)"
LEGEND_KEY_NAME = "heatmap_legend_key"
"""Name of the overflow legend's key renderers (one square each, never on the matrix)."""
MASK_LABEL = "masked (causal)"

VIEW_COLUMNS = {"weights": "weight", "scaled": "scaled", "raw": "raw"}
"""Heatmap view → the source column its image glyph draws."""

TITLES = {
    "weights": "Attention weights (each row sums to 1)",
    "scaled": "Scaled scores q·k / √d_k",
    "raw": "Raw scores q·k",
}
COLOUR_BAR_TITLES = {"weights": "weight", "scaled": "q·k / √d_k", "raw": "q·k"}

CELL_INDEX_JS = "return String(Math.floor(value))"
CELL_VALUE_JS = "return Number.isNaN(value) ? 'masked' : value.toPrecision(4)"

ROW_OUTLINE_COLOUR = "#ffffff"
"""The dashes of the compared row's outline: white reads on both palettes' dark ends."""

ROW_OUTLINE_GAP = 0.25
"""How far outside the marked row its dashed outline runs, in rows: the dashes then frame
the row's cells instead of covering their top and bottom (at n = 32 a row is 5 to 8 px tall and
the 2 px dashes on its edges hid most of a one-hot row's one bright cell). The line's half
width, 1 px, stays clear of the row while a row is at least 4 px tall."""


def row_outline(n: int, row: int) -> dict[str, list]:
    """The outline source's data for query ``row`` of an n×n heatmap (figures.js's
    ``drawOutline`` draws the same from ``ROW_OUTLINE_GAP``, which it receives as data)."""
    gap = ROW_OUTLINE_GAP
    return {"left": [0], "right": [n], "top": [row - gap], "bottom": [row + 1 + gap]}


def colour_range(model: SimulationModel) -> tuple[float, float]:
    """The colour bar's range for the model's view: [0, 1] for weights, symmetric around 0
    for scores."""
    view = model.state.view
    if view == "weights":
        return 0.0, 1.0
    scores = model.scores
    limit = max(scores.raw_limit if view == "raw" else scores.scaled_limit, 1e-9)
    return -limit, limit


class HeatmapView:
    """The n×n score or weight matrix: query i down the rows (0 at the top), key j across.

    The source holds the raw scores, the scaled scores and the weights as three float32
    images, so the hover shows all three; one image renderer per view, the model's view
    visible, its colour mapper's palette and range those of the view. Overflowed weights
    have a layer of their own, with a legend beside the mask's, shown while a weight
    overflows. A dashed outline marks the query row shown in the row comparison. Built once
    for the model's state: the browser draws every change from then on (figures.js).
    """

    def __init__(self, model: SimulationModel) -> None:
        n = model.state.n
        view = model.state.view
        self.source = ColumnDataSource(self._data(model))
        low, high = colour_range(model)
        self.mapper = LinearColorMapper(
            palette=WEIGHTS_PALETTE if view == "weights" else SCORES_PALETTE,
            low=low,
            high=high,
            nan_color=MASK_COLOUR,
        )
        self.figure = figure(
            name="heatmap",
            title=TITLES[view],
            x_range=Range1d(0, n, bounds=(0, n)),
            y_range=Range1d(n, 0, bounds=(0, n)),
            x_axis_label="key j",
            y_axis_label="query i",
            # The plotting frame is square (a score matrix's cells are) and sized by the
            # page to the room it has (heatmap_frame.js); the axes, the colour bar and the
            # save button take what they need around it.
            frame_width=HEATMAP_FIRST_SIDE,
            frame_height=HEATMAP_FIRST_SIDE,
            # Save alone: a student needs no pan, zoom or reset, and each tool was a Tab
            # stop. It sits right of the colour bar, not in a row above the matrix.
            toolbar_location="right",
            tools="save",
            min_border_top=HEATMAP_BORDER_TOP,
            # No frame outline: its 1 px line ran over the top and edge rows' cells.
            outline_line_color=None,
        )
        self.figure.toolbar.logo = None
        self.figure.title.text_font_size = "13px"
        self.figure.grid.visible = False
        # One image renderer per column, all on the same source and mapper, the view's
        # visible (app.page.figures keeps one, drawing a column of the current view's image).
        self.renderers = {
            name: self.figure.image(
                image=column,
                x="x",
                y="y",
                dw="dw",
                dh="dh",
                source=self.source,
                color_mapper=self.mapper,
                name=f"heatmap_{column}",
                visible=name == view,
            )
            for name, column in VIEW_COLUMNS.items()
        }
        self.colour_bar = ColorBar(
            color_mapper=self.mapper,
            title=COLOUR_BAR_TITLES[view],
            width=12,
            title_text_font_size="12px",
            major_label_text_font_size="11px",
            padding=4,
        )
        self.figure.add_layout(self.colour_bar, "right")
        self.row_outline = ColumnDataSource(self._outline(model))
        self.figure.quad(
            left="left",
            right="right",
            top="top",
            bottom="bottom",
            source=self.row_outline,
            fill_alpha=0,
            line_color=ROW_OUTLINE_COLOUR,
            line_width=2,
            line_dash="dashed",
            name="row_outline",
        )
        self.figure.add_tools(
            HoverTool(
                # Hovering a cell shows its numbers; no button turns that off.
                visible=False,
                renderers=list(self.renderers.values()),
                tooltips=[
                    ("query i", "$y{cell}"),
                    ("key j", "$x{cell}"),
                    ("raw score", "@raw{value}"),
                    ("scaled score", "@scaled{value}"),
                    ("weight", "@weight{value}"),
                ],
                # Formatters are models: each document needs its own (one per session).
                formatters={
                    "$x": (cell_index := CustomJSHover(code=CELL_INDEX_JS)),
                    "$y": cell_index,
                    "@raw": (cell_value := CustomJSHover(code=CELL_VALUE_JS)),
                    "@scaled": cell_value,
                    "@weight": cell_value,
                },
            )
        )
        without_glyph_copies(self.figure)
        self._build_overflow_layer(model)

    @staticmethod
    def _data(model: SimulationModel) -> dict[str, list]:
        n = model.state.n
        return {
            "raw": [model.scores.raw_image],
            "scaled": [model.scores.scaled_image],
            "weight": [model.weights.weights_image],
            "x": [0],
            "y": [0],
            "dw": [n],
            "dh": [n],
        }

    @staticmethod
    def _outline(model: SimulationModel) -> dict[str, list]:
        return row_outline(model.state.n, model.row.row)

    @staticmethod
    def _overflow_data(model: SimulationModel) -> dict[str, list]:
        """1 where a weight is inf or NaN, NaN (transparent) elsewhere; one NaN cell when
        none overflowed."""
        overflow = model.weights.overflow
        if overflow is None:
            image = np.full((1, 1), np.nan, dtype=np.float32)
        else:
            image = np.where(overflow, np.float32(1), np.float32(np.nan)).astype(np.float32)
        n = model.state.n
        return {"overflow": [image], "x": [0], "y": [0], "dw": [n], "dh": [n]}

    def _build_overflow_layer(self, model: SimulationModel) -> None:
        """Overflowed weights in their own colour over the weights, with a legend beside the
        mask's: shown while a weight overflows in the weights' view (the mask's entry while
        the mask is on)."""
        self.overflow_source = ColumnDataSource(self._overflow_data(model))
        mapper = LinearColorMapper(
            palette=[OVERFLOW_COLOUR], low=0.0, high=1.0, nan_color=TRANSPARENT
        )
        self.overflow_renderer = self.figure.image(
            image="overflow",
            x="x",
            y="y",
            dw="dw",
            dh="dh",
            source=self.overflow_source,
            color_mapper=mapper,
            name="heatmap_overflow",
        )
        shown = model.weights.overflow is not None and model.state.view == "weights"
        self.overflow_renderer.visible = shown
        # Legend keys only: one square each, outside the ranges (which are bounded to the
        # matrix), so never drawn on it.
        keys = [
            self.figure.scatter(
                x=[-1.0],
                y=[-1.0],
                marker="square",
                size=10,
                fill_color=colour,
                line_color=colour,
                name=LEGEND_KEY_NAME,
            )
            for colour in (OVERFLOW_COLOUR, MASK_COLOUR)
        ]
        self.overflow_legend = Legend(
            items=[
                LegendItem(label=OVERFLOW_LABEL, renderers=[keys[0]]),
                LegendItem(label=MASK_LABEL, renderers=[keys[1]]),
            ],
            orientation="horizontal",
            label_text_font_size="11px",
            padding=2,
            margin=0,
            spacing=12,
            border_line_alpha=0,
            visible=shown,
            name="heatmap_overflow_legend",
        )
        self.overflow_legend.items[1].visible = bool(model.state.causal)
        # Below the plot: it never hides a cell.
        self.figure.add_layout(self.overflow_legend, "below")
        without_glyph_copies(self.figure)
