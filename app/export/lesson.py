"""The lesson below an exported page's first screen, from the served page's own sources.

The collapse curves are the served view's figures (app/views/collapse.py), their numbers
precomputed by :mod:`sdpa_core` at export time for every temperature the slider offers;
the texts are the served page's constants, rendered from their Markdown here. The page's
lesson.js redraws the figures from this data as the controls move.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np
from bokeh.models import Model
from markdown_it import MarkdownIt

from app.controls_spec import CONTROL_BY_NAME
from app.lesson_text import COLLAPSE_CURVES
from app.model import SimulationModel
from app.views.collapse import (
    COLLAPSE_D_VALUES,
    COLLAPSE_HEADING,
    COLLAPSE_N,
    COLLAPSE_TRIALS,
    MARKER_CAPTION,
    MARKER_CURVES,
    METRICS,
    SCALED_COLOUR,
    UNSCALED_COLOUR,
    CollapseView,
    curves,
    references_caption,
    uniform_references,
)

BAND_PARTS = ("mean", "low", "high")
"""What each metric of a curve carries, in the order the page's data holds them."""


def markdown_html(text: str) -> str:
    """Trusted Markdown (the lesson's constants) as HTML, as the served Markdown pane shows it."""
    return MarkdownIt("commonmark").render(text)


def encode_float64(array: np.ndarray) -> str:
    """Base64 of the little-endian float64 bytes of ``array`` (what lesson.js decodes)."""
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f8").tobytes()).decode("ascii")


def collapse_table(temperatures: tuple[float, ...]) -> np.ndarray:
    """The served curves at each temperature: shape (temperature, scaled then unscaled,
    metric, mean/low/high, d_k point), float64, exactly as sdpa_core has them."""
    table = np.empty((len(temperatures), 2, len(METRICS), len(BAND_PARTS), len(COLLAPSE_D_VALUES)))
    for t, temperature in enumerate(temperatures):
        pair = curves(temperature)
        for s, scaled in enumerate((True, False)):
            for m, metric in enumerate(METRICS):
                band = getattr(pair[scaled], metric.name)
                for b, part in enumerate(BAND_PARTS):
                    table[t, s, m, b] = getattr(band, part)
    return table


def collapse_spec() -> dict:
    """What lesson.js draws the collapse curves from: the slider's temperatures, the curves'
    d_k points and table (:func:`collapse_table`), the metrics' names, the words and
    colours of the two curves and the marker's caption with its numbers to fill in
    (``{0}`` d_k, ``{1}`` which curves, ``{2}`` the temperature)."""
    temperatures = tuple(CONTROL_BY_NAME["temperature"].grid)
    return {
        "temperatures": list(temperatures),
        "d_values": list(COLLAPSE_D_VALUES),
        "metrics": [metric.name for metric in METRICS],
        "labels": ["scaled", "unscaled"],
        "colours": [SCALED_COLOUR, UNSCALED_COLOUR],
        "which": [MARKER_CURVES[True], MARKER_CURVES[False]],
        "caption": MARKER_CAPTION.format(
            d_k="{0}", which="{1}", temperature="{2}", n=COLLAPSE_N, trials=COLLAPSE_TRIALS
        ),
        "table": encode_float64(collapse_table(temperatures)),
    }


@dataclass
class LessonViews:
    """The lesson's Bokeh roots (for the template, by name), the models lesson.js updates
    (by the names it uses) and its fixed HTML (by template variable)."""

    roots: dict[str, Model]
    models: dict[str, Model]
    html: dict[str, str]


def build_lesson(model: SimulationModel) -> LessonViews:
    """The lesson's views for the model's state."""
    collapse = CollapseView(model)
    roots: dict[str, Model] = {fig.name: fig for fig in collapse.figures}
    models: dict[str, Model] = {
        "collapse_scaled": collapse.scaled_source,
        "collapse_unscaled": collapse.unscaled_source,
        "collapse_marker": collapse.marker_source,
    }
    html = {
        "collapse_intro": markdown_html(f"{COLLAPSE_HEADING}\n\n{COLLAPSE_CURVES}"),
        "collapse_caption": collapse.caption.html,
        "collapse_references": references_caption(uniform_references()),
    }
    return LessonViews(roots=roots, models=models, html=html)
