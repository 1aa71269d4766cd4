"""Does the scale matter for learning? Training curves, scaled vs unscaled, and a Train button.

The curves and the summary come from the process's shared default grid
(:data:`app.training_runs.SHARED_GRID`), drawn by :class:`app.views.training_grid.TrainingFigures`
as the offline page draws them; the student's own run is trained off the event loop by
:data:`app.training_runs.RUNNER` and streamed into the same figures.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import panel_material_ui as pmui

from app import training_runs
from app.compat import CheckedPageChanges
from app.controls import PageButton
from app.flow import grid as grid_layout
from app.flow import side_by_side
from app.location import served
from app.model import SimulationModel
from app.state import SimulationState
from app.ticks import Later, next_tick, run_now
from app.training_runs import (
    DONE,
    FAILED,
    RUNNING,
    STOPPED,
    WAITING,
    SharedGrid,
    TrainingJob,
    TrainingRunner,
)
from app.views.aria import progress_theme
from app.views.markup import ServerMarkup
from app.views.training_grid import (
    CSS,
    HEADING,
    RUN_COLUMNS,
    TrainingFigures,
    empty,
    grid_note,
    intro,
    nearest_grid_d_k,
    summary_html,
    trailing_mean,
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


class RunProgress(CheckedPageChanges, pmui.LinearProgress):
    """The run's progress bar, 0 to 100; the page changes none of its properties."""

    page_properties = ()


class TrainingView:
    """ "Does it matter for learning?": loss and accuracy curves and the steps-to-target
    summary from the shared grid, and the student's own run, streamed as it trains.

    ``shared_grid``, ``runner`` and ``post`` default to the process's grid, the process's
    runner and (served) the session's next tick or (elsewhere) at once; tests pass their
    own. ``background`` computes a missing grid off the calling thread (default: when
    served); elsewhere it is computed at once.
    """

    def __init__(
        self,
        model: SimulationModel,
        *,
        shared_grid: SharedGrid | None = None,
        runner: TrainingRunner | None = None,
        post: Later | None = None,
        background: bool | None = None,
    ) -> None:
        is_served = served()
        doc = pn.state.curdoc if is_served else None
        self._state = model.state
        self._shared_grid = shared_grid or training_runs.SHARED_GRID
        self._runner = runner or training_runs.RUNNER
        self._post = post or (next_tick(doc) if doc is not None else run_now)
        self.job: TrainingJob | None = None
        """The student's last run, running or finished (None before the first)."""
        self.updates = 0
        """Batches of steps the run source has received (for tests and benchmarks)."""
        self.grid: TrainingGrid | None = None
        """The shared grid once the view has drawn it."""
        self.summary_sentence = ""
        """The sentence under the summary plot: :func:`describe_summary`'s, once drawn."""
        self._drawn: tuple | None = None
        self._history: list[TrainingStep] = []
        """The steps of the current run the page has been sent."""

        self.drawing = TrainingFigures(self._state.d_k)
        """The figures and their sources, as the offline page has them too."""
        drawing = self.drawing
        self.scaled_source, self.unscaled_source = drawing.scaled_source, drawing.unscaled_source
        self.run_source = drawing.run_source
        self.current_span = drawing.current_span
        self.loss_figure, self.accuracy_figure = drawing.loss_figure, drawing.accuracy_figure
        self.summary_figure = drawing.summary_figure
        self.figures = drawing.figures

        self.train_button = PageButton(
            label=TRAIN_LABEL, variant="contained", disabled=True, margin=(5, 10)
        )
        self.stop_button = PageButton(
            label=STOP_LABEL, variant="outlined", disabled=True, margin=(5, 10)
        )
        self.train_button.on_click(lambda event: self.train())
        self.stop_button.on_click(lambda event: self.stop())
        self.progress = RunProgress(
            value=0,
            margin=(0, 10),
            css_classes=["training-progress"],
            styles={"align-self": "center"},
            theme_config=progress_theme(PROGRESS_LABEL),
        )
        self.status = _markup("")
        self.grid_note = _markup("")
        self.summary_note = _markup("")
        self.panel = pn.Column(
            pn.pane.Markdown(
                f"{HEADING}\n\n{INTRO}",
                sizing_mode="stretch_width",
                margin=(0, 10),
            ),
            side_by_side(
                [self.train_button, self.stop_button, self.progress],
                basis=[80, 80, 160],
                grow=[0, 0, 1],
            ),
            self.status,
            grid_layout(
                [pn.pane.Bokeh(fig, sizing_mode="stretch_width") for fig in self.figures],
                min_width=340,
            ),
            self.grid_note,
            self.summary_note,
            sizing_mode="stretch_width",
            name="training",
        )
        self._show_status()
        if is_served and doc is not None:
            pn.state.on_session_destroyed(self.session_closed)
        background = is_served if background is None else background
        future = self._shared_grid.request(background=background)
        if future.done():
            self._grid_ready()
        else:
            future.add_done_callback(lambda done: self._post(self._grid_ready))

    # --- the grid -----------------------------------------------------------------------

    def _grid_ready(self) -> None:
        """Draw the shared grid (where ``post`` runs: the session's event loop)."""
        training_grid = self._shared_grid.grid
        with pn.io.hold():
            if training_grid is None:
                self.summary_note.show(
                    '<p class="training-summary">The comparison runs could not be computed.</p>'
                )
                self.status.show(_status_html("The comparison runs could not be computed."))
                return
            self.grid = training_grid
            self.summary_sentence = describe_summary(training_grid.summary)
            self.drawing.show_grid(training_grid)
            self.summary_note.show(summary_html(self.summary_sentence))
            self._drawn = None
            self._draw_settings()

    def _draw_settings(self) -> None:
        """Follow d_k (the bands and the marked d_k) and the run's settings (the status)."""
        state = self._state
        key = (state.d_k, state.scaled, state.temperature, state.seed)
        if key == self._drawn or self.grid is None:
            return
        self.drawing.show_d_k(self.grid, state.d_k)
        self.grid_note.show(grid_note(self.grid, state.d_k, state.temperature))
        if self.job is not None and not self.job.active:
            # A finished run belongs to the settings it was trained at: it goes with them.
            self.job = None
            self.run_source.data = empty(RUN_COLUMNS)
            self.drawing.show_run_legend(False)
            self.progress.value = 0
        self._drawn = key
        self._show_status()

    def _show_status(self) -> None:
        active = self.job is not None and self.job.active
        self.status.show(
            _status_html(status_text(self.job, self.grid, self._state, self._runner.limit))
        )
        self.train_button.disabled = self.grid is None or active
        self.stop_button.disabled = not active

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
        self.run_source.data = empty(RUN_COLUMNS)
        self.drawing.show_run_legend(False)
        self._history = []
        self.progress.value = 0
        self._drawn = (
            self._state.d_k,
            self._state.scaled,
            self._state.temperature,
            self._state.seed,
        )
        self._show_status()
        self._runner.start(self.job)
        return self.job

    def stop(self) -> None:
        """Stop the session's run, as the Stop button does (a waiting run never starts)."""
        if self.job is not None and self.job.active:
            self._runner.stop(self.job)

    def _job_update(self, job: TrainingJob) -> None:
        """Stream the steps trained since the last update (where ``post`` runs them)."""
        if job is not self.job:
            return
        steps = job.take()
        with pn.io.hold():
            if steps:
                self._history.extend(steps)
                self.run_source.stream(run_data(self._history, len(steps)))
                self.drawing.show_run_legend(True)
                self.updates += 1
            self.progress.value = round(100 * job.steps_done / job.total_steps)
            self._show_status()

    def session_closed(self, session_context: object) -> None:
        """The session has closed: stop its run, and post it nothing more."""
        if self.job is not None:
            self._runner.close(self.job)

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Follow the controls: the bands at the grid's d_k nearest the new d_k, the marked
        d_k, and the settings Train would use (a finished run is cleared when they change).

        ``parts`` is not needed: the drawn settings are compared with the state's.
        """
        self._draw_settings()


def _markup(text: str) -> ServerMarkup:
    return ServerMarkup(html=text, stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))


def _status_html(text: str) -> str:
    shown = html.escape(text, quote=False)
    return f'<p class="training-status" data-testid="training-status">{shown}</p>'
