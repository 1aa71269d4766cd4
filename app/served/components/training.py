"""The served training section as the browser draws it: its markup, and its figures with the
grid's bands, built once per process.

A session (:class:`app.served.components.training_session.TrainingSession`) holds none of it: it
sends the page these figures once its grid is ready, then the grid d_k to draw, the words and the
run's steps; drawn_lesson.js embeds the figures and lesson_drawing.js's ``TrainingDrawing`` (the
offline page's drawing code) draws into them.
"""

from __future__ import annotations

import functools
import html
import json
import threading

from app.page.lesson import markdown_html
from app.page.training import training_spec
from app.page.views.training_grid import HEADING, TrainingFigures
from app.served.components.figures import embeddable_item
from app.served.components.training_session import INTRO, PROGRESS_LABEL, STOP_LABEL, TRAIN_LABEL
from sdpa_core import TrainingGrid
from sdpa_core.training import GRID_D_VALUES

TRAINING_CELL = '<div class="sdpa-training-cell"></div>'
"""An empty cell the page embeds one of the section's figures in (in figure order)."""

FIGURE_COUNT = 3
"""The section's figures: loss, accuracy, steps to the target loss."""

BUTTONS_CSS = """
.training-actions { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px;
  margin: 6px 10px; }
.training-actions button { font: inherit; font-size: 14px; font-weight: 500; min-width: 80px;
  padding: 6px 16px; border-radius: 4px; cursor: pointer; letter-spacing: 0.03em;
  text-transform: uppercase; }
.training-actions button[data-training="train"] {
  color: var(--sdpa-paper, #fff); background: var(--sdpa-accent-text, #1565c0);
  border: 1px solid var(--sdpa-accent-text, #1565c0); }
.training-actions button[data-training="stop"] {
  color: var(--sdpa-accent-text, #1565c0); background: transparent;
  border: 1px solid var(--sdpa-accent-text, #1565c0); }
.training-actions button:disabled { cursor: default; color: var(--sdpa-muted-text, #5f6368);
  background: transparent; border-color: var(--sdpa-border, #9aa0a6); }
.training-actions button:focus-visible {
  outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px; }
.training-progress { flex: 1 1 160px; min-width: 160px; }
.training-progress [role="progressbar"] { height: 4px; overflow: hidden; border-radius: 2px;
  background: color-mix(in srgb, var(--sdpa-accent-text, #1565c0) 25%, transparent); }
.training-progress-bar { height: 100%; width: 100%; transform-origin: left;
  transform: scaleX(0); background: var(--sdpa-accent-text, #1565c0);
  transition: transform 0.2s linear; }
.sdpa-training-intro, .sdpa-training .training-status, .sdpa-training-notes { margin: 0 10px; }
.sdpa-training-figures { display: grid; gap: 0 10px;
  grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); }
"""
"""The buttons (Material's contained Train, outlined Stop), the progress bar and the
figures' grid (340 px at least per figure, as the served section had); the colours follow
the page's theme variables (app/page/theme.py)."""


@functools.cache
def training_markup() -> str:
    """The section's markup, built once per process: its words, the Train and Stop buttons
    (disabled until the grid is ready), the progress bar, the status line, a cell per
    figure and the boxes of the words under them, all filled by the page."""
    progress = (
        f'<div class="training-progress"><div role="progressbar" '
        f'aria-label="{html.escape(PROGRESS_LABEL)}" aria-valuemin="0" aria-valuemax="100" '
        f'aria-valuenow="0"><div class="training-progress-bar"></div></div></div>'
    )
    buttons = "".join(
        f'<button type="button" data-training="{name}" disabled>{html.escape(label)}</button>'
        for name, label in (("train", TRAIN_LABEL), ("stop", STOP_LABEL))
    )
    intro = markdown_html(f"{HEADING}\n\n{INTRO}")
    return (
        '<div class="sdpa-training" data-testid="training">'
        f'<div class="sdpa-training-intro">{intro}</div>'
        f'<div class="training-actions">{buttons}{progress}</div>'
        '<p class="training-status" data-testid="training-status" aria-live="polite"></p>'
        f'<div class="sdpa-training-figures">{TRAINING_CELL * FIGURE_COUNT}</div>'
        '<div class="sdpa-training-notes"><div data-training-note></div>'
        "<div data-training-summary></div></div>"
        "</div>"
    )


_BUILT: dict[int, tuple[TrainingGrid, str]] = {}
_BUILDING = threading.Lock()


def training_figures(training_grid: TrainingGrid) -> str:
    """``training_grid``'s figures as Bokeh JSON items (loss, accuracy, the summary drawn),
    the ids of the models the page draws by name, and the grid's bands as data
    (app.page.training.training_spec, the offline page's), as JSON: built once per
    process for each grid, then shared read-only by every session."""
    with _BUILDING:
        built = _BUILT.get(id(training_grid))
        if built is None or built[0] is not training_grid:
            built = (training_grid, _build(training_grid))
            _BUILT[id(training_grid)] = built
        return built[1]


def _build(training_grid: TrainingGrid) -> str:
    # One item per figure, so the grid places them as the width allows; each figure comes
    # from its own build, as one document cannot hand out the sources two figures share.
    builds = [TrainingFigures(GRID_D_VALUES[0]) for _ in range(FIGURE_COUNT)]
    for build in builds:
        build.show_grid(training_grid)
    items = [embeddable_item(build.figures[i]) for i, build in enumerate(builds)]
    curves = builds[:2]
    models = {
        "training_scaled": [build.scaled_source.id for build in curves],
        "training_unscaled": [build.unscaled_source.id for build in curves],
        "training_run": [build.run_source.id for build in curves],
        "training_run_items": [build.run_items[i].id for i, build in enumerate(curves)],
        "training_span": builds[2].current_span.id,
    }
    spec = training_spec(training_grid, [])
    return json.dumps({"items": items, "models": models, "spec": spec}, separators=(",", ":"))
