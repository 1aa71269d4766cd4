"""The score-matrix heatmap: one Bokeh ``image`` glyph, built once, updated in place."""

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

from app.page.views.style import without_glyph_copies
from app.simulation.model import ROW, SCORES, VIEW, WEIGHTS, SimulationModel

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


class HeatmapView:
    """The n×n score or weight matrix: query i down the rows (0 at the top), key j across.

    The source holds the raw scores, the scaled scores and the weights as three float32
    images, so the hover shows all three; the view only changes which of three image
    renderers is visible and the colour mapper's range and palette, in place. A zoom stays
    as other controls move, until n changes. A dashed outline marks the query row shown in
    the row comparison.
    """

    def __init__(self, model: SimulationModel) -> None:
        n = model.state.n
        self.axes_n = n
        """The n the axes' ranges were last set for (a zoom is kept until n changes)."""
        self.source = ColumnDataSource(self._data(model))
        self.mapper = LinearColorMapper(
            palette=WEIGHTS_PALETTE, low=0.0, high=1.0, nan_color=MASK_COLOUR
        )
        self.figure = figure(
            name="heatmap",
            title=TITLES["weights"],
            x_range=Range1d(0, n, bounds=(0, n)),
            y_range=Range1d(n, 0, bounds=(0, n)),
            x_axis_label="key j",
            y_axis_label="query i",
            sizing_mode="stretch_width",
            height=460,
            min_width=280,
            toolbar_location="above",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            active_scroll=None,
            # The toolbar is 30 px tall: its active tools' bars then sit 6 px above the
            # heatmap's top row, not on its edge.
            min_border_top=36,
            # No frame outline: its 1 px line ran over the top and edge rows' cells.
            outline_line_color=None,
        )
        self.figure.title.text_font_size = "13px"
        self.figure.grid.visible = False
        # One image renderer per column, all on the same source and mapper; a view change
        # toggles which is visible. (Changing one glyph's column in place leaves BokehJS
        # drawing the image it mapped from the old column.)
        self.renderers = {
            view: self.figure.image(
                image=column,
                x="x",
                y="y",
                dw="dw",
                dh="dh",
                source=self.source,
                color_mapper=self.mapper,
                name=f"heatmap_{column}",
                visible=view == model.state.view,
            )
            for view, column in VIEW_COLUMNS.items()
        }
        self.colour_bar = ColorBar(
            color_mapper=self.mapper,
            title="weight",
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
        self.overflow_source: ColumnDataSource | None = None
        """The overflowed cells' layer, added over the weights the first time a weight
        overflows (a page that never overflows never carries it)."""
        self.overflow_legend: Legend | None = None
        self._apply_view(model)
        self._apply_overflow(model)

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

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Send what ``parts`` changed: everything on new scores, only the weights otherwise."""
        if SCORES in parts:
            n = model.state.n
            self.source.data = self._data(model)
            if n != self.axes_n:
                self.axes_n = n
                # The bounds move with n too, and first: BokehJS applies the changes in this
                # order and clamps start/end to the bounds it has. reset_* is where Reset goes.
                self.figure.x_range.update(
                    bounds=(0, n), reset_start=0, reset_end=n, start=0, end=n
                )
                self.figure.y_range.update(
                    bounds=(0, n), reset_start=n, reset_end=0, start=n, end=0
                )
        elif WEIGHTS in parts:
            self.source.data.update(weight=[model.weights.weights_image])
        if VIEW in parts:
            self._apply_view(model)
        elif SCORES in parts:
            self._apply_limits(model)
        if ROW in parts:
            self.row_outline.data = self._outline(model)
        if WEIGHTS in parts or VIEW in parts:
            self._apply_overflow(model)

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

    def _apply_overflow(self, model: SimulationModel) -> None:
        """Mark overflowed weights in their own colour, with a legend beside the mask's."""
        overflowed = model.weights.overflow is not None
        if self.overflow_source is None:
            if not overflowed:
                return
            self._build_overflow_layer(model)
        assert self.overflow_source is not None and self.overflow_legend is not None
        self.overflow_source.data = self._overflow_data(model)
        shown = overflowed and model.state.view == "weights"
        self.overflow_renderer.visible = shown
        self.overflow_legend.visible = shown
        self.overflow_legend.items[1].visible = bool(model.state.causal)

    def add_overflow_layer(self, model: SimulationModel) -> None:
        """Carry the overflow layer and its legend from now on, shown only while a weight
        overflows (a page that recomputes in the browser needs it before any overflow)."""
        if self.overflow_source is None:
            self._build_overflow_layer(model)
        self._apply_overflow(model)

    def _build_overflow_layer(self, model: SimulationModel) -> None:
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
            name="heatmap_overflow_legend",
        )
        # Below the plot: it never hides a cell.
        self.figure.add_layout(self.overflow_legend, "below")
        without_glyph_copies(self.figure)

    def _apply_view(self, model: SimulationModel) -> None:
        view = model.state.view
        for name, renderer in self.renderers.items():
            renderer.visible = name == view
        self.figure.title.text = TITLES[view]
        self.colour_bar.title = COLOUR_BAR_TITLES[view]
        palette = WEIGHTS_PALETTE if view == "weights" else SCORES_PALETTE
        if self.mapper.palette != palette:
            # Only on a change of view: validating 256 colours costs more than the data.
            self.mapper.palette = palette
        self._apply_limits(model)

    def _apply_limits(self, model: SimulationModel) -> None:
        """The colour bar's range: [0, 1] for weights, symmetric around 0 for scores."""
        view = model.state.view
        if view == "weights":
            self.mapper.update(low=0.0, high=1.0)
            return
        scores = model.scores
        limit = max(scores.raw_limit if view == "raw" else scores.scaled_limit, 1e-9)
        self.mapper.update(low=-limit, high=limit)
