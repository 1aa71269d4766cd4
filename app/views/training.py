"""Does the scale matter for learning? Training curves, scaled vs unscaled, and a Train button.

The curves and the summary come from the process's shared default grid
(:data:`app.training_runs.SHARED_GRID`); the student's own run is trained off the event
loop by :data:`app.training_runs.RUNNER` and streamed into the same figures.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import panel_material_ui as pmui
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LegendItem,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from app import training_runs
from app.compat import CheckedPageChanges
from app.controls import PageButton
from app.controls_spec import nearest_on_grid
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
from app.views.collapse import SCALED_COLOUR, UNSCALED_COLOUR
from app.views.markup import ServerMarkup
from app.views.style import band_with_line, compact_legend, without_glyph_copies
from sdpa_core import (
    GridCell,
    GridSummary,
    TrainingGrid,
    TrainingSettings,
    TrainingStep,
    describe_summary,
)
from sdpa_core.training import GRID_D_VALUES, GRID_STEPS, SMOOTHING_STEPS

TRAIN_LABEL = "Train"
STOP_LABEL = "Stop"

RUN_COLOUR = "#000000"
"""The student's own run: black, apart from both bands' colours."""

BUDGET_COLOUR = "#555555"

GRID_TEMPERATURE = 1.0
"""The temperature of the default grid (the core's default)."""

INTRO = (
    "A tiny model learns a retrieval task. Each example holds 16 tokens and asks for one of "
    "them; one attention head must put its weight on that token to return its value. Only "
    "W_q and W_k learn, so every gradient passes through the softmax. The bands are the "
    "default experiment, trained once on this server: 3 seeds, 200 steps of Adam, scaled "
    "and unscaled each at the learning rate that served it best. **Train** runs the same "
    "model once more with your d_k, temperature, scale and seed."
)

CSS = """
.training-note { margin: 2px 0; font-size: 13px; }
.training-status { margin: 0; font-size: 14px; }
.training-summary { margin: 4px 0; font-size: 14px; }
"""

BAND_COLUMNS = (
    "step",
    "loss",
    "loss_low",
    "loss_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
)
SUMMARY_COLUMNS = ("d", "steps", "marker", "reached", "lr", "final_loss")
RUN_COLUMNS = ("step", "loss", "accuracy")


def empty(columns: tuple[str, ...]) -> dict[str, list]:
    """Source columns with no rows: new lists each time, as a stream extends them in place."""
    return {name: [] for name in columns}


def nearest_grid_d_k(d_k: int, d_values: tuple[int, ...] = GRID_D_VALUES) -> int:
    """The grid's d_k closest to ``d_k`` on a log scale (the smaller on a tie)."""
    return int(nearest_on_grid(d_k, d_values))


def trailing_mean(values: np.ndarray, window: int = SMOOTHING_STEPS) -> np.ndarray:
    """Each value averaged with the ``window - 1`` before it (fewer at the start).

    One step's loss is measured on a batch of 16 examples and jumps from step to step; the
    summary's step counts average the same way (:data:`sdpa_core.training.SMOOTHING_STEPS`).
    """
    values = np.asarray(values, dtype=float)
    totals = np.concatenate([[0.0], np.cumsum(values)])
    end = np.arange(1, values.shape[0] + 1)
    start = np.maximum(0, end - window)
    return (totals[end] - totals[start]) / (end - start)


def band_data(cell: GridCell) -> dict[str, np.ndarray]:
    """A grid cell's seeds as source columns: the mean and the lowest and highest seed of
    the loss and the accuracy at each step, each seed's curve first averaged over the last
    :data:`SMOOTHING_STEPS` steps."""
    data: dict[str, np.ndarray] = {"step": np.arange(cell.runs[0].loss.shape[0], dtype=float)}
    for name in ("loss", "accuracy"):
        curves = np.stack([trailing_mean(getattr(run, name)) for run in cell.runs])
        data[name] = curves.mean(axis=0)
        data[f"{name}_low"] = curves.min(axis=0)
        data[f"{name}_high"] = curves.max(axis=0)
    return data


def summary_data(summary: GridSummary, *, scaled: bool) -> dict[str, list]:
    """One point per grid d_k: the steps to the target loss, or the budget (as a triangle)
    when the target was not reached, with the learning rate and the final loss."""
    data = empty(SUMMARY_COLUMNS)
    for row in summary.rows:
        steps = row.scaled_steps if scaled else row.unscaled_steps
        data["d"].append(float(row.d_k))
        data["steps"].append(float(summary.steps if steps is None else steps))
        data["marker"].append("triangle" if steps is None else "circle")
        data["reached"].append(
            f"not reached in {summary.steps} steps" if steps is None else f"{steps} steps"
        )
        data["lr"].append(row.scaled_lr if scaled else row.unscaled_lr)
        data["final_loss"].append(row.scaled_final_loss if scaled else row.unscaled_final_loss)
    return data


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


def grid_note(training_grid: TrainingGrid, d_k: int, temperature: float) -> str:
    """What the bands show, and the gradient figures at their first step, from numbers."""
    shown = nearest_grid_d_k(d_k)
    scaled = training_grid.cell(shown, True)
    unscaled = training_grid.cell(shown, False)
    where = f"d_k = {shown}" if shown == d_k else f"d_k = {shown}, the grid's nearest to your {d_k}"
    seeds = len(scaled.runs)
    jacobian = [
        float(np.median([run.jacobian_norm[0] for run in c.runs])) for c in (scaled, unscaled)
    ]
    gradient = [float(np.median([run.grad_norm[0] for run in c.runs])) for c in (scaled, unscaled)]
    note = (
        f"Bands: lowest to highest of {seeds} seeds, line: their mean, at {where} "
        f"(learning rate {scaled.lr:g} scaled, {unscaled.lr:g} unscaled; temperature "
        f"{GRID_TEMPERATURE:g}). At the first step a typical example's softmax Jacobian has "
        f"norm {jacobian[0]:.2g} scaled and {jacobian[1]:.2g} unscaled, while the whole "
        f"gradient of W_q and W_k has norm {gradient[0]:.2g} and {gradient[1]:.2g}."
    )
    if temperature != GRID_TEMPERATURE:
        note += f" Train uses your temperature, {temperature:g}."
    text = html.escape(note, quote=False)
    return f'<p class="training-note" data-testid="training-grid-note">{text}</p>'


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

        self.scaled_source = ColumnDataSource(empty(BAND_COLUMNS))
        self.unscaled_source = ColumnDataSource(empty(BAND_COLUMNS))
        self.run_source = ColumnDataSource(empty(RUN_COLUMNS))
        self.scaled_summary = ColumnDataSource(empty(SUMMARY_COLUMNS))
        self.unscaled_summary = ColumnDataSource(empty(SUMMARY_COLUMNS))
        self.budget_source = ColumnDataSource({"d": [], "steps": []})
        self.loss_figure = self._curve_figure("loss", "Loss (squared error)", "loss", 2.05)
        self.accuracy_figure = self._curve_figure(
            "accuracy", "Accuracy (target gets the most weight)", "accuracy", 1.03
        )
        self.current_span = Span(
            location=nearest_grid_d_k(self._state.d_k),
            dimension="height",
            line_color="#888888",
            line_dash="dotted",
            line_width=2,
        )
        self.summary_figure = self._summary_figure()
        self.figures = [self.loss_figure, self.accuracy_figure, self.summary_figure]

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
        )
        self.status = _markup("")
        self.grid_note = _markup("")
        self.summary_note = _markup("")
        self.panel = pn.Column(
            pn.pane.Markdown(
                "### Does the scale matter for learning?\n\n" + INTRO,
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

    # --- figures ------------------------------------------------------------------------

    def _curve_figure(self, name: str, title: str, y_label: str, y_end: float) -> figure:
        fig = figure(
            name=f"training_{name}",
            title=title,
            x_range=Range1d(0, GRID_STEPS),
            y_range=Range1d(-0.02 * y_end, y_end),
            x_axis_label="training step",
            y_axis_label=y_label,
            sizing_mode="stretch_width",
            height=280,
            min_width=260,
            toolbar_location=None,
            tools="",
        )
        fig.title.text_font_size = "13px"
        items = [
            band_with_line(
                fig,
                x="step",
                y=name,
                source=source,
                colour=colour,
                label=label,
                fill_alpha=0.25,
                line_width=2,
            )
            for source, colour, label in (
                (self.scaled_source, SCALED_COLOUR, "scaled"),
                (self.unscaled_source, UNSCALED_COLOUR, "unscaled"),
            )
        ]
        run = fig.line(
            x="step", y=name, source=self.run_source, line_color=RUN_COLOUR, line_width=1.5
        )
        items.append(LegendItem(label="your run", renderers=[run]))
        fig.add_layout(compact_legend(items, columns=3), "above")
        return without_glyph_copies(fig)

    def _summary_figure(self) -> figure:
        fig = figure(
            name="training_summary",
            title="Steps to the target loss",
            x_axis_type="log",
            x_range=Range1d(3.0, 1400.0),
            y_range=Range1d(0, GRID_STEPS * 1.12),
            x_axis_label="d_k (log scale)",
            y_axis_label="steps",
            sizing_mode="stretch_width",
            height=280,
            min_width=260,
            toolbar_location=None,
            tools="",
        )
        fig.title.text_font_size = "13px"
        fig.xaxis.ticker = FixedTicker(ticks=list(GRID_D_VALUES))
        budget = fig.line(
            x="d",
            y="steps",
            source=self.budget_source,
            line_color=BUDGET_COLOUR,
            line_dash="dashed",
            line_width=1.5,
        )
        items = []
        lines = []
        for source, colour, label in (
            (self.scaled_summary, SCALED_COLOUR, "scaled"),
            (self.unscaled_summary, UNSCALED_COLOUR, "unscaled"),
        ):
            line = fig.line(x="d", y="steps", source=source, line_color=colour, line_width=2)
            points = fig.scatter(
                x="d",
                y="steps",
                source=source,
                marker="marker",
                size=11,
                fill_color=colour,
                line_color=colour,
            )
            lines.append(points)
            items.append(LegendItem(label=label, renderers=[line, points]))
        fig.add_layout(self.current_span)
        items.append(LegendItem(label="▲ not reached", renderers=[budget]))
        fig.add_layout(compact_legend(items), "above")
        fig.add_tools(
            HoverTool(
                renderers=lines,
                tooltips=[
                    ("d_k", "@d{0}"),
                    ("to the target", "@reached"),
                    ("learning rate", "@lr{0.[000]}"),
                    ("final loss", "@final_loss{0.[00]e}"),
                ],
            )
        )
        return without_glyph_copies(fig)

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
            summary = training_grid.summary
            self.summary_sentence = describe_summary(summary)
            self.scaled_summary.data = summary_data(summary, scaled=True)
            self.unscaled_summary.data = summary_data(summary, scaled=False)
            self.budget_source.data = {
                "d": [float(GRID_D_VALUES[0]) / 1.5, float(GRID_D_VALUES[-1]) * 1.5],
                "steps": [float(summary.steps)] * 2,
            }
            self.summary_figure.title.text = (
                f"Steps to loss {summary.target_loss:g} (mean of {len(training_grid.seeds)} seeds)"
            )
            self.summary_figure.yaxis[0].axis_label = f"steps to loss {summary.target_loss:g}"
            self.summary_note.show(
                '<p class="training-summary" data-testid="training-summary">'
                f"{html.escape(self.summary_sentence, quote=False)}</p>"
            )
            self._drawn = None
            self._draw_settings()

    def _draw_settings(self) -> None:
        """Follow d_k (the bands and the marked d_k) and the run's settings (the status)."""
        state = self._state
        key = (state.d_k, state.scaled, state.temperature, state.seed)
        if key == self._drawn or self.grid is None:
            return
        shown = nearest_grid_d_k(state.d_k)
        if self._drawn is None or nearest_grid_d_k(self._drawn[0]) != shown:
            self.scaled_source.data = band_data(self.grid.cell(shown, True))
            self.unscaled_source.data = band_data(self.grid.cell(shown, False))
            self.current_span.location = shown
        self.grid_note.show(grid_note(self.grid, state.d_k, state.temperature))
        if self.job is not None and not self.job.active:
            # A finished run belongs to the settings it was trained at: it goes with them.
            self.job = None
            self.run_source.data = empty(RUN_COLUMNS)
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
