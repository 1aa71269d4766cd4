"""The lesson's "Does the scale matter for learning?" in an exported page, precomputed.

A static file cannot train, so the default grid (:func:`sdpa_core.training_grid`, through
the process's :data:`app.simulation.training.SHARED_GRID`: the results the package ships,
read in milliseconds, or computed once per process if they are missing or stale) is
embedded: the bands the served view draws for each grid d_k, as float32, and for each d_k
the page offers, the grid d_k the served view shows there and the note it writes under the
figures. The summary plot and its sentence do not move with the controls:
they are drawn here. lesson.js and controller.js redraw the bands as d_k moves.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
from bokeh.models import Model

from app.page.kernel_data import encode_float32
from app.page.lesson import markdown_html
from app.page.views.training_grid import (
    BAND_COLUMNS,
    HEADING,
    OFFLINE_INTRO,
    TRAIN_NEEDS_SERVER,
    TRAINING_TITLE,
    TrainingFigures,
    band_data,
    grid_note,
    nearest_grid_d_k,
    summary_html,
)
from app.simulation.model import SimulationModel
from app.simulation.training import SHARED_GRID
from sdpa_core import TrainingGrid, describe_summary

CURVE_COLUMNS = BAND_COLUMNS[1:]
"""The band columns the page's table holds for each cell (the steps are given once)."""


def default_grid() -> TrainingGrid:
    """The default training grid, read from the shipped results the first time this process
    asks (computed, about 10 s of CPU, if they are missing or stale) and shared with
    everything else in the process that shows it."""
    return SHARED_GRID.request(background=False).result()


def grid_d_values(training_grid: TrainingGrid) -> list[int]:
    """The grid's d_k, in its order (that of its summary's rows)."""
    return [row.d_k for row in training_grid.summary.rows]


def band_table(training_grid: TrainingGrid) -> np.ndarray:
    """The served view's bands (:func:`app.page.views.training_grid.band_data`) of every cell:
    shape (grid d_k, scaled then unscaled, :data:`CURVE_COLUMNS`, step), float64."""
    return np.array(
        [
            [
                [band_data(training_grid.cell(d_k, scaled))[name] for name in CURVE_COLUMNS]
                for scaled in (True, False)
            ]
            for d_k in grid_d_values(training_grid)
        ]
    )


def training_spec(training_grid: TrainingGrid, d_values: list[int]) -> dict:
    """What lesson.js and controller.js draw the section from: the disclosure's title, the
    steps and the band table (:func:`band_table`, float32 in base64) with its columns, the
    grid's d_k, and for each d_k of the page (``d_values``, in order) the index of the grid
    d_k whose bands the served view shows there and the note it writes under them."""
    grid_d = grid_d_values(training_grid)
    first = training_grid.cells[0]
    return {
        "title": TRAINING_TITLE,
        "columns": list(CURVE_COLUMNS),
        "steps": [int(step) for step in band_data(first)["step"]],
        "grid_d_values": grid_d,
        "shown": [grid_d.index(nearest_grid_d_k(d)) for d in d_values],
        "notes": [grid_note(training_grid, d) for d in d_values],
        "table": encode_float32(band_table(training_grid)),
    }


@dataclass
class TrainingSection:
    """The section's Bokeh roots (by name, for the template), the models controller.js
    updates (by the names it uses) and its fixed HTML (by template variable)."""

    roots: dict[str, Model]
    models: dict[str, Model]
    html: dict[str, str]
    figures: list[str]
    """The figures' root names, left to right."""


def build_training(model: SimulationModel, training_grid: TrainingGrid) -> TrainingSection:
    """The served section's figures without the student's run, the summary drawn (the bands
    are left to the page, which draws them from :func:`training_spec` as it starts); its
    words, with the line that says Train needs the server in place of the buttons."""
    drawing = TrainingFigures(model.state.d_k, run=False)
    drawing.show_grid(training_grid)
    return TrainingSection(
        roots={fig.name: fig for fig in drawing.figures},
        models={
            "training_scaled": drawing.scaled_source,
            "training_unscaled": drawing.unscaled_source,
            "training_span": drawing.current_span,
        },
        html={
            "training_title": html.escape(TRAINING_TITLE),
            "training_intro": markdown_html(f"{HEADING}\n\n{OFFLINE_INTRO}"),
            "training_needs_server": markdown_html(TRAIN_NEEDS_SERVER),
            "training_note": grid_note(training_grid, model.state.d_k),
            "training_summary": summary_html(describe_summary(training_grid.summary)),
        },
        figures=[fig.name for fig in drawing.figures],
    )
