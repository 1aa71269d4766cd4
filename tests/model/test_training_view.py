"""The "Does it matter for learning?" section without a server: the shared grid, Train,
Stop, the cap on runs at once, and the text under the plots."""

from __future__ import annotations

import html
import queue
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from app import training_runs
from app.model import SimulationModel
from app.state import SimulationState
from app.ticks import run_now
from app.training_runs import (
    DONE,
    STOPPED,
    WAITING,
    SharedGrid,
    TrainingRunner,
)
from app.views.training import TrainingView, run_settings
from app.views.training_grid import band_data, nearest_grid_d_k, trailing_mean
from sdpa_core import describe_summary, training_grid

SMALL = {"d_values": (4, 64, 1024), "seeds": (0, 1), "steps": 30, "lrs": (0.01, 0.03)}
"""A grid small enough to compute in a fraction of a second."""


class SyncExecutor:
    """Runs what is submitted at once, in the calling thread."""

    def submit(self, function: Callable[..., None], *args: object) -> None:
        function(*args)


class ManualExecutor:
    """Keeps what is submitted until the test runs it."""

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[..., None], tuple]] = []

    def submit(self, function: Callable[..., None], *args: object) -> None:
        self.pending.append((function, args))

    def run_next(self) -> None:
        function, args = self.pending.pop(0)
        function(*args)


@pytest.fixture(scope="module")
def small_grid() -> SharedGrid:
    shared = SharedGrid(lambda: training_grid(**SMALL))
    shared.request(background=False)
    return shared


def sync_runner(limit: int = 2, update_interval: float = 0.0) -> TrainingRunner:
    return TrainingRunner(limit, SyncExecutor(), run_seconds=0.0, update_interval=update_interval)


STATES: dict[int, SimulationState] = {}
"""Each view's state, by the view's id: what the session would hold."""


def make_view(
    shared: SharedGrid, runner: TrainingRunner, post=run_now, **controls: object
) -> TrainingView:
    state = SimulationState(**controls)
    view = TrainingView(
        SimulationModel(state), shared_grid=shared, runner=runner, post=post, background=False
    )
    STATES[id(view)] = state
    return view


def change(view: TrainingView, **controls: object) -> None:
    state = STATES[id(view)]
    model = SimulationModel(state)
    state.param.update(**controls)
    view.update(model, model.refresh(controls))


# --- the shared grid ----------------------------------------------------------------------


def test_the_section_builds_from_the_shared_default_grid() -> None:
    """Built as the lesson builds it: the process's grid, its sentence, its numbers."""
    view = TrainingView(SimulationModel(SimulationState(d_k=90)))
    shared = training_runs.SHARED_GRID
    assert view.grid is shared.grid is not None
    assert shared.computations == 1, "the default grid is computed once per process"
    assert nearest_grid_d_k(90) == 64
    expected = band_data(view.grid.cell(64, True))
    np.testing.assert_array_equal(view.scaled_source.data["loss"], expected["loss"])
    assert "d_k = 64, the grid's nearest to your 90" in view.grid_note.html
    assert view.summary_sentence == describe_summary(view.grid.summary)
    assert html.escape(view.summary_sentence, quote=False) in view.summary_note.html
    assert not view.train_button.disabled and view.stop_button.disabled
    # A second section (another student) reads the same grid, computed once.
    other = TrainingView(SimulationModel(SimulationState()))
    assert other.grid is view.grid and shared.computations == 1


def test_the_grid_is_computed_once_for_every_view() -> None:
    calls: list[int] = []

    def counting() -> object:
        calls.append(1)
        return training_grid(**SMALL)

    shared = SharedGrid(counting)
    views = [make_view(shared, sync_runner()) for _ in range(3)]
    assert len(calls) == 1 and shared.computations == 1
    assert all(view.grid is views[0].grid for view in views)


def test_the_section_says_computing_until_the_grid_arrives() -> None:
    release = threading.Event()

    def slow() -> object:
        release.wait(10)
        return training_grid(**SMALL)

    shared = SharedGrid(slow)
    posted: queue.Queue = queue.Queue()
    model = SimulationModel(SimulationState())
    view = TrainingView(
        model, shared_grid=shared, runner=sync_runner(), post=posted.put, background=True
    )
    assert view.grid is None
    assert "Computing the comparison runs" in view.status.html
    assert view.train_button.disabled
    assert view.train() is None, "Train waits for the grid"
    release.set()
    posted.get(timeout=10)()  # the grid thread posts the drawing to the session's loop
    assert view.grid is shared.grid is not None
    assert "Press Train" in view.status.html and not view.train_button.disabled


def test_a_failed_grid_is_said_and_train_stays_off() -> None:
    def failing() -> object:
        raise ValueError("no grid")

    view = make_view(SharedGrid(failing), sync_runner())
    assert view.grid is None
    assert "could not be computed" in view.summary_note.html
    assert view.train_button.disabled


# --- Train and Stop -----------------------------------------------------------------------


def test_train_streams_every_step_into_the_curves(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(), d_k=1024, scaled=False, seed=3)
    job = view.train()
    assert job is not None and job.status == DONE
    assert job.settings == run_settings(STATES[id(view)], view.grid)
    assert (job.settings.d_k, job.settings.scaled, job.settings.seed) == (1024, False, 3)
    assert job.settings.lr == view.grid.cell(1024, False).lr
    data = view.run_source.data
    assert data["step"] == [float(step) for step in range(30)]
    assert view.updates == 30, "one update per step when the interval is 0"
    # The curve is each step's loss averaged over the steps up to it, as the bands are.
    np.testing.assert_allclose(data["loss"], trailing_mean([s.loss for s in job.history]))
    assert view.progress.value == 100
    assert "Done: d_k = 1024, unscaled" in view.status.html
    assert not view.train_button.disabled and view.stop_button.disabled


def test_steps_arrive_in_batches_and_none_is_lost(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(update_interval=60.0))
    view.train()
    assert 1 <= view.updates <= 2, "a long interval batches the steps"
    assert len(view.run_source.data["step"]) == 30


def test_stop_ends_the_run_after_the_current_step(small_grid: SharedGrid) -> None:
    views: list[TrainingView] = []

    def post(callback: Callable[[], None]) -> None:
        callback()
        if views and views[0].updates == 5:
            views[0].stop()  # the student presses Stop while steps stream in

    view = make_view(small_grid, sync_runner(), post=post)
    views.append(view)
    job = view.train()
    assert job.status == STOPPED and job.steps_done == 5
    assert len(view.run_source.data["step"]) == 5
    assert "Stopped at step 5 of 30" in view.status.html
    assert view.progress.value == round(100 * 5 / 30)
    assert not view.train_button.disabled


def test_a_session_runs_one_run_at_a_time(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(2, executor, run_seconds=0.0, update_interval=0.0)
    view = make_view(small_grid, runner)
    first = view.train()
    assert view.train() is None, "a second press while it runs does nothing"
    assert len(executor.pending) == 1 and view.train_button.disabled
    assert not view.stop_button.disabled
    executor.run_next()
    assert first.status == DONE
    assert view.train() is not None, "once it is done, Train trains again"


def test_the_cap_makes_the_run_over_it_wait_its_turn(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(2, executor, run_seconds=0.0, update_interval=0.0)
    views = [make_view(small_grid, runner, seed=seed) for seed in range(3)]
    jobs = [view.train() for view in views]
    assert runner.running == 2 and runner.waiting == 1
    assert len(executor.pending) == 2, "only two runs reach the pool"
    assert jobs[2].status == WAITING
    assert "Waiting for a free slot" in views[2].status.html
    assert not views[2].stop_button.disabled, "a waiting run can be stopped"
    executor.run_next()  # the first run ends: the waiting one takes its slot
    assert jobs[0].status == DONE
    assert runner.running == 2 and runner.waiting == 0
    assert len(executor.pending) == 2
    while executor.pending:
        executor.run_next()
    assert [job.status for job in jobs] == [DONE, DONE, DONE]
    assert runner.running == 0
    assert all(len(view.run_source.data["step"]) == 30 for view in views)


def test_a_waiting_run_stopped_never_starts(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    first, second = (make_view(small_grid, runner) for _ in range(2))
    first.train()
    job = second.train()
    assert job.status == WAITING
    second.stop()
    assert job.status == STOPPED and runner.waiting == 0
    assert "Stopped before the first step" in second.status.html
    executor.run_next()
    assert executor.pending == [] and runner.running == 0


def test_the_cap_holds_with_real_threads(small_grid: SharedGrid) -> None:
    """Three runs at once on a pool of two threads: the third waits, then trains."""
    gate = threading.Event()
    started: list[int] = []

    def held_steps(settings: object):
        started.append(settings.seed)
        gate.wait(10)
        yield from training_runs.iter_training(settings)

    runner = TrainingRunner(2, run_seconds=0.0, update_interval=0.0)
    posted: queue.Queue = queue.Queue()
    jobs = [
        runner.job(
            run_settings(SimulationState(seed=seed), small_grid.grid),
            post=posted.put,
            on_update=lambda job: job.take(),
            steps=held_steps,
        )
        for seed in range(3)
    ]
    for job in jobs:
        runner.start(job)
    deadline = time.monotonic() + 10
    while len(started) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(started) == [0, 1]
    assert jobs[2].status == WAITING and runner.running == 2
    gate.set()
    while any(job.active for job in jobs) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [job.status for job in jobs] == [DONE, DONE, DONE]
    assert runner.running == 0 and sorted(started) == [0, 1, 2]


def test_a_closed_session_stops_its_run_and_gets_nothing_more(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    posted: list = []
    view = make_view(small_grid, runner, post=posted.append)
    job = view.train()
    view.session_closed(None)
    posted.clear()
    executor.run_next()
    assert job.status == STOPPED and job.steps_done <= 1
    assert posted == [], "nothing is posted to a closed session"
    assert runner.running == 0


# --- following the controls ---------------------------------------------------------------


def test_bands_follow_the_nearest_grid_d_k_in_the_same_sources(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner())
    sources = (view.scaled_source, view.unscaled_source, view.run_source)
    figures = list(view.figures)
    renderers = [len(fig.renderers) for fig in figures]
    change(view, d_k=700)
    assert view.current_span.location == 1024
    expected = band_data(view.grid.cell(1024, False))
    np.testing.assert_array_equal(view.unscaled_source.data["loss"], expected["loss"])
    assert (view.scaled_source, view.unscaled_source, view.run_source) == sources
    assert view.figures == figures
    assert [len(fig.renderers) for fig in figures] == renderers
    assert "d_k = 1024, the grid's nearest to your 700" in view.grid_note.html


def run_legend_shown(view: TrainingView) -> list[bool]:
    """Whether each curve figure's "your run" legend entry is shown."""
    return [item.visible for item in view.drawing.run_items]


def test_a_finished_run_goes_when_its_settings_change(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner())
    # No run, no line: a "your run" entry would be a label with nothing before it.
    assert run_legend_shown(view) == [False, False]
    view.train()
    assert run_legend_shown(view) == [True, True]
    change(view, n=64)  # a control the run does not use
    assert len(view.run_source.data["step"]) == 30
    change(view, temperature=2.0)
    assert view.run_source.data["step"] == [] and view.progress.value == 0
    assert run_legend_shown(view) == [False, False]
    assert "Press Train to train at d_k = 64, scaled, temperature 2" in view.status.html
    assert "Train uses your temperature, 2." in view.grid_note.html


def test_a_running_run_keeps_its_settings_when_controls_move(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    view = make_view(small_grid, runner)
    job = view.train()
    change(view, d_k=4)
    executor.run_next()
    assert job.settings.d_k == 64 and len(view.run_source.data["step"]) == 30
    assert "Done: d_k = 64" in view.status.html


def test_texts_say_what_the_numbers_show(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(), d_k=1024, scaled=False)
    note = view.grid_note.html
    assert "typical example's softmax Jacobian" in note
    assert "gradient vanishes" not in note and "gradient norm vanishes" not in note
    cell = view.grid.cell(1024, False)
    jacobian = float(np.median([run.jacobian_norm[0] for run in cell.runs]))
    assert f"{jacobian:.2g} unscaled" in note
