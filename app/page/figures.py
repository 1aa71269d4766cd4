"""The served app's figures and readouts, adapted for a page that updates them in JavaScript.

The heatmap and histograms are ``app.page.views``' own, so the page looks like the server's; the
changes below are the ones a page without a server needs.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import numpy as np
from bokeh.layouts import column
from bokeh.models import Div, HoverTool, LinearColorMapper, Model, Range1d

from app.page.facts import (
    HEATMAP_MIN_SIDE,
    HEATMAP_SCREEN_FRACTION,
    HISTOGRAM_HEIGHT,
    NOTICE_TITLE,
    SCENE_TITLE,
)
from app.page.views.alert_box import DARK_COLOURS
from app.page.views.heatmap import (
    COLOUR_BAR_TITLES,
    LEGEND_KEY_NAME,
    ROW_OUTLINE_GAP,
    SCORES_PALETTE,
    TITLES,
    VIEW_COLUMNS,
    WEIGHTS_PALETTE,
    HeatmapView,
)
from app.page.views.histogram import HISTOGRAM_TEXTS, DotProductHistograms, HistogramView
from app.page.views.readouts import READOUT_TEXTS, readouts_html
from app.simulation.model import SimulationModel
from app.simulation.spec import (
    HISTOGRAMS,
    INTRO,
    ONE_HOT_THRESHOLD,
    SCORES,
    UNIFORM_ENTROPY_FRACTION,
    VIEW,
    WEIGHTS,
)

SHOWN_COLUMN = "shown"
"""Heatmap source column the page's image glyph draws: a copy of the current view's image."""

HISTOGRAM_HEADROOM = 1.05
"""Top of a histogram's y range over its highest bar or curve point: the 5 % of padding a
Bokeh DataRange1d (the served figures' y range) adds above the data."""

HEATMAP_TITLE_STYLES = {
    "font-size": "13px",
    "font-weight": "bold",
    "color": "#444444",
    "padding": "4px 10px 0",
}

NOTICE_STYLES = {
    "margin-bottom": "6px",
    "background": "#fff4e5",
    "color": "#663c00",
    "border": "1px solid #ffb74d",
    "border-radius": "6px",
    "padding": "8px 12px",
}


SCENE_STYLES = {
    "background": "#e5f6fd",
    "color": "#014361",
    "border": "1px solid #81d4fa",
    "border-radius": "6px",
    "padding": "8px 12px",
    "margin-bottom": "8px",
}
"""The preset scene's box: the colours of the served page's info alert."""


ALERT_TEXTS = {
    "scene": SCENE_TITLE + ": {label}. {description}",
    "notice": NOTICE_TITLE + ". {notices}",
}
"""The scene's and the notice's box as one line of text each, the served alert's title
first (app.served.layout), as ``str.format`` templates that controller.js fills with text.js's
``fill``: ``label`` and ``description`` are the preset's, ``notices`` the notices joined by
spaces (as the served session joins them)."""


FIGURE_PARTS = {"scores": SCORES, "weights": WEIGHTS, "histograms": HISTOGRAMS, "view": VIEW}
"""The model parts the first-screen figures draw, by the names figures.js gives them."""


def intro_html(text: str = INTRO) -> str:
    """The spec's intro paragraph as HTML: its text escaped, ``**bold**`` as ``<strong>``
    (the only Markdown it uses), as both pages show it above the lesson."""
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(text, quote=False))


def figures_config() -> dict:
    """What figures.js's FirstScreenFigures reads: the parts' names, the heatmap's columns,
    titles and palettes (and how heatmap_frame.js sizes its frame), the histograms'
    headroom, the readouts' and histograms' templates
    (which text.js fills as the server does) and the verdict's thresholds."""
    return {
        "parts": dict(FIGURE_PARTS),
        "heatmap": {
            "columns": VIEW_COLUMNS,
            "shown_column": SHOWN_COLUMN,
            "titles": TITLES,
            "colour_bar_titles": COLOUR_BAR_TITLES,
            "weights_palette": list(WEIGHTS_PALETTE),
            "scores_palette": list(SCORES_PALETTE),
            "outline_gap": ROW_OUTLINE_GAP,
            "frame": {"min_side": HEATMAP_MIN_SIDE, "screen_fraction": HEATMAP_SCREEN_FRACTION},
        },
        "histogram": {"headroom": HISTOGRAM_HEADROOM},
        "texts": {"readouts": READOUT_TEXTS, "histograms": HISTOGRAM_TEXTS},
        "one_hot_threshold": ONE_HOT_THRESHOLD,
        "uniform_entropy_fraction": UNIFORM_ENTROPY_FRACTION,
        "intro_html": intro_html(),
    }


def dark_box_css(severity: str) -> str:
    """The box's colours while the system prefers dark: the served alert's of ``severity``
    in the dark theme (app.page.views.alert_box). Its light colours are inline styles, which only
    an ``!important`` rule outweighs."""
    background, text, border = DARK_COLOURS[severity]
    return (
        "@media (prefers-color-scheme: dark) { :host { "
        f"background: {background} !important; color: {text} !important; "
        f"border-color: {border} !important; }} }}"
    )


def _hidden_text_box(name: str, styles: dict[str, str], severity: str) -> Div:
    """A box of plain text (never markup), hidden until the page fills it."""
    return Div(
        text="",
        render_as_text=True,
        visible=False,
        styles=styles,
        stylesheets=[dark_box_css(severity)],
        sizing_mode="stretch_width",
        name=name,
    )


def _show_through_one_column(heatmap: HeatmapView, view: str) -> None:
    """Make the image glyph draw :data:`SHOWN_COLUMN`, which holds the current view's image.

    BokehJS keeps the colours it mapped from the old column when only the glyph's column
    changes, so the page switches views by changing the data instead. The raw, scaled and
    weight columns stay for the hover.
    """
    data = heatmap.source.data
    data[SHOWN_COLUMN] = data[VIEW_COLUMNS[view]]
    # The view has one renderer per column; the page keeps one, drawing the shown one.
    shown, *others = heatmap.renderers.values()
    shown.update(visible=True, name="heatmap_image")
    for renderer in others:
        heatmap.figure.renderers.remove(renderer)
    for hover in heatmap.figure.select(type=HoverTool):
        hover.renderers = [shown]
    for glyph in (shown.glyph, shown.nonselection_glyph, shown.muted_glyph):
        if glyph is not None and glyph != "auto":
            glyph.image = SHOWN_COLUMN


def _fixed_y_range(view: HistogramView) -> None:
    """Replace the histogram's auto-ranging y range by a plain one the page sets itself.

    The page knows the highest bar and curve point when it draws them; a DataRange1d would
    make BokehJS scan the data and lay the figure out again on every d_k change.
    """
    top = max(float(np.max(view.bars.data["top"])), float(np.max(view.curve.data["y"])))
    view.figure.y_range = Range1d(0, HISTOGRAM_HEADROOM * top)


@dataclass
class PageViews:
    """The page's figures and text panels: ``roots`` for the template, ``models`` for the
    JavaScript (by the names controller.js uses), and the readouts' first markup.

    The readouts are plain HTML in the page, outside Bokeh: replacing a Bokeh Div's text
    costs a layout pass (about 5 ms a change), setting an element's markup does not.
    """

    roots: dict[str, Model]
    models: dict[str, Model]
    readouts: str


def _detach_overflow_legend(heatmap: HeatmapView) -> list[Model]:
    """Take the overflow legend out of the heatmap figure and hide its keys, for as long as
    no weight overflows (controller.js puts them back while one does); return the keys.

    BokehJS measures a legend's labels on every paint of its figure, shown or not, and
    paints its key glyphs: a hidden legend cost every move about 1.4 ms of the heatmap's
    paint (docs/performance.md).
    """
    legend = heatmap.overflow_legend
    assert not legend.visible
    heatmap.figure.below = [item for item in heatmap.figure.below if item is not legend]
    keys = [r for r in heatmap.figure.renderers if r.name == LEGEND_KEY_NAME]
    for key in keys:
        key.visible = False
    return keys


def build_views(model: SimulationModel) -> PageViews:
    """The heatmap, histograms, readouts and notice for the model's state."""
    heatmap = HeatmapView(model)
    overflow_keys = _detach_overflow_legend(heatmap)
    _show_through_one_column(heatmap, model.state.view)
    # The title goes above the figure as text that wraps: in a Bokeh title the longest one
    # overflows a phone-wide heatmap.
    heatmap_title = Div(
        text=TITLES[model.state.view],
        render_as_text=True,
        styles=HEATMAP_TITLE_STYLES,
        sizing_mode="stretch_width",
        name="heatmap_title",
    )
    heatmap.figure.title.text = ""
    # BokehJS lays the whole figure out again whenever the colour bar's mapper maps an
    # image, so on every move; a mapper of its own, moved with the image's, changes only
    # when the colours' range or palette does.
    image_mapper = heatmap.mapper
    heatmap.colour_bar.color_mapper = LinearColorMapper(
        palette=image_mapper.palette,
        low=image_mapper.low,
        high=image_mapper.high,
        nan_color=image_mapper.nan_color,
    )
    # The heatmap's frame is square, sized in the browser to its column and its screen
    # (heatmap_frame.js), so the heatmap and the raw histogram fit one screen from a phone
    # to a wide window.
    histograms = DotProductHistograms(model)
    # Notices quote (filtered) URL values; the scene is a preset's label and words.
    notice = _hidden_text_box("notice", NOTICE_STYLES, "warning")
    scene = _hidden_text_box("scene", SCENE_STYLES, "info")
    models: dict[str, Model] = {
        "source": heatmap.source,
        "mapper": heatmap.mapper,
        "heatmap": heatmap.figure,
        "heatmap_title": heatmap_title,
        "colour_bar": heatmap.colour_bar,
        "colour_bar_mapper": heatmap.colour_bar.color_mapper,
        "notice": notice,
        "scene": scene,
        # The dashed outline of the query the row comparison shows (lesson.js moves it).
        "row_outline": heatmap.row_outline,
        # Overflowed weights in their own colour, with a legend beside the mask's.
        "overflow_source": heatmap.overflow_source,
        "overflow_renderer": heatmap.overflow_renderer,
        "overflow_legend": heatmap.overflow_legend,
        "overflow_keys": overflow_keys,
    }
    for which, view in (("raw", histograms.raw), ("scaled", histograms.scaled)):
        _fixed_y_range(view)
        view.figure.height = HISTOGRAM_HEIGHT
        models[f"{which}_histogram"] = view.figure
        models[f"{which}_bars"] = view.bars
        models[f"{which}_curve"] = view.curve
        models[f"{which}_curve_item"] = view.figure.legend[0].items[1]
    roots: dict[str, Model] = {
        "scene": scene,
        "notice": notice,
        "heatmap_panel": column(
            heatmap_title, heatmap.figure, sizing_mode="stretch_width", name="heatmap_panel"
        ),
        "histograms": column(
            histograms.raw.figure,
            histograms.scaled.figure,
            sizing_mode="stretch_width",
            name="histograms",
        ),
    }
    return PageViews(roots=roots, models=models, readouts=readouts_html(model))


DARK_TEXT = "#e0e0e0"
DARK_FIGURE_THEME: dict[str, dict[str, object]] = {
    "Figure": {
        "background_fill_color": "#1e1e1e",
        "border_fill_color": "#121212",
        "outline_line_color": None,
    },
    "LinearAxis": {
        "axis_line_color": "#9e9e9e",
        "major_tick_line_color": "#9e9e9e",
        "minor_tick_line_color": "#9e9e9e",
        "major_label_text_color": DARK_TEXT,
        "axis_label_text_color": DARK_TEXT,
    },
    "Grid": {"grid_line_color": "#3a3a3a"},
    "Title": {"text_color": DARK_TEXT},
    "Legend": {
        "background_fill_color": "#1e1e1e",
        "border_line_color": "#5f5f5f",
        "label_text_color": DARK_TEXT,
    },
    "ColorBar": {
        "background_fill_color": "#121212",
        "major_label_text_color": DARK_TEXT,
        "title_text_color": DARK_TEXT,
        "major_tick_line_color": "#9e9e9e",
    },
    "Div": {"styles": {**HEATMAP_TITLE_STYLES, "color": DARK_TEXT}},
}
"""What the figures' models take in dark mode, by Bokeh model type (the light look is the
one they are built with). Panel Material UI themes the page's own document in the browser;
the embedded figures' documents are this component's to theme."""
