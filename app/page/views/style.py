"""Small styling helpers shared by the views' Bokeh figures."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, GlyphRenderer, HoverTool, Legend, LegendItem
from bokeh.plotting import figure as Figure


def view_figure(*, height: int, min_width: int, tools: str = "", **options: object) -> Figure:
    """A figure in the views' common look: as wide as its column (at least ``min_width``),
    ``height`` tall, without a toolbar, its title in 13 px; ``options`` are the figure's
    own (name, title, ranges, axis labels, ...)."""
    plot = Figure(
        sizing_mode="stretch_width",
        height=height,
        min_width=min_width,
        toolbar_location=None,
        tools=tools,
        **options,
    )
    plot.title.text_font_size = "13px"
    return plot


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


def compact_legend(items: list[LegendItem], columns: int = 2) -> Legend:
    """A borderless legend of small labels in ``columns`` columns, for above a plot."""
    return Legend(
        items=items,
        orientation="horizontal",
        ncols=columns,
        label_text_font_size="11px",
        glyph_width=18,
        padding=2,
        margin=0,
        spacing=10,
        border_line_alpha=0,
    )


def finish_figure(
    plot: Figure,
    items: list[LegendItem],
    *,
    columns: int = 2,
    hover: HoverTool | None = None,
) -> Figure:
    """Put a :func:`compact_legend` of ``items`` above ``plot`` (so it never hides a curve),
    add ``hover`` if given and drop the glyph copies (:func:`without_glyph_copies`)."""
    plot.add_layout(compact_legend(items, columns), "above")
    if hover is not None:
        plot.add_tools(hover)
    return without_glyph_copies(plot)


def band_with_line(
    plot: Figure,
    *,
    x: str,
    y: str,
    source: ColumnDataSource,
    colour: str,
    label: str,
    fill_alpha: float,
    line_width: float,
) -> LegendItem:
    """Draw column ``y`` as a line over the band between ``y_low`` and ``y_high`` (the
    spread over seeds or samples); return their legend entry."""
    band = plot.varea(
        x=x, y1=f"{y}_low", y2=f"{y}_high", source=source, fill_color=colour, fill_alpha=fill_alpha
    )
    line = plot.line(x=x, y=y, source=source, line_color=colour, line_width=line_width)
    return LegendItem(label=label, renderers=[line, band])
