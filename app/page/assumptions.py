"""The lesson's "When the assumptions break" section in an exported page: the served
section's words, the controls the file carries, its readouts and the two CSV downloads.

The page computes the section in JavaScript (``assumptions.js``); this module hands it the
served page's words, formats and file-name rules as data, and the markup it starts with.
"""

from __future__ import annotations

import html

from bokeh.models import Model

import sdpa_core
from app.page.figures import _fixed_y_range
from app.page.lesson import markdown_html
from app.page.offline_controls import OFFLINE_CONTROLS, section_controls
from app.page.views.assumptions import (
    ASSUMPTION_TEXTS,
    ASSUMPTIONS_TITLE,
    GROUP_BASIS,
    HEADING,
    LAW_CONTROLS,
    LAW_TEXT,
    PRECISION_TEXT,
    READOUT_GROUPS,
    SECTION_CSS,
    assumptions_html,
)
from app.page.views.heatmap import MASK_LABEL, OVERFLOW_COLOUR, OVERFLOW_LABEL
from app.page.views.histogram import HistogramView, histogram_words
from app.simulation.csv_files import (
    FILE_NAME_TEXTS,
    HISTOGRAM_COLUMNS,
    HISTOGRAM_LABEL,
    HISTOGRAM_NAME_CONTROLS,
    HISTOGRAM_ROW_NAMES,
    MATRIX_COLUMNS,
    MATRIX_LABEL,
    MATRIX_NAME_CONTROLS,
)
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROL_BY_NAME, PRECISION_CHOICES

SECTION = "assumptions"
"""The lesson section's name in app/simulation/spec.py (``Control.lesson_section``)."""

SECTION_CONTROLS = section_controls(SECTION)
"""The section's controls the file carries, top to bottom."""

SECTION_GROUPS = {
    "law": tuple(name for name in SECTION_CONTROLS if name in LAW_CONTROLS),
    "precision": tuple(name for name in SECTION_CONTROLS if name not in LAW_CONTROLS),
}
"""The section's controls the file carries, by group (app.page.views.assumptions): each group
sits beside what it changes, as on the served page."""

SERVER_ONLY = tuple(
    control.name
    for control in CONTROL_BY_NAME.values()
    if control.lesson_section == SECTION and control not in OFFLINE_CONTROLS
)
"""The section's controls only the served page offers."""


def server_only_note() -> str:
    """One sentence naming the section's controls this file leaves out, and why."""
    labels = " and ".join(f"“{CONTROL_BY_NAME[name].label}”" for name in SERVER_ONLY)
    return (
        f"{labels} need the served page (sdpa-sim): their histograms need two more tables "
        "of the 10,000 pooled pairs for every d_k step, which would take this file past 5 MB."
    )


DOWNLOADS = (
    ("matrix", MATRIX_LABEL),
    ("histogram", HISTOGRAM_LABEL),
)
"""The section's download buttons: what each writes and its words (the served ones)."""


def download_buttons_html() -> str:
    """The two "Download CSV" buttons; assumptions.js writes the file on a press."""
    return "".join(
        f'<button type="button" class="sdpa-download" data-download="{which}">'
        f"{html.escape(label)}</button>"
        for which, label in DOWNLOADS
    )


def section_html(model: SimulationModel) -> dict[str, str]:
    """The section's first markup, by template variable: the served explanation in its two
    parts, the note on what the file leaves out, each group's readouts for the model's
    state and the buttons."""
    return {
        "assumptions_title": html.escape(ASSUMPTIONS_TITLE),
        "assumptions_intro": markdown_html(f"{HEADING}\n\n{LAW_TEXT}"),
        "assumptions_precision_intro": markdown_html(PRECISION_TEXT),
        "assumptions_note": f'<p class="sdpa-server-only">{html.escape(server_only_note())}</p>',
        **{
            f"assumptions_{group}_readouts": assumptions_html(model, group)
            for group in READOUT_GROUPS
        },
        "assumptions_downloads": download_buttons_html(),
    }


HISTOGRAM_NAME = "assumptions_histogram"
"""The section's histogram's root name, and the prefix of its models' (controller.js)."""


def section_histogram(model: SimulationModel) -> tuple[dict[str, Model], dict[str, Model]]:
    """The served section's scaled histogram, for the template (root, by name) and for
    controller.js (its figure, bars, curve and curve legend entry, by the names figures.js
    draws a histogram into), its y range one the page sets as the first screen's are, at
    the served section's height."""
    words = histogram_words(model)["scaled"]
    view = HistogramView(HISTOGRAM_NAME, model.scaled_histogram, "q·k / √d_k", *words)
    _fixed_y_range(view)
    prefix = HISTOGRAM_NAME.removesuffix("_histogram")
    models: dict[str, Model] = {
        HISTOGRAM_NAME: view.figure,
        f"{prefix}_bars": view.bars,
        f"{prefix}_curve": view.curve,
        f"{prefix}_curve_item": view.curve_legend,
    }
    return {HISTOGRAM_NAME: view.figure}, models


def section_css() -> str:
    """The served section's stylesheet, its groups' rows (controls beside what they change,
    stacked below the two widths of app.page.views.assumptions.GROUP_BASIS) and the download
    buttons' look."""
    controls, effect = GROUP_BASIS
    return (
        SECTION_CSS
        + ".sdpa-assumption-group { display: flex; flex-wrap: wrap; gap: 8px 16px; }"
        + f".sdpa-assumption-group > * {{ flex: 2 1 {controls}px; min-width: 0; }}"
        + f".sdpa-assumption-group > .sdpa-assumption-effect {{ flex: 3 1 {effect}px; }}"
        + ".sdpa-downloads { display: flex; flex-wrap: wrap; gap: 8px; margin: 6px 0; }"
        + ".sdpa-download { flex: 1 1 240px; padding: 6px 10px; border-radius: 6px;"
        + " border: 1px solid #1976d2; background: #fff; color: #1976d2; cursor: pointer; }"
        + ".sdpa-server-only { font-size: 13px; opacity: 0.85; }"
    )


def assumptions_config() -> dict:
    """What assumptions.js needs: each format's exp overflow threshold, the CSV columns and
    file-name rules of app/simulation/csv_files.py, the overflow layer's words and the templates of
    the section's readouts (app.page.views.assumptions)."""
    return {
        "section": SECTION,
        "title": ASSUMPTIONS_TITLE,
        "controls": list(SECTION_CONTROLS),
        "overflow_thresholds": {
            name: sdpa_core.exp_overflow_threshold(name) for name in PRECISION_CHOICES
        },
        "csv": {
            "matrix_columns": list(MATRIX_COLUMNS),
            "histogram_columns": list(HISTOGRAM_COLUMNS),
            "histogram_rows": list(HISTOGRAM_ROW_NAMES),
            "matrix_name_controls": list(MATRIX_NAME_CONTROLS),
            "histogram_name_controls": list(HISTOGRAM_NAME_CONTROLS),
            "defaults": {name: CONTROL_BY_NAME[name].default for name in MATRIX_NAME_CONTROLS},
            "words": FILE_NAME_TEXTS,
        },
        "overflow": {"label": OVERFLOW_LABEL, "mask_label": MASK_LABEL, "colour": OVERFLOW_COLOUR},
        "texts": ASSUMPTION_TEXTS,
        "readout_groups": {group: list(tiles) for group, tiles in READOUT_GROUPS.items()},
        "histogram": HISTOGRAM_NAME.removesuffix("_histogram"),
    }
