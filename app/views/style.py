"""Small styling helpers shared by the views' Bokeh figures."""

from __future__ import annotations

from bokeh.plotting import figure as Figure


def legend_above(plot: Figure, *, spacing: int = 12) -> None:
    """Move the figure's legend above the plot as one compact row.

    Above the plot, the legend never hides bars or curves, whatever the data.
    """
    legend = plot.legend[0]
    legend.update(
        orientation="horizontal",
        label_text_font_size="11px",
        padding=2,
        margin=0,
        spacing=spacing,
        border_line_alpha=0,
    )
    plot.add_layout(legend, "above")
