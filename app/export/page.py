"""Builds an exported page: one Bokeh document, its JavaScript and data, in one HTML file.

What the server does in Python after a control change, the page does in JavaScript
(``kernel.js``, ``text.js``, ``query.js`` and ``controller.js``, run from Bokeh
``CustomJS`` callbacks); this module hands that JavaScript everything it needs as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from bokeh.document import Document
from bokeh.embed.bundle import Bundle, bundle_for_objs_and_resources
from bokeh.embed.elements import html_page_for_render_items
from bokeh.embed.util import standalone_docs_json_and_render_items
from bokeh.models import CustomJS
from bokeh.resources import INLINE

from app.controls_spec import (
    D_K_DEFAULT,
    N_DEFAULT,
    TEMPERATURE_GRID,
    VIEWS,
    nearest_on_grid,
)
from app.derived import HISTOGRAM_BINS, HISTOGRAM_HALF_WIDTH
from app.export.data import ExportData, payload
from app.export.views import HISTOGRAM_HEADROOM, SHOWN_COLUMN, build_views
from app.export.widgets import SLIDER_LABELS, build_widgets, controls_column
from app.model import SimulationModel
from app.presets import PRESETS
from app.query import query_spec
from app.state import SimulationState
from app.views.heatmap import (
    COLOUR_BAR_TITLES,
    SCORES_PALETTE,
    TITLES,
    VIEW_COLUMNS,
    WEIGHTS_PALETTE,
)
from app.views.readouts import ONE_HOT_THRESHOLD, READOUT_CSS

ASSETS = Path(__file__).resolve().parent
SCRIPTS = ("kernel.js", "text.js", "query.js", "controller.js")
"""The page's own JavaScript, in load order (each uses the ones before it)."""

TITLE = "Scaled Dot-Product Attention: Score Matrix & √d_k Distribution"

PAGE_CONTROLS = ("d_k", "temperature", "n", "scaled", "view", "causal")
"""The controls an exported page offers (the seed is fixed when it is exported)."""

URL_NAMES = ("preset", *PAGE_CONTROLS, "seed")
"""The query parameters the page writes into its URL, in the served app's order; it keeps
the others (``row``, ``embed``, a course page's own) as they came."""


def initial_state(data: ExportData) -> SimulationState:
    """The served app's default state, moved onto the page's slider positions."""
    return SimulationState(
        d_k=int(nearest_on_grid(D_K_DEFAULT, data.d_values)),
        n=int(nearest_on_grid(N_DEFAULT, data.n_values)),
        seed=data.seed,
    )


def presets_spec() -> dict:
    """The preset scenes of app/presets.py as data for query.js: key → label, words, values."""
    return {
        key: {
            "label": preset.label,
            "description": preset.description,
            "values": dict(preset.values),
        }
        for key, preset in PRESETS.items()
    }


def page_config(data: ExportData, state: SimulationState, curve_points: int) -> dict:
    """Everything the page's JavaScript reads at load: samples, grids, bounds and words."""
    return {
        "data": payload(data),
        "defaults": {name: getattr(state, name) for name in PAGE_CONTROLS},
        "temperature_grid": TEMPERATURE_GRID,
        "views": VIEWS,
        "query": query_spec(),
        "presets": presets_spec(),
        "url_names": list(URL_NAMES),
        "heatmap": {
            "columns": VIEW_COLUMNS,
            "shown_column": SHOWN_COLUMN,
            "titles": TITLES,
            "colour_bar_titles": COLOUR_BAR_TITLES,
            "weights_palette": list(WEIGHTS_PALETTE),
            "scores_palette": list(SCORES_PALETTE),
        },
        "histogram": {
            "bins": HISTOGRAM_BINS,
            "half_width": HISTOGRAM_HALF_WIDTH,
            "curve_points": curve_points,
            "headroom": HISTOGRAM_HEADROOM,
        },
        "one_hot_threshold": ONE_HOT_THRESHOLD,
        "slider_labels": SLIDER_LABELS,
    }


def build_document(data: ExportData) -> tuple[Document, dict, str]:
    """The page's Bokeh document (named roots for the template), its JavaScript config and
    the readouts' first markup."""
    state = initial_state(data)
    model = SimulationModel(state)
    views = build_views(model)
    widgets = build_widgets(state, data.d_values, data.n_values)
    document = Document(title=TITLE)
    # The template places each root by its name (page.html.jinja).
    for root in (controls_column(widgets), *views.roots.values()):
        document.add_root(root)
    models = {**views.models, **widgets}
    names = ", ".join(models)
    document.js_on_event(
        "document_ready", CustomJS(args=models, code=f"SdpaExport.start({{{names}}});")
    )
    config = page_config(data, state, curve_points=len(model.raw_histogram.curve_x))
    return document, config, views.readouts


def inline_bundle(document: Document) -> Bundle:
    """BokehJS for ``document``, inline, without any external ``<script src>`` or stylesheet.

    Bokeh adds the external files that every imported extension declares (Panel's
    es-module-shims, for one, once Panel is imported), whether the document uses them or
    not; the page uses none, and must not try to fetch anything.
    """
    bundle = bundle_for_objs_and_resources([document], INLINE)
    return Bundle(js_raw=bundle.js_raw, css_raw=bundle.css_raw, hashes=bundle.hashes)


def _script_safe(text: str) -> str:
    # Inside <script>, only "</" can end the element early; JSON and our JS never need it.
    return text.replace("</", "<\\/")


def render_html(data: ExportData) -> str:
    """The complete, self-contained HTML page for ``data``: BokehJS, scripts and data inline."""
    document, config, readouts = build_document(data)
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
            "sdpa_style": (ASSETS / "page.css").read_text(encoding="utf-8") + READOUT_CSS,
            "sdpa_readouts": readouts,
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
