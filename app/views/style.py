"""Small styling helpers shared by the views' Bokeh figures."""

from __future__ import annotations

from bokeh.models import GlyphRenderer
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


def without_glyph_copies(plot: Figure) -> Figure:
    """Drop the glyph copies Bokeh adds to each renderer for unselected and muted drawing.

    No figure here selects or mutes anything, and each copy is one more model per session
    that Bokeh lists for every message it sends and the garbage collector walks.
    """
    for renderer in plot.renderers:
        if isinstance(renderer, GlyphRenderer):
            renderer.update(nonselection_glyph=None, muted_glyph=None)
    return plot
