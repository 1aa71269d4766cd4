"""Builds an exported page: its two Bokeh documents (the figures), its JavaScript and data,
in one HTML file.

What the server does in Python after a control change, the page does in JavaScript
(``kernel.js``, ``text.js``, ``query.js`` and ``controller.js``); its controls are the
served page's, drawn by the same ``control_drawing.js`` from the same specs. This module
hands that JavaScript everything it needs as JSON.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from dataclasses import dataclass

from bokeh.core.json_encoder import serialize_json
from bokeh.document import Document
from bokeh.embed.bundle import Bundle, bundle_for_objs_and_resources
from bokeh.embed.elements import html_page_for_render_items
from bokeh.embed.util import standalone_docs_json_and_render_items
from bokeh.models import CustomJS, Model
from bokeh.resources import INLINE

from app.compat import UNCHANGED_STYLESHEETS_JS, without_model_definitions
from app.page import ASSETS
from app.page.assumptions import (
    SECTION_GROUPS,
    assumptions_config,
    section_css,
    section_histogram,
    section_html,
)
from app.page.bundle import OFFLINE_BUNDLE
from app.page.controls import CSS as CONTROLS_CSS
from app.page.controls import PRESET
from app.page.facts import (
    LESSON_HEADING,
    MORE_LABEL,
    SIDEBAR_PX,
    WIDE_PAGE_PX,
    with_breakpoints,
)
from app.page.figures import ALERT_TEXTS, DARK_FIGURE_THEME, build_views, figures_config, intro_html
from app.page.frames import frame_fields_spec
from app.page.head import HEAD
from app.page.kernel_data import (
    FIXED_CONTROLS,
    ExportData,
    payload,
    sample_limits,
    slider_grids,
)
from app.page.lesson import (
    FIGURES_SLOT,
    LESSON_CONTROLS,
    OUTPUT_SLOT,
    ROW_SLOT,
    build_lesson,
    collapse_section,
    faq_section,
    lesson_config,
    lesson_css,
    note_beyond_reach,
    output_spec,
    quiz_section,
    why_section,
    worked_section,
)
from app.page.offline_controls import first_screen, offline_controls, under_more, widget_specs
from app.page.theme import THEME_CSS
from app.page.training import build_training, default_grid, training_spec
from app.page.views.disclosure import boxed_disclosure_css
from app.page.views.readouts import READOUT_CSS
from app.page.views.training_grid import CSS as TRAINING_CSS
from app.simulation.model import SimulationModel
from app.simulation.parts import HISTOGRAM_BINS, HISTOGRAM_HALF_WIDTH
from app.simulation.presets import PRESETS, Preset, Reach, presets_within
from app.simulation.query import (
    SHOWN_CONTROLS,
    index_limits,
    limit_indexes,
    query_parameter_names,
    query_spec,
)
from app.simulation.spec import (
    HISTOGRAMS,
    OUTPUT,
    ROW,
    SCORES,
    SPEC,
    TITLE,
    VIEW,
    WEIGHTS,
    SimulationSpec,
    nearest_on_grid,
    page_spec,
)
from app.simulation.state import SimulationState


def page_controls(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The controls an exported page of ``spec`` offers (its ``offline`` ones)."""
    return tuple(control.name for control in offline_controls(spec))


def url_names(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The query parameters the page writes into its URL, in the served app's order (the
    preset, then the controls in the spec's order): the controls it offers and the seed it
    keeps. It keeps the others (``row``, ``embed``, a course page's own) as they came."""
    kept = {*page_controls(spec), *FIXED_CONTROLS, *LESSON_CONTROLS}
    return tuple(
        name for name in query_parameter_names(spec) if name not in spec.by_name or name in kept
    )


PAGE_CONTROLS = page_controls(SPEC)
"""The controls the app's exported page offers (app/simulation/spec.py's ``offline`` ones)."""

URL_NAMES = url_names(SPEC)
"""The query parameters the app's exported page writes into its URL (:func:`url_names`)."""

DRAWN_PARTS = {
    "scores": SCORES,
    "weights": WEIGHTS,
    "histograms": HISTOGRAMS,
    "view": VIEW,
    "row": ROW,
    "output": OUTPUT,
}
"""The model parts the page draws, by the names controller.js and kernel_source.js use for
them; its recompute graph names only these. The first four are the first screen's, asked
for on every change; the row comparison and the output are the lesson's, asked for when the
lesson is drawn."""


def initial_state(data: ExportData, spec: SimulationSpec = SPEC) -> SimulationState:
    """The served app's default state of ``spec``'s controls, moved onto the page's slider
    positions, with the exported seed."""
    grids = slider_grids(data)
    return SimulationState.for_spec(spec)(
        **{name: nearest_on_grid(spec.by_name[name].default, grid) for name, grid in grids.items()},
        **sample_limits(data)["fixed"],
    )


def page_presets(data: ExportData) -> dict[str, Preset]:
    """The preset scenes as this page shows them: each value on the page's own slider steps
    and at its fixed seed, a row within the scene's n (silently: a built-in scene asks for
    nothing the page lacks), and words that cite those values and the page's largest d_k."""
    grids = slider_grids(data)
    fixed = sample_limits(data)["fixed"]

    def fit(values: dict[str, object]) -> dict[str, object]:
        fitted = {
            name: nearest_on_grid(value, grids[name]) if name in grids else value  # type: ignore[arg-type]
            for name, value in values.items()
        }
        fitted.update({name: value for name, value in fixed.items() if name in fitted})
        limit_indexes(fitted, fitted)
        return fitted

    return presets_within(Reach(d_k_top=data.d_max), fit)


def presets_spec(data: ExportData | None = None) -> dict:
    """The preset scenes as data for query.js: key → label, words, values; those of the page
    ``data`` makes (:func:`page_presets`), or without it the served page's."""
    presets = PRESETS if data is None else page_presets(data)
    return {
        key: {
            "label": preset.label,
            "description": preset.description,
            "values": dict(preset.values),
        }
        for key, preset in presets.items()
    }


def page_widgets(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """What the page offers a widget for: what ``?controls=`` may name on it."""
    return (PRESET, *page_controls(spec))


def control_grids(spec: SimulationSpec = SPEC) -> dict[str, tuple[str, ...]]:
    """Each grid of controls on the page (its element's id in page.html.jinja) → the
    widgets controller.js draws into it, top to bottom: the first screen's, "More
    controls" (the preset scenes first, as on the served page, then the offline controls
    neither on the first screen nor in a lesson section) and each group of the lesson's
    assumptions section."""
    return {
        "sdpa-first": first_screen(spec),
        "sdpa-more": (PRESET, *under_more(spec)),
        **{f"sdpa-assumptions-{group}-controls": names for group, names in SECTION_GROUPS.items()},
    }


EMBED_PARAMETER = "embed"
"""The query parameter that asks for the embedded layout (app.simulation.query.parse_embed's)."""


def shown_controls_spec(spec: SimulationSpec = SPEC) -> dict:
    """What query.js needs to read ``?controls=`` as app.simulation.query.parse_shown_controls
    does: the parameter's name and the names the page can show, in ``spec``'s order."""
    widgets = page_widgets(spec)
    return {
        "parameter": SHOWN_CONTROLS,
        "names": [name for name in spec.showable if name in widgets],
        "first_screen": list(first_screen(spec)),
        "wide_px": max(WIDE_PAGE_PX, SIDEBAR_PX),
        "embed_parameter": EMBED_PARAMETER,
        "more_label": MORE_LABEL,
    }


def page_limits(data: ExportData, spec: SimulationSpec = SPEC) -> dict:
    """What query.js fits a link's values to (:func:`app.page.kernel_data.sample_limits`),
    ``controls``: what a preset is compared on (the controls offered and those fixed), and
    ``indexes``: a row past n is the last (:func:`app.simulation.query.index_limits`)."""
    return {
        **sample_limits(data),
        "controls": [*page_controls(spec), *FIXED_CONTROLS, *LESSON_CONTROLS],
        "indexes": index_limits(initial_state(data, spec).param.values()),
    }


def source_config(data: ExportData, curve_points: int, spec: SimulationSpec = SPEC) -> dict:
    """What the page's number source (kernel_source.js's ``KernelSource``) reads: the
    samples, the histograms' bins and curve, the values V, the parts it computes with their
    inputs (``spec``'s graph), and the frames' field names
    (:func:`app.page.frames.frame_fields_spec`)."""
    described = page_spec(spec, offline_only=True)
    return {
        "data": payload(data),
        "histogram": {
            "bins": HISTOGRAM_BINS,
            "half_width": HISTOGRAM_HALF_WIDTH,
            "curve_points": curve_points,
        },
        "output": output_spec(data),
        "parts": DRAWN_PARTS,
        "inputs": {part: described["inputs"].get(part, []) for part in DRAWN_PARTS.values()},
        "frame_fields": frame_fields_spec(),
    }


def page_config(data: ExportData, state: SimulationState, curve_points: int) -> dict:
    """Everything the page's JavaScript reads at load: the controls of ``state``'s spec, the
    texts and thresholds of app/simulation/spec.py, what its number source reads
    (:func:`source_config`: the samples among it), the URL rules and the figures' words and
    sizes."""
    spec = state.spec
    described = page_spec(spec, offline_only=True)
    grids = slider_grids(data)
    source = source_config(data, curve_points, spec)
    figures = figures_config()
    return {
        **described,
        **source,
        # The figures' dark look when the system prefers dark (controller.js).
        "dark_theme": DARK_FIGURE_THEME,
        # The spec's offline controls, each with the page's slider positions and first value.
        "controls": [
            {
                **control,
                "grid": grids.get(control["name"], control["grid"]),
                "default": getattr(state, control["name"]),
            }
            for control in described["controls"]
        ],
        "limits": page_limits(data, spec),
        # What control_drawing.js draws each widget from, and where each goes.
        "widgets": widget_specs(grids, page_presets(data), spec),
        "grids": {grid: list(names) for grid, names in control_grids(spec).items()},
        "query": query_spec(spec),
        "shown": shown_controls_spec(spec),
        **lesson_config(),
        "assumptions": assumptions_config(),
        "training": training_spec(default_grid(), data.d_values),
        "presets": presets_spec(data),
        "alerts": dict(ALERT_TEXTS),
        "url_names": list(url_names(spec)),
        "heatmap": figures["heatmap"],
        "histogram": {**source["histogram"], **figures["histogram"]},
        "texts": figures["texts"],
    }


def _ready_callback(function: str, models: dict[str, Model]) -> CustomJS:
    """A document's ready callback: hands the page script's ``function`` the document's
    models, by name."""
    views = ", ".join(models)
    return CustomJS(args=models, code=f"SdpaExport.{function}({{{views}}});")


@dataclass(frozen=True)
class PageDocuments:
    """The page's two Bokeh documents. ``first`` holds the first screen (the controls, the
    heatmap, the histograms) and is drawn as the page loads; ``sections`` holds the lesson
    sections' figures and controls, below the first screen or closed, and is drawn once the
    first screen is on it: BokehJS builds, lays out and paints every root's views before
    the page shows anything, so the lesson's would hold up the first paint."""

    first: Document
    sections: Document

    def get_model_by_name(self, name: str) -> Model | None:
        """The model called ``name`` in either document."""
        return self.first.get_model_by_name(name) or self.sections.get_model_by_name(name)


def _document(roots: Iterable[Model], ready: CustomJS) -> Document:
    document = Document(title=TITLE)
    # The template places each root by its name (page.html.jinja).
    for root in roots:
        document.add_root(root)
    document.js_on_event("document_ready", ready)
    return document


def build_document(
    data: ExportData, spec: SimulationSpec = SPEC
) -> tuple[PageDocuments, dict, dict]:
    """The page's Bokeh documents (named roots for the template), its JavaScript config and
    its first markup outside Bokeh by template variable (the readouts, the lesson's), for
    ``spec``'s controls."""
    state = initial_state(data, spec)
    model = SimulationModel(state)
    views = build_views(model)
    lesson = build_lesson(model, views.models["heatmap"])
    training = build_training(model, default_grid())
    first = _document(views.roots.values(), _ready_callback("start", views.models))
    histogram_roots, histogram_models = section_histogram(model)
    sections = _document(
        (
            *lesson.roots.values(),
            *histogram_roots.values(),
            *training.roots.values(),
        ),
        _ready_callback("startSections", {**lesson.models, **training.models, **histogram_models}),
    )
    config = page_config(data, state, curve_points=len(model.raw_histogram.curve_x))
    html = {"readouts": views.readouts, **lesson.html, **training.html, **section_html(model)}
    # The served lesson's words, saying where they cite a d_k past this page's.
    html = {name: note_beyond_reach(text, data.d_max) for name, text in html.items()}
    html["collapse_figures"] = lesson.collapse_figures
    html["training_figures"] = training.figures
    faq = [note_beyond_reach(answer, data.d_max) for answer in lesson.faq]
    html["faq_section"] = faq_section(faq)
    html["collapse_section"] = collapse_section(html)
    html["figures_slot"] = FIGURES_SLOT
    html["why_section"] = why_section(html)
    html["row_slot"], html["output_slot"] = ROW_SLOT, OUTPUT_SLOT
    html["worked_section"] = worked_section(html)
    html["quiz_section"] = quiz_section(html)
    return PageDocuments(first, sections), config, html


def inline_bundle(documents: PageDocuments) -> Bundle:
    """BokehJS for ``document``, inline, without any external ``<script src>`` or stylesheet.

    Bokeh adds the external files that every imported extension declares (Panel's
    es-module-shims, for one, once Panel is imported), whether the document uses them or
    not; the page uses none, and must not try to fetch anything.
    """
    bundle = bundle_for_objs_and_resources([documents.first, documents.sections], INLINE)
    return Bundle(js_raw=bundle.js_raw, css_raw=bundle.css_raw, hashes=bundle.hashes)


def _script_safe(text: str) -> str:
    # Inside <script>, only "</" can end the element early; JSON and our JS never need it.
    return text.replace("</", "<\\/")


def render_html(data: ExportData, spec: SimulationSpec = SPEC) -> str:
    """The complete, self-contained HTML page for ``data`` and ``spec``'s controls: BokehJS,
    scripts and data inline."""
    documents, config, markup = build_document(data, spec)
    scripts = "\n".join((UNCHANGED_STYLESHEETS_JS, OFFLINE_BUNDLE.read_text(encoding="utf-8")))
    if "</script" in scripts.lower():
        raise RuntimeError("an export script contains '</script', which would end it early")
    docs_json, render_items = standalone_docs_json_and_render_items([documents.first])
    later_json, later_items = standalone_docs_json_and_render_items([documents.sections])
    sections = {
        "docs_json": without_model_definitions(later_json),
        "render_items": [item.to_json() for item in later_items],
    }
    return html_page_for_render_items(
        inline_bundle(documents),
        docs_json,
        render_items,
        title=HEAD.title,
        template=(ASSETS / "page.html.jinja").read_text(encoding="utf-8"),
        template_variables={
            "sdpa_style": THEME_CSS
            + with_breakpoints((ASSETS / "page.css").read_text(encoding="utf-8"))
            + CONTROLS_CSS
            + boxed_disclosure_css()
            + READOUT_CSS
            + TRAINING_CSS
            + lesson_css()
            + section_css(),
            "sdpa_readouts": markup["readouts"],
            "sdpa_lesson": markup,
            "sdpa_config": _script_safe(json.dumps(config, separators=(",", ":"))),
            "sdpa_sections": _script_safe(serialize_json(sections)),
            "section_roots": later_items[0].roots,
            "sdpa_scripts": scripts,
            "sdpa_head": HEAD.escaped(),
            "sdpa_lesson_heading": html.escape(LESSON_HEADING),
            "sdpa_intro": intro_html(),
            "sdpa_more_label": MORE_LABEL,
            "sdpa_limits": {
                "n_max": data.n_max,
                "d_max": data.d_max,
                "d_steps": len(data.d_values),
                "seed": data.seed,
            },
        },
    )
