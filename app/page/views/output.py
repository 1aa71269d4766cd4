"""What attention returns: the values V beside the output weights·V, as two heatmaps."""

from __future__ import annotations

from bokeh.models import ColorBar, ColumnDataSource, LinearColorMapper, Range1d
from bokeh.plotting import figure

from app.page.views.heatmap import SCORES_PALETTE
from app.page.views.style import view_figure, without_glyph_copies
from app.simulation.model import SimulationModel
from app.simulation.parts import OUTPUT_DIM

EXPLANATION = (
    "**What attention returns.** Each output row is a weighted average of the value rows "
    "V, with the query's weights. Spread-out weights blend many values into a soft mix; a "
    "one-hot row (scale off, large d_k) copies a single value row, so the output looks "
    "like a shuffled copy of V."
)


class OutputView:
    """Two float32 images on one diverging colour scale: V (keys × d_v) and weights·V,
    built once for the model's state (lesson_drawing.js's OutputDrawing draws every change)."""

    def __init__(self, model: SimulationModel) -> None:
        n = model.state.n
        self.source = ColumnDataSource(self._data(model))
        limit = model.output.limit
        self.mapper = LinearColorMapper(palette=SCORES_PALETTE, low=-limit, high=limit)
        self.values_figure = self._figure("values", "Values V", "key j", n)
        self.output_figure = self._figure(
            "output", "Output: weights · V", "query i", n, with_colour_bar=True
        )

    def _figure(
        self, column: str, title: str, y_label: str, n: int, *, with_colour_bar: bool = False
    ) -> figure:
        plot = view_figure(
            name=f"{column}_heatmap",
            title=title,
            x_range=Range1d(0, OUTPUT_DIM),
            y_range=Range1d(n, 0),
            x_axis_label="value dimension",
            y_axis_label=y_label,
            height=300,
            min_width=150,
            tools="hover",
            tooltips=[("value", f"@{column}{{0.000}}")],
        )
        plot.grid.visible = False
        plot.image(
            image=column,
            x=0,
            y=0,
            dw=OUTPUT_DIM,
            dh="n",
            source=self.source,
            color_mapper=self.mapper,
        )
        if with_colour_bar:
            colour_bar = ColorBar(color_mapper=self.mapper, width=10, padding=4, title="value")
            plot.add_layout(colour_bar, "right")
        return without_glyph_copies(plot)

    @staticmethod
    def _data(model: SimulationModel) -> dict[str, list]:
        return {
            "values": [model.output.values_image],
            "output": [model.output.output_image],
            "n": [model.state.n],
        }
