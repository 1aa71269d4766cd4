"""One query's weights with and without the 1/√d_k scale, as side-by-side bars."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, DataRange1d, Range1d

from app.page.views.collapse import SCALED_COLOUR, UNSCALED_COLOUR
from app.page.views.style import legend_above, view_figure, without_glyph_copies
from app.simulation.model import SimulationModel
from app.simulation.parts import RowComparison

EXPLANATION = (
    "**One query, scaled vs unscaled.** Pick a query i (type it, or click a row of the "
    "heatmap). The blue bars are its weights with the 1/√d_k scale, the orange ones "
    "without: at large d_k the orange row piles onto a single key while the blue one "
    "keeps several keys in play."
)

BAR_OFFSET = 0.2

TITLE = "Query i = {row}: weights over {keys} keys (entropy in nats)"
"""The figure's title: the query shown and how many keys it may attend to."""

LEGEND = {True: "scaled, entropy {entropy}", False: "unscaled, entropy {entropy}"}
"""The legend's labels, by the scale, with each row's entropy (two decimals)."""


class RowCompareView:
    """Bars of the chosen query's weights, scaled and unscaled, with each one's entropy,
    built once for the model's state (lesson_drawing.js's RowDrawing draws every change)."""

    def __init__(self, model: SimulationModel) -> None:
        row = model.row
        self.scaled = ColumnDataSource(self._bars(row, scaled=True))
        self.unscaled = ColumnDataSource(self._bars(row, scaled=False))
        self.figure = view_figure(
            name="row_comparison",
            title=TITLE.format(row=row.row, keys=row.keys.size),
            x_range=DataRange1d(range_padding=0.02),
            y_range=Range1d(0, 1.05),
            x_axis_label="key j",
            y_axis_label="weight",
            height=260,
            min_width=260,
        )
        entropies = {True: row.scaled_entropy, False: row.unscaled_entropy}
        for scaled, source in ((True, self.scaled), (False, self.unscaled)):
            colour = SCALED_COLOUR if scaled else UNSCALED_COLOUR
            self.figure.vbar(
                x="x",
                top="weight",
                width=2 * BAR_OFFSET,
                source=source,
                fill_color=colour,
                line_color=colour,
                legend_label=LEGEND[scaled].format(entropy=f"{entropies[scaled]:.2f}"),
            )
        legend_above(self.figure)
        without_glyph_copies(self.figure)

    @staticmethod
    def _bars(row: RowComparison, *, scaled: bool) -> dict:
        offset = -BAR_OFFSET if scaled else BAR_OFFSET
        return {"x": row.keys + offset, "weight": row.scaled if scaled else row.unscaled}
