"""What both pages show of the default training grid: the section's words, its figures and
the note under them.

The served section (app/served/components/training_session.py) adds the student's own run and the
Train and Stop buttons; the offline page (app/page/training.py) draws the same figures from the grid
it embeds. Both show the bands at the grid d_k :func:`nearest_grid_d_k` picks for the page's d_k.
"""

from __future__ import annotations

import html

import numpy as np
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LegendItem,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from app.page.views.collapse import SCALED_COLOUR, UNSCALED_COLOUR
from app.page.views.style import band_with_line, finish_figure, view_figure
from app.simulation.spec import nearest_on_grid
from sdpa_core import GridCell, GridSummary, TrainingGrid
from sdpa_core.training import GRID_D_VALUES, GRID_SEEDS, GRID_STEPS, SMOOTHING_STEPS

TRAINING_TITLE = "Does the scale matter for learning? Train a tiny model, scaled vs unscaled"
"""The section's button, on both pages."""

HEADING = "### Does the scale matter for learning?"
"""The section's heading (Markdown), once it is open."""


def intro(trained: str) -> str:
    """The section's first paragraph (Markdown): the task, the model and what the bands are,
    ``trained`` saying where and when the default grid was trained."""
    return (
        "A tiny model learns a retrieval task. Each example holds 16 tokens and asks for one "
        "of them; one attention head must put its weight on that token to return its value. "
        "Only W_q and W_k learn, so every gradient passes through the softmax. The bands are "
        f"the default experiment, trained once {trained}: {len(GRID_SEEDS)} seeds, "
        f"{GRID_STEPS} steps of Adam, scaled and unscaled each at the learning rate that "
        "served it best."
    )


OFFLINE_INTRO = intro("when this file was exported")
"""The offline page's first paragraph: the grid it carries was trained at export time."""

TRAIN_NEEDS_SERVER = (
    "**Train**, which runs the same model once more with your d_k, temperature, scale and "
    "seed, needs Python: it is on the page the server serves (`sdpa-sim`)."
)
"""The offline page's line in place of the Train button (Markdown)."""

CSS = """
.training-note { margin: 2px 0; font-size: 13px; }
.training-status { margin: 0; font-size: 14px; }
.training-summary { margin: 4px 0; font-size: 14px; }
"""

RUN_COLOUR = "#000000"
"""The student's own run: black, apart from both bands' colours."""

RUN_CASING_COLOUR = "#ffffff"
"""The white casing drawn under the run's black line: the run then reads on the dark
theme's background as on the light one (neither page recolours a lesson line by theme)."""

RUN_WIDTH = 1.5
RUN_CASING_WIDTH = 4.5
"""The run's line and its casing, in px: the casing shows 1.5 px either side."""

BUDGET_COLOUR = "#555555"

GRID_TEMPERATURE = 1.0
"""The temperature of the default grid (the core's default)."""

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
    """The grid's d_k closest to ``d_k`` on a log scale (the smaller on a tie): the one whose
    bands a page at ``d_k`` shows."""
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


def grid_note(training_grid: TrainingGrid, d_k: int, temperature: float = GRID_TEMPERATURE) -> str:
    """What the bands show, and the gradient figures at their first step, from numbers (as
    HTML); a ``temperature`` other than the grid's is the one Train would use."""
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


def summary_html(sentence: str) -> str:
    """The sentence under the summary plot (:func:`sdpa_core.describe_summary`'s) as HTML."""
    shown = html.escape(sentence, quote=False)
    return f'<p class="training-summary" data-testid="training-summary">{shown}</p>'


class TrainingFigures:
    """The section's three figures and their sources: loss and accuracy over the steps (the
    grid's bands at one d_k, and the student's run if ``run``), and the steps to the target
    loss against d_k, the d_k of the bands marked.

    The summary is empty until :meth:`show_grid`; the bands and the run stay empty, for
    the browser to draw (lesson_drawing.js's TrainingDrawing), as it moves the mark.
    """

    def __init__(self, d_k: int, *, run: bool = True) -> None:
        self.scaled_source = ColumnDataSource(empty(BAND_COLUMNS))
        self.unscaled_source = ColumnDataSource(empty(BAND_COLUMNS))
        self.run_source = ColumnDataSource(empty(RUN_COLUMNS)) if run else None
        """The student's run (None on a page without Train)."""
        self.run_items: list[LegendItem] = []
        """The legend entries of the student's run: hidden until it has steps to draw, as a
        legend entry of an empty line shows its label alone, with no line before it."""
        self.scaled_summary = ColumnDataSource(
            empty(SUMMARY_COLUMNS), name="training_scaled_summary"
        )
        self.unscaled_summary = ColumnDataSource(
            empty(SUMMARY_COLUMNS), name="training_unscaled_summary"
        )
        self.budget_source = ColumnDataSource({"d": [], "steps": []})
        self.loss_figure = self._curve_figure("loss", "Loss (squared error)", "loss", 2.05)
        self.accuracy_figure = self._curve_figure(
            "accuracy", "Accuracy (target gets the most weight)", "accuracy", 1.03
        )
        self.current_span = Span(
            location=nearest_grid_d_k(d_k),
            dimension="height",
            line_color="#888888",
            line_dash="dotted",
            line_width=2,
            name="training_span",
        )
        self.summary_figure = self._summary_figure()
        self.figures = [self.loss_figure, self.accuracy_figure, self.summary_figure]

    def show_grid(self, training_grid: TrainingGrid) -> None:
        """Draw the grid's summary: steps to the target loss against d_k, and its titles."""
        summary = training_grid.summary
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

    def _curve_figure(self, name: str, title: str, y_label: str, y_end: float) -> figure:
        fig = view_figure(
            name=f"training_{name}",
            title=title,
            x_range=Range1d(0, GRID_STEPS),
            y_range=Range1d(-0.02 * y_end, y_end),
            x_axis_label="training step",
            y_axis_label=y_label,
            height=280,
            min_width=260,
        )
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
        if self.run_source is not None:
            runs = [
                fig.line(
                    x="step", y=name, source=self.run_source, line_color=colour, line_width=width
                )
                for colour, width in (
                    (RUN_CASING_COLOUR, RUN_CASING_WIDTH),
                    (RUN_COLOUR, RUN_WIDTH),
                )
            ]
            item = LegendItem(label="your run", renderers=runs, visible=False)
            self.run_items.append(item)
            items.append(item)
        return finish_figure(fig, items, columns=len(items))

    def _summary_figure(self) -> figure:
        fig = view_figure(
            name="training_summary",
            title="Steps to the target loss",
            x_axis_type="log",
            x_range=Range1d(3.0, 1400.0),
            y_range=Range1d(0, GRID_STEPS * 1.12),
            x_axis_label="d_k (log scale)",
            y_axis_label="steps",
            height=280,
            min_width=260,
        )
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
        return finish_figure(
            fig,
            items,
            hover=HoverTool(
                renderers=lines,
                tooltips=[
                    ("d_k", "@d{0}"),
                    ("to the target", "@reached"),
                    ("learning rate", "@lr{0.[000]}"),
                    ("final loss", "@final_loss{0.[00]e}"),
                ],
            ),
        )
