"""Builds an exported page: the served app's figures, Bokeh widgets and the JavaScript behind them.

The heatmap and histogram figures are the served app's own (``app.views``), built for the
page's first state, and the readouts use its markup and style, so the page looks like the
server's. What the server does in Python after a control change, the page does in
JavaScript (``kernel.js`` and friends, run from Bokeh ``CustomJS`` callbacks).
"""

from __future__ import annotations

import json
from pathlib import Path

from bokeh.document import Document
from bokeh.embed.bundle import Bundle, bundle_for_objs_and_resources
from bokeh.embed.elements import html_page_for_render_items
from bokeh.embed.util import standalone_docs_json_and_render_items
from bokeh.layouts import column
from bokeh.models import (
    CheckboxGroup,
    CustomJS,
    CustomJSHover,
    CustomJSTickFormatter,
    Div,
    HoverTool,
    RadioButtonGroup,
    Slider,
)
from bokeh.resources import INLINE

from app.controls_spec import (
    D_K_BOUNDS,
    D_K_DEFAULT,
    N_BOUNDS,
    N_DEFAULT,
    SEED_BOUNDS,
    TEMPERATURE_BOUNDS,
    TEMPERATURE_GRID,
    VIEWS,
    nearest_on_grid,
)
from app.derived import HISTOGRAM_BINS, HISTOGRAM_HALF_WIDTH
from app.export.data import ExportData, payload
from app.model import SimulationModel
from app.query import MAX_VALUE_LENGTH
from app.state import SimulationState
from app.views.heatmap import (
    COLOUR_BAR_TITLES,
    SCORES_PALETTE,
    TITLES,
    VIEW_COLUMNS,
    WEIGHTS_PALETTE,
    HeatmapView,
)
from app.views.histogram import DotProductHistograms
from app.views.readouts import ONE_HOT_THRESHOLD, READOUT_CSS, readouts_html

ASSETS = Path(__file__).resolve().parent
SCRIPTS = ("kernel.js", "text.js", "query.js", "controller.js")
"""The page's own JavaScript, in load order (each uses the ones before it)."""

TITLE = "Scaled Dot-Product Attention: Score Matrix & √d_k Distribution"

SLIDER_LABELS = {
    "d_k": "d_k (key dimension)",
    "temperature": "temperature",
    "n": "sequence length n",
}
"""Slider titles, also the accessible names of their handles."""

HEATMAP_TITLE_STYLES = {
    "font-size": "13px",
    "font-weight": "bold",
    "color": "#444444",
    "padding": "4px 10px 0",
}

NOTICE_STYLES = {
    "background": "#fff4e5",
    "color": "#663c00",
    "border": "1px solid #ffb74d",
    "border-radius": "6px",
    "padding": "8px 12px",
}


def initial_state(data: ExportData) -> SimulationState:
    """The served app's default state, moved onto the page's slider positions."""
    return SimulationState(
        d_k=int(nearest_on_grid(D_K_DEFAULT, data.d_values)),
        n=int(nearest_on_grid(N_DEFAULT, data.n_values)),
        seed=data.seed,
    )


def _own_hover_formatters(figure: object) -> None:
    """Give the figure's hover tools their own formatter models.

    app.views.heatmap shares module-level CustomJSHover instances between figures, and a
    Bokeh model can belong to one document only: without copies, a second export in the
    same process would fail.
    """
    for hover in figure.select(type=HoverTool):
        hover.formatters = {
            field: CustomJSHover(code=formatter.code, args=dict(formatter.args))
            if isinstance(formatter, CustomJSHover)
            else formatter
            for field, formatter in hover.formatters.items()
        }


def _on_change(name: str) -> CustomJS:
    return CustomJS(code=f"SdpaExport.onWidget({json.dumps(name)}, cb_obj);")


def _slider(name: str, grid: list, value: float) -> Slider:
    # The slider moves over grid positions (log steps); its label shows the grid value.
    slider = Slider(
        start=0,
        end=len(grid) - 1,
        step=1,
        value=grid.index(nearest_on_grid(value, grid)),
        title=SLIDER_LABELS[name],
        format=CustomJSTickFormatter(
            code=f"return SdpaExport.sliderLabel({json.dumps(name)}, tick);"
        ),
        sizing_mode="stretch_width",
        name=f"{name}_slider",
    )
    slider.js_on_change("value", _on_change(name))
    return slider


def _toggle(label: str, active: bool, name: str) -> CheckboxGroup:
    # A one-box CheckboxGroup: unlike Bokeh's Checkbox, it wraps the box in its <label>, which
    # gives the box an accessible name.
    return CheckboxGroup(labels=[label], active=[0] if active else [], name=name)


def _controls(data: ExportData, state: SimulationState) -> dict[str, object]:
    widgets: dict[str, object] = {
        "d_k_slider": _slider("d_k", data.d_values, state.d_k),
        "temperature_slider": _slider("temperature", TEMPERATURE_GRID, state.temperature),
        "n_slider": _slider("n", data.n_values, state.n),
        "scaled_toggle": _toggle("scale by 1/√d_k", state.scaled, "scaled"),
        "causal_toggle": _toggle("causal mask", state.causal, "causal"),
        "view_buttons": RadioButtonGroup(
            labels=list(VIEWS.values()),
            active=list(VIEWS).index(state.view),
            orientation="vertical",
            sizing_mode="stretch_width",
            name="view",
        ),
    }
    widgets["scaled_toggle"].js_on_change("active", _on_change("scaled"))
    widgets["causal_toggle"].js_on_change("active", _on_change("causal"))
    widgets["view_buttons"].js_on_change("active", _on_change("view"))
    return widgets


def page_config(data: ExportData, state: SimulationState, curve_points: int) -> dict:
    """Everything the page's JavaScript reads at load: samples, grids, bounds and words."""
    return {
        "data": payload(data),
        "defaults": {name: getattr(state, name) for name in VIEW_STATE},
        "temperature_grid": TEMPERATURE_GRID,
        "views": VIEWS,
        "query": {
            "bounds": {
                "d_k": list(D_K_BOUNDS),
                "temperature": list(TEMPERATURE_BOUNDS),
                "n": list(N_BOUNDS),
                "seed": list(SEED_BOUNDS),
            },
            "views": list(VIEWS),
            "maxLength": MAX_VALUE_LENGTH,
        },
        "heatmap": {
            "columns": VIEW_COLUMNS,
            "titles": TITLES,
            "colour_bar_titles": COLOUR_BAR_TITLES,
            "weights_palette": list(WEIGHTS_PALETTE),
            "scores_palette": list(SCORES_PALETTE),
        },
        "histogram": {
            "bins": HISTOGRAM_BINS,
            "half_width": HISTOGRAM_HALF_WIDTH,
            "curve_points": curve_points,
        },
        "one_hot_threshold": ONE_HOT_THRESHOLD,
        "slider_labels": SLIDER_LABELS,
    }


VIEW_STATE = ("d_k", "temperature", "n", "scaled", "view", "causal")
"""The controls an exported page offers (the seed is fixed when it is exported)."""


def build_document(data: ExportData) -> tuple[Document, dict]:
    """The page's Bokeh document (named roots for the template) and its JavaScript config."""
    state = initial_state(data)
    model = SimulationModel(state)
    heatmap = HeatmapView(model)
    _own_hover_formatters(heatmap.figure)
    # The served heatmap outlines the query of its row comparison, which the page lacks.
    for outline in heatmap.figure.select(name="row_outline"):
        outline.visible = False
    histograms = DotProductHistograms(model)
    readouts = Div(
        text=readouts_html(model),
        # Bokeh shows a Div's markup inline-block (as wide as its text): the tiles need the
        # full width to sit in one row.
        stylesheets=[READOUT_CSS, ".bk-clearfix { display: block !important; }"],
        sizing_mode="stretch_width",
        name="readouts",
    )
    # Plain text only: notices quote (filtered) URL values.
    notice = Div(
        text="",
        render_as_text=True,
        visible=False,
        styles=NOTICE_STYLES,
        sizing_mode="stretch_width",
        name="notice",
    )
    # The title goes above the figure as text that wraps: in a Bokeh title the longest one
    # overflows a phone-wide heatmap.
    heatmap_title = Div(
        text=TITLES[state.view],
        render_as_text=True,
        styles=HEATMAP_TITLE_STYLES,
        sizing_mode="stretch_width",
        name="heatmap_title",
    )
    heatmap.figure.title.text = ""
    widgets = _controls(data, state)
    view_label = Div(text="heatmap view", styles={"font-size": "13px"})
    controls = column(
        *(widgets[name] for name in ("d_k_slider", "temperature_slider", "n_slider")),
        widgets["scaled_toggle"],
        widgets["causal_toggle"],
        view_label,
        widgets["view_buttons"],
        sizing_mode="stretch_width",
        name="controls",
    )
    plots = column(
        histograms.raw.figure,
        histograms.scaled.figure,
        sizing_mode="stretch_width",
        name="histograms",
    )
    models = {
        "source": heatmap.source,
        "mapper": heatmap.mapper,
        "image": heatmap.renderer,
        "heatmap": heatmap.figure,
        "heatmap_title": heatmap_title,
        "colour_bar": heatmap.colour_bar,
        "readouts": readouts,
        "notice": notice,
        **widgets,
    }
    for which, view in (("raw", histograms.raw), ("scaled", histograms.scaled)):
        models[f"{which}_histogram"] = view.figure
        models[f"{which}_bars"] = view.bars
        models[f"{which}_curve"] = view.curve
        models[f"{which}_curve_item"] = view.figure.legend[0].items[1]
    document = Document(title=TITLE)
    heatmap_panel = column(
        heatmap_title, heatmap.figure, sizing_mode="stretch_width", name="heatmap_panel"
    )
    for root in (notice, controls, heatmap_panel, plots, readouts):
        document.add_root(root)
    names = ", ".join(models)
    document.js_on_event(
        "document_ready", CustomJS(args=models, code=f"SdpaExport.start({{{names}}});")
    )
    config = page_config(data, state, curve_points=len(model.raw_histogram.curve_x))
    return document, config


def _script_safe(text: str) -> str:
    # Inside <script>, only "</" can end the element early; JSON and our JS never need it.
    return text.replace("</", "<\\/")


def inline_bundle(document: Document) -> Bundle:
    """BokehJS for ``document``, inline, without any external ``<script src>`` or stylesheet.

    Bokeh adds the external files that every imported extension declares (Panel's
    es-module-shims, for one, once Panel is imported), whether the document uses them or
    not; the page uses none, and must not try to fetch anything.
    """
    bundle = bundle_for_objs_and_resources([document], INLINE)
    return Bundle(js_raw=bundle.js_raw, css_raw=bundle.css_raw, hashes=bundle.hashes)


def render_html(data: ExportData) -> str:
    """The complete, self-contained HTML page for ``data``: BokehJS, scripts and data inline."""
    document, config = build_document(data)
    scripts = "\n".join((ASSETS / name).read_text(encoding="utf-8") for name in SCRIPTS)
    if "</script" in scripts.lower():
        raise RuntimeError("an export script contains '</script', which would end it early")
    docs_json, render_items = standalone_docs_json_and_render_items([document])
    return html_page_for_render_items(
        inline_bundle(document),
        docs_json,
        render_items,
        title=TITLE,
        template=(ASSETS / "page.html.jinja").read_text(encoding="utf-8"),
        template_variables={
            "sdpa_style": (ASSETS / "page.css").read_text(encoding="utf-8"),
            "sdpa_config": _script_safe(json.dumps(config, separators=(",", ":"))),
            "sdpa_scripts": scripts,
            "sdpa_title": TITLE,
            "sdpa_limits": {
                "n_max": data.n_max,
                "d_max": data.d_max,
                "d_steps": len(data.d_values),
                "seed": data.seed,
            },
        },
    )
