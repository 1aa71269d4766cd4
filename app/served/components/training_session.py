"""Does the scale matter for learning? One session's training section: the shared grid's
bands at the student's d_k, the student's own run, and what the page is sent of them.

The curves and the summary come from the process's shared default grid
(:data:`app.simulation.training.SHARED_GRID`); their figures are built and serialised once per
process (app/served/components/training.py) and drawn in the browser by lesson_drawing.js's
``TrainingDrawing``, the offline page's drawing code. A session holds no figure: it sends
the grid d_k whose bands to draw, the words under them, the buttons' and the progress bar's
state, and its run's steps as they are trained (off the event loop, by
:data:`app.simulation.training.RUNNER`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import panel as pn

from app.page.views.training_grid import (
    RUN_COLUMNS,
    empty,
    grid_note,
    intro,
    nearest_grid_d_k,
    summary_html,
    trailing_mean,
)
from app.served.location import served
from app.served.ticks import Later, next_tick, run_now
from app.simulation import training as training_runs
from app.simulation.model import SimulationModel
from app.simulation.state import SimulationState
from app.simulation.training import (
    DONE,
    FAILED,
    RUNNING,
    STOPPED,
    WAITING,
    SharedGrid,
    TrainingJob,
    TrainingRunner,
)
from sdpa_core import (
    TrainingGrid,
    TrainingSettings,
    TrainingStep,
    describe_summary,
)

TRAIN_LABEL = "Train"
STOP_LABEL = "Stop"
PROGRESS_LABEL = "Training progress"
"""The accessible name of the run's progress bar."""

INTRO = (
    intro("on this server")
    + " **Train** runs the same model once more with your d_k, temperature, scale and seed."
)
"""The section's first paragraph (Markdown) on the served page."""


def run_data(history: list[TrainingStep], new: int) -> dict[str, list[float]]:
    """The last ``new`` steps of ``history`` as the run source's columns, each averaged
    over the :data:`SMOOTHING_STEPS` steps up to it, as the bands are (a run has at most a
    few hundred steps: the whole history is averaged again each time)."""
    data: dict[str, list[float]] = {"step": [float(step.step) for step in history[-new:]]}
    for name in ("loss", "accuracy"):
        values = trailing_mean(np.array([getattr(step, name) for step in history]))
        data[name] = [float(value) for value in values[len(history) - new :]]
    return data


def run_settings(state: SimulationState, training_grid: TrainingGrid) -> TrainingSettings:
    """The Train run of ``state``: its d_k, scale, temperature and seed, the grid's steps,
    and the learning rate that served the grid's nearest d_k best at that scale."""
    cell = training_grid.cell(nearest_grid_d_k(state.d_k), state.scaled)
    return TrainingSettings(
        d_k=state.d_k,
        scaled=state.scaled,
        steps=training_grid.summary.steps,
        lr=cell.lr,
        seed=state.seed,
        optimizer=training_grid.optimizer,
        temperature=state.temperature,
    )


def bands_index(training_grid: TrainingGrid, d_k: int) -> int:
    """Where in ``training_grid``'s d_k (its summary's order) the d_k whose bands a page at
    ``d_k`` shows is."""
    d_values = tuple(row.d_k for row in training_grid.summary.rows)
    return d_values.index(nearest_grid_d_k(d_k, d_values))


def describe_settings(settings: TrainingSettings) -> str:
    """A run's settings in words: d_k, scale, temperature, seed, learning rate."""
    scale = "scaled" if settings.scaled else "unscaled"
    return (
        f"d_k = {settings.d_k}, {scale}, temperature {settings.temperature:g}, "
        f"seed {settings.seed}, learning rate {settings.lr:g}"
    )


def status_text(
    job: TrainingJob | None,
    training_grid: TrainingGrid | None,
    state: SimulationState,
    limit: int = training_runs.MAX_CONCURRENT_RUNS,
) -> str:
    """The line under the buttons: what the grid and the student's run are doing.

    ``limit`` is how many runs the server trains at once (said to a waiting student).
    """
    if training_grid is None:
        return "Computing the comparison runs (once for this server)…"
    if job is None:
        settings = run_settings(state, training_grid)
        return f"Press Train to train at {describe_settings(settings)} ({settings.steps} steps)."
    settings, done = job.settings, job.steps_done
    if job.status == WAITING:
        return (
            f"Waiting for a free slot: {limit} runs at most train at "
            "once on this server, and yours starts when one ends."
        )
    if job.status == FAILED:
        return "The run failed (the server's log has the reason)."
    if job.status == STOPPED and done == 0:
        return "Stopped before the first step."
    if job.status == RUNNING:
        return f"Training at {describe_settings(settings)}: step {done} of {job.total_steps}."
    word = "Done" if job.status == DONE else f"Stopped at step {done} of {job.total_steps}"
    return (
        f"{word}: {describe_settings(settings)}. Mean loss over the last tenth of its steps: "
        f"{job.final_loss:.2g}."
    )


GRID_FAILED = "The comparison runs could not be computed."
"""The status and the summary's line when the shared grid could not be computed."""

SendTraining = Callable[[dict[str, Any], dict[str, Any]], None]
"""Sends the page what changed in the section: ``(changes, whole)``, each holding some of
``figures`` (the grid's figures and data, JSON: app/served/components/training.py), ``view`` (the
section's state: :meth:`TrainingSession.view`) and ``run`` (the run's steps from index
``from``); ``changes`` holds what changed since the last send (the view's changed keys, the
run's new steps), ``whole`` the same keys in full (the whole view, the run from step 0)."""


class TrainingSession:
    """One session's "Does it matter for learning?": the shared grid shown at the student's
    d_k, and the student's own run, trained off the event loop and sent to the page as its
    steps arrive. The page draws it all (app/page/assets/drawn_lesson.js); this class decides
    what it shows and sends it through ``send``.

    ``figures`` builds the page's figures and data for a grid (served:
    app.served.components.training.training_figures; tests may give a stand-in).
    ``shared_grid``, ``runner`` and ``post`` default to the process's grid, the process's
    runner and (served) the session's next tick or (elsewhere) at once; tests pass their
    own. ``background`` computes a missing grid off the calling thread (default: when
    served); elsewhere it is computed at once.
    """

    def __init__(
        self,
        model: SimulationModel,
        send: SendTraining,
        figures: Callable[[TrainingGrid], str],
        *,
        shared_grid: SharedGrid | None = None,
        runner: TrainingRunner | None = None,
        post: Later | None = None,
        background: bool | None = None,
    ) -> None:
        is_served = served()
        doc = pn.state.curdoc if is_served else None
        self._state = model.state
        self._send = send
        self._build_figures = figures
        self._shared_grid = shared_grid or training_runs.SHARED_GRID
        self._runner = runner or training_runs.RUNNER
        self._post = post or (next_tick(doc) if doc is not None else run_now)
        self.job: TrainingJob | None = None
        """The student's last run, running or finished (None before the first)."""
        self.updates = 0
        """Batches of steps sent to the page (for tests and benchmarks)."""
        self.grid: TrainingGrid | None = None
        """The shared grid once the section shows it."""
        self.failed = False
        """Whether the shared grid could not be computed."""
        self.summary_sentence = ""
        """The sentence under the summary plot: :func:`describe_summary`'s, once shown."""
        self.figures = ""
        """The grid's figures and data as sent to the page (empty before the grid)."""
        self.shown: dict[str, Any] = {}
        """The section's state as the page was last sent it (:meth:`view`)."""
        self.run: dict[str, list[float]] = empty(RUN_COLUMNS)
        """The current run's smoothed curves as the page was sent them, by column."""
        self._history: list[TrainingStep] = []
        """The steps of the current run the page has been sent."""
        self._drawn: tuple | None = None
        if is_served and doc is not None:
            pn.state.on_session_destroyed(self.session_closed)
        background = is_served if background is None else background
        future = self._shared_grid.request(background=background)
        if future.done():  # the shipped grid: the first send draws it, no "Computing…"
            self._grid_ready()
        else:
            self._show()
            future.add_done_callback(lambda done: self._post(self._grid_ready))

    # --- what the page shows ------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """The section's state as the page draws it: ``bands``, the index in the grid's d_k
        of those whose bands are drawn (None before the grid); ``note`` and ``summary``,
        the HTML under the figures; ``status``, the line under the buttons; ``progress``,
        the run's progress in percent; ``train`` and ``stop``, whether each button is
        enabled."""
        active = self.job is not None and self.job.active
        grid, state = self.grid, self._state
        progress = 0
        if self.job is not None and self.job.total_steps:
            progress = round(100 * self.job.steps_done / self.job.total_steps)
        return {
            "bands": bands_index(grid, state.d_k) if grid else None,
            "note": grid_note(grid, state.d_k, state.temperature) if grid else "",
            "summary": (
                summary_html(self.summary_sentence)
                if grid
                else summary_html(GRID_FAILED)
                if self.failed
                else ""
            ),
            "status": (
                GRID_FAILED
                if self.failed
                else status_text(self.job, grid, state, self._runner.limit)
            ),
            "progress": progress,
            "train": grid is not None and not active,
            "stop": active,
        }

    def _show(self, *, figures: bool = False, run: dict[str, list[float]] | None = None) -> None:
        """Send the page what changed: the view's changed keys, the grid's figures when
        ``figures``, and ``run``, the run's new steps (from the step the page has)."""
        view = self.view()
        changed = {key: value for key, value in view.items() if self.shown.get(key) != value}
        if not self.shown:
            changed = dict(view)
        self.shown = view
        changes: dict[str, Any] = {}
        whole: dict[str, Any] = {}
        if figures:
            changes["figures"] = whole["figures"] = self.figures
        if changed:
            changes["view"] = changed
            whole["view"] = view
        if run is not None:
            changes["run"] = run
            whole["run"] = {"from": 0, **{name: list(values) for name, values in self.run.items()}}
        if changes:
            self._send(changes, whole)

    # --- the grid -----------------------------------------------------------------------

    def _grid_ready(self) -> None:
        """Show the shared grid (where ``post`` runs: the session's event loop)."""
        training_grid = self._shared_grid.grid
        if training_grid is None:
            self.failed = True
            self._show()
            return
        self.grid = training_grid
        self.summary_sentence = describe_summary(training_grid.summary)
        self.figures = self._build_figures(training_grid)
        self._drawn = self._settings()
        self._show(figures=True)

    def _settings(self) -> tuple:
        state = self._state
        return (state.d_k, state.scaled, state.temperature, state.seed)

    # --- the student's run --------------------------------------------------------------

    def train(self) -> TrainingJob | None:
        """Start a run at the current settings, as the Train button does.

        Nothing happens while the grid is being computed or a run of this session is
        waiting or training (one at a time per session). Returns the new job, if any.
        """
        if self.grid is None or (self.job is not None and self.job.active):
            return None
        settings = run_settings(self._state, self.grid)
        self.job = self._runner.job(settings, post=self._post, on_update=self._job_update)
        self._history = []
        self.run = empty(RUN_COLUMNS)
        self._drawn = self._settings()
        self._show(run={"from": 0, **empty(RUN_COLUMNS)})
        self._runner.start(self.job)
        return self.job

    def stop(self) -> None:
        """Stop the session's run, as the Stop button does (a waiting run never starts)."""
        if self.job is not None and self.job.active:
            self._runner.stop(self.job)

    def _job_update(self, job: TrainingJob) -> None:
        """Send the steps trained since the last update (where ``post`` runs them)."""
        if job is not self.job:
            return
        steps = job.take()
        new = None
        if steps:
            start = len(self._history)
            self._history.extend(steps)
            new = run_data(self._history, len(steps))
            # New lists: what the page was sent before stays as it was sent.
            self.run = {name: self.run[name] + values for name, values in new.items()}
            self.updates += 1
            new = {"from": start, **new}
        self._show(run=new)

    def session_closed(self, session_context: object) -> None:
        """The session has closed: stop its run, and post it nothing more."""
        if self.job is not None:
            self._runner.close(self.job)

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Follow the controls: the bands at the grid's d_k nearest the new d_k, the note
        under them and the settings Train would use (a finished run is cleared when they
        change: it belongs to the settings it was trained at).

        ``parts`` is not needed: the shown settings are compared with the state's.
        """
        if self.grid is None or self._settings() == self._drawn:
            return
        self._drawn = self._settings()
        if self.job is not None and not self.job.active:
            self.job = None
            self._history = []
            self.run = empty(RUN_COLUMNS)
            self._show(run={"from": 0, **empty(RUN_COLUMNS)})
            return
        self._show()
