"""The "Does it matter for learning?" section without a server: the shared grid, Train,
Stop, the cap on runs at once, the text under the plots, and what the page is sent of them
(applied as the page applies it: a view's changed keys merged, a run's steps spliced in)."""

from __future__ import annotations

import base64
import html
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hostile_messages import queued_work_floods

from app.page.training import CURVE_COLUMNS
from app.page.views.training_grid import band_data, nearest_grid_d_k, trailing_mean
from app.served.components.lesson import DrawnLesson
from app.served.components.training import training_figures
from app.served.components.training_session import TrainingSession, run_settings
from app.served.ticks import run_now
from app.simulation import training as training_runs
from app.simulation.model import SimulationModel
from app.simulation.state import SimulationState
from app.simulation.training import (
    DONE,
    STOPPED,
    WAITING,
    SharedGrid,
    TrainingRunner,
)
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


class Page:
    """What a page holds of the section, from what the session sends it, applied as
    drawn_lesson.js applies it; every send's ``whole`` must be what the page then holds."""

    def __init__(self) -> None:
        self.figures = ""
        self.view: dict[str, Any] = {}
        self.run: dict[str, list[float]] = {"step": [], "loss": [], "accuracy": []}
        self.sends = 0

    def __call__(self, changes: dict[str, Any], whole: dict[str, Any]) -> None:
        assert set(changes) == set(whole) and changes
        self.sends += 1
        if "figures" in changes:
            self.figures = changes["figures"]
        if "view" in changes:
            assert changes["view"], "a view change says what changed"
            self.view.update(changes["view"])
            assert self.view == whole["view"]
        if "run" in changes:
            start = changes["run"]["from"]
            assert start <= len(self.run["step"]), "a run's steps follow those the page has"
            for name, values in self.run.items():
                self.run[name] = values[:start] + changes["run"][name]
            assert whole["run"] == {"from": 0, **self.run}

    def bands(self, column: str, scaled: bool) -> np.ndarray:
        """The ``column`` of the bands the page draws now (lesson.js's trainingBands)."""
        spec = json.loads(self.figures)["spec"]
        values = np.frombuffer(base64.b64decode(spec["table"]), dtype="<f4")
        table = values.reshape(
            len(spec["grid_d_values"]), 2, len(spec["columns"]), len(spec["steps"])
        )
        return table[self.view["bands"], 0 if scaled else 1, spec["columns"].index(column)]

    def shown_d_k(self) -> int:
        """The grid d_k the page marks and draws the bands of."""
        return json.loads(self.figures)["spec"]["grid_d_values"][self.view["bands"]]


STATES: dict[int, SimulationState] = {}
"""Each section's state, by the section's id: what the session would hold."""

PAGES: dict[int, Page] = {}
"""Each section's page, by the section's id."""


def make_view(
    shared: SharedGrid, runner: TrainingRunner, post=run_now, **controls: object
) -> TrainingSession:
    state = SimulationState(**controls)
    page = Page()
    view = TrainingSession(
        SimulationModel(state),
        page,
        training_figures,
        shared_grid=shared,
        runner=runner,
        post=post,
        background=False,
    )
    STATES[id(view)] = state
    PAGES[id(view)] = page
    return view


def page_of(view: TrainingSession) -> Page:
    return PAGES[id(view)]


def change(view: TrainingSession, **controls: object) -> None:
    state = STATES[id(view)]
    model = SimulationModel(state)
    state.param.update(**controls)
    view.update(model, model.refresh(controls))


# --- the shared grid ----------------------------------------------------------------------


def test_the_section_builds_from_the_shared_default_grid() -> None:
    """Built as the lesson builds it: the process's grid, its sentence, its numbers; the
    grid is the package's shipped results, drawn in the first send, never "Computing…"."""
    page = Page()
    view = TrainingSession(SimulationModel(SimulationState(d_k=90)), page, training_figures)
    shared = training_runs.SHARED_GRID
    assert view.grid is shared.grid is not None
    assert shared.from_stored and shared.computations == 0, "read, not computed"
    assert page.sends == 1 and page.figures, "the first send draws the grid"
    assert page.view["status"].startswith("Press Train")
    assert nearest_grid_d_k(90) == 64 and page.shown_d_k() == 64
    expected = band_data(view.grid.cell(64, True))
    np.testing.assert_allclose(page.bands("loss", True), expected["loss"], rtol=1e-6)
    assert "d_k = 64, the grid's nearest to your 90" in page.view["note"]
    assert view.summary_sentence == describe_summary(view.grid.summary)
    assert html.escape(view.summary_sentence, quote=False) in page.view["summary"]
    assert page.view["train"] and not page.view["stop"]
    # A second section (another student) reads the same grid, computed once, and is sent
    # the same figures, built once.
    other_page = Page()
    other = TrainingSession(SimulationModel(SimulationState()), other_page, training_figures)
    assert other.grid is view.grid and shared.computations == 0
    assert other_page.figures is page.figures


def test_the_figures_are_the_grids_and_name_what_the_page_draws(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner())
    figures = json.loads(page_of(view).figures)
    assert len(figures["items"]) == 3
    names = {"training_scaled", "training_unscaled", "training_run", "training_run_items"}
    assert names | {"training_span"} == set(figures["models"])
    for item, name in zip(figures["items"], ("loss", "accuracy", "summary"), strict=True):
        text = json.dumps(item)
        assert f"training_{name}" in text
        ids = [figures["models"][key] for key in names] if name != "summary" else []
        for both in ids:
            assert both[("loss", "accuracy").index(name)] in text
    spec = figures["spec"]
    assert spec["grid_d_values"] == [4, 64, 1024] and spec["columns"] == list(CURVE_COLUMNS)
    assert spec["shown"] == [] and spec["notes"] == [], "the session sends its own"


def test_the_grid_is_computed_once_for_every_view() -> None:
    calls: list[int] = []

    def counting() -> object:
        calls.append(1)
        return training_grid(**SMALL)

    shared = SharedGrid(counting)
    views = [make_view(shared, sync_runner()) for _ in range(3)]
    assert len(calls) == 1 and shared.computations == 1
    assert all(view.grid is views[0].grid for view in views)
    assert len({id(page_of(view).figures) for view in views}) == 1


def test_the_section_says_computing_until_the_grid_arrives() -> None:
    release = threading.Event()

    def slow() -> object:
        release.wait(10)
        return training_grid(**SMALL)

    shared = SharedGrid(slow)
    posted: queue.Queue = queue.Queue()
    model = SimulationModel(SimulationState())
    page = Page()
    view = TrainingSession(
        model,
        page,
        training_figures,
        shared_grid=shared,
        runner=sync_runner(),
        post=posted.put,
        background=True,
    )
    assert view.grid is None and page.figures == "" and page.view["bands"] is None
    assert "Computing the comparison runs" in page.view["status"]
    assert not page.view["train"]
    assert view.train() is None, "Train waits for the grid"
    release.set()
    posted.get(timeout=10)()  # the grid thread posts the drawing to the session's loop
    assert view.grid is shared.grid is not None and page.figures
    assert "Press Train" in page.view["status"] and page.view["train"]


def test_a_failed_grid_is_said_and_train_stays_off() -> None:
    def failing() -> object:
        raise ValueError("no grid")

    view = make_view(SharedGrid(failing), sync_runner())
    page = page_of(view)
    assert view.grid is None and view.failed and page.figures == ""
    assert "could not be computed" in page.view["summary"]
    assert "could not be computed" in page.view["status"]
    assert not page.view["train"]


# --- Train and Stop -----------------------------------------------------------------------


def test_train_streams_every_step_into_the_curves(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(), d_k=1024, scaled=False, seed=3)
    page = page_of(view)
    job = view.train()
    assert job is not None and job.status == DONE
    assert job.settings == run_settings(STATES[id(view)], view.grid)
    assert (job.settings.d_k, job.settings.scaled, job.settings.seed) == (1024, False, 3)
    assert job.settings.lr == view.grid.cell(1024, False).lr
    assert page.run["step"] == [float(step) for step in range(30)]
    assert view.updates == 30, "one update per step when the interval is 0"
    # The curve is each step's loss averaged over the steps up to it, as the bands are.
    np.testing.assert_allclose(page.run["loss"], trailing_mean([s.loss for s in job.history]))
    assert page.run == view.run
    assert page.view["progress"] == 100
    assert "Done: d_k = 1024, unscaled" in page.view["status"]
    assert page.view["train"] and not page.view["stop"]


def test_a_batch_sends_only_its_new_steps(small_grid: SharedGrid) -> None:
    sent: list[dict[str, Any]] = []
    page = Page()

    def recording(changes: dict[str, Any], whole: dict[str, Any]) -> None:
        sent.append(changes)
        page(changes, whole)

    view = TrainingSession(
        SimulationModel(SimulationState()),
        recording,
        training_figures,
        shared_grid=small_grid,
        runner=sync_runner(),
        background=False,
    )
    sent.clear()
    view.train()
    runs = [changes["run"] for changes in sent if "run" in changes]
    assert runs[0] == {"from": 0, "step": [], "loss": [], "accuracy": []}, "Train clears"
    assert [run["from"] for run in runs[1:]] == list(range(30))
    assert all(len(run["step"]) == 1 for run in runs[1:])
    # The view's unchanged keys are not sent again.
    views = [changes["view"] for changes in sent if "view" in changes]
    assert all("note" not in changed and "summary" not in changed for changed in views)
    assert "figures" not in {key for changes in sent for key in changes}


def test_steps_arrive_in_batches_and_none_is_lost(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(update_interval=60.0))
    view.train()
    assert 1 <= view.updates <= 2, "a long interval batches the steps"
    assert len(page_of(view).run["step"]) == 30


def test_stop_ends_the_run_after_the_current_step(small_grid: SharedGrid) -> None:
    views: list[TrainingSession] = []

    def post(callback: Callable[[], None]) -> None:
        callback()
        if views and views[0].updates == 5:
            views[0].stop()  # the student presses Stop while steps stream in

    view = make_view(small_grid, sync_runner(), post=post)
    views.append(view)
    page = page_of(view)
    job = view.train()
    assert job.status == STOPPED and job.steps_done == 5
    assert len(page.run["step"]) == 5
    assert "Stopped at step 5 of 30" in page.view["status"]
    assert page.view["progress"] == round(100 * 5 / 30)
    assert page.view["train"]


def test_a_session_runs_one_run_at_a_time(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(2, executor, run_seconds=0.0, update_interval=0.0)
    view = make_view(small_grid, runner)
    page = page_of(view)
    first = view.train()
    assert view.train() is None, "a second press while it runs does nothing"
    assert len(executor.pending) == 1 and not page.view["train"]
    assert page.view["stop"]
    executor.run_next()
    assert first.status == DONE
    assert view.train() is not None, "once it is done, Train trains again"


@pytest.mark.parametrize("seed", range(3))
def test_a_flood_of_train_and_stop_holds_one_run_of_the_session(
    small_grid: SharedGrid, seed: int
) -> None:
    # Queued work per session (issue 45): whatever a page presses, one run of it waits or
    # trains, and another session's run still gets its slot.
    executor = ManualExecutor()
    runner = TrainingRunner(2, executor, run_seconds=0.0, update_interval=0.0)
    flooding, other = make_view(small_grid, runner), make_view(small_grid, runner, seed=1)
    floods = [msgs for family, msgs in queued_work_floods(seed, length=200) if family == "train"]
    for index, (_, msg) in enumerate(floods[0]):
        flooding.train() if msg["training"] == "train" else flooding.stop()
        assert len(executor.pending) + runner.waiting <= 1
        if index % 9 == 0 and executor.pending:
            executor.run_next()
    assert other.train() is not None and runner.waiting == 0
    while executor.pending:
        executor.run_next()
    assert runner.running == 0


def test_the_cap_makes_the_run_over_it_wait_its_turn(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(2, executor, run_seconds=0.0, update_interval=0.0)
    views = [make_view(small_grid, runner, seed=seed) for seed in range(3)]
    jobs = [view.train() for view in views]
    assert runner.running == 2 and runner.waiting == 1
    assert len(executor.pending) == 2, "only two runs reach the pool"
    assert jobs[2].status == WAITING
    assert "Waiting for a free slot" in page_of(views[2]).view["status"]
    assert page_of(views[2]).view["stop"], "a waiting run can be stopped"
    executor.run_next()  # the first run ends: the waiting one takes its slot
    assert jobs[0].status == DONE
    assert runner.running == 2 and runner.waiting == 0
    assert len(executor.pending) == 2
    while executor.pending:
        executor.run_next()
    assert [job.status for job in jobs] == [DONE, DONE, DONE]
    assert runner.running == 0
    assert all(len(page_of(view).run["step"]) == 30 for view in views)


def test_a_waiting_run_stopped_never_starts(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    first, second = (make_view(small_grid, runner) for _ in range(2))
    first.train()
    job = second.train()
    assert job.status == WAITING
    second.stop()
    assert job.status == STOPPED and runner.waiting == 0
    assert "Stopped before the first step" in page_of(second).view["status"]
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


def test_bands_follow_the_nearest_grid_d_k(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner())
    page = page_of(view)
    figures = page.figures
    change(view, d_k=700)
    assert page.shown_d_k() == 1024
    expected = band_data(view.grid.cell(1024, False))
    np.testing.assert_allclose(page.bands("loss", False), expected["loss"], rtol=1e-6)
    assert page.figures is figures, "a move sends no figure"
    assert "d_k = 1024, the grid's nearest to your 700" in page.view["note"]


def test_a_finished_run_goes_when_its_settings_change(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner())
    page = page_of(view)
    view.train()
    sends = page.sends
    change(view, n=64)  # a control the run does not use
    assert len(page.run["step"]) == 30 and page.sends == sends, "nothing to send"
    change(view, temperature=2.0)
    assert page.run["step"] == [] and page.view["progress"] == 0
    assert "Press Train to train at d_k = 64, scaled, temperature 2" in page.view["status"]
    assert "Train uses your temperature, 2." in page.view["note"]


def test_a_running_run_keeps_its_settings_when_controls_move(small_grid: SharedGrid) -> None:
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    view = make_view(small_grid, runner)
    job = view.train()
    change(view, d_k=4)
    executor.run_next()
    assert job.settings.d_k == 64 and len(page_of(view).run["step"]) == 30
    assert "Done: d_k = 64" in page_of(view).view["status"]


def test_texts_say_what_the_numbers_show(small_grid: SharedGrid) -> None:
    view = make_view(small_grid, sync_runner(), d_k=1024, scaled=False)
    note = page_of(view).view["note"]
    assert "typical example's softmax Jacobian" in note
    assert "gradient vanishes" not in note and "gradient norm vanishes" not in note
    cell = view.grid.cell(1024, False)
    jacobian = float(np.median([run.jacobian_norm[0] for run in cell.runs]))
    assert f"{jacobian:.2g} unscaled" in note


# --- the page's presses -------------------------------------------------------------------


def test_the_lesson_takes_train_and_stop_and_nothing_else(small_grid: SharedGrid) -> None:
    """The lesson component hands a press on Train or Stop to its section, once built; any
    other message about training is dropped."""
    from app.served.sections import LessonSections

    model = SimulationModel(SimulationState())
    lesson = LessonSections(model)
    drawn: DrawnLesson = lesson.drawn
    for hostile in ({"training": "train"}, {"training": ["train"]}, {"training": None}):
        drawn.take_message(hostile)  # not opened yet: nothing to press
    assert lesson.training.view is None
    executor = ManualExecutor()
    runner = TrainingRunner(1, executor, run_seconds=0.0, update_interval=0.0)
    section = TrainingSession(
        model,
        drawn.show_training,
        training_figures,
        shared_grid=small_grid,
        runner=runner,
        background=False,
    )
    lesson.training.view = section
    assert drawn.training_figures and drawn.training_view["train"]
    for hostile in ({"training": "TRAIN"}, {"training": 1}, {"training": {"x": 1}}, {"x": 1}):
        drawn.take_message(hostile)
    assert section.job is None and executor.pending == []
    drawn.take_message({"training": "train"})
    assert section.job is not None and len(executor.pending) == 1
    assert drawn.training_view["stop"] and not drawn.training_view["train"]
    drawn.take_message({"training": "stop"})
    executor.run_next()
    assert section.job.status == STOPPED
    assert drawn.training_run["from"] == 0
