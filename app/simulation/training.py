"""Training for the lesson's "Does it matter for learning?", shared by every session.

* :data:`SHARED_GRID`: the default comparison grid (:func:`sdpa_core.training_grid`),
  read from the results the package ships (:mod:`app.simulation.training_results`) the
  first time a section asks for it, or computed once per process if they are missing or
  stale, and then read by every session (its arrays are read-only).
* :data:`RUNNER`: the students' own Train runs, off the event loop in a small thread
  pool, at most :data:`MAX_CONCURRENT_RUNS` at once in this process; the others wait
  their turn in order of arrival. A session starts at most one run at a time (the
  view sees to that).

A run is a :class:`TrainingJob`. Its worker thread never touches the page: it collects
the steps and hands the session a callback through ``post`` (the session's next
event-loop tick when served), at most every :data:`UPDATE_INTERVAL_S` and never twice
before the first has run, so the page gets the steps in batches at a steady rate.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor

from app.simulation.training_results import shipped_grid
from sdpa_core import TrainingGrid, TrainingSettings, TrainingStep, iter_training, training_grid
from sdpa_core.training import FINAL_FRACTION

log = logging.getLogger(__name__)

MAX_CONCURRENT_RUNS = 2
"""Train runs that train at once in one server process: each uses about a core while it
computes, and the server has the students' moves to answer too."""

UPDATE_INTERVAL_S = 0.1
"""Shortest time between two batches of steps sent to a page: at most 10 updates a second."""

RUN_SECONDS = 1.5
"""A run is spread over at least this long, so its curves grow where the student can see
them (its 200 steps take about 0.15 s of computing); the rest of the time its thread sleeps."""

Later = Callable[[Callable[[], None]], None]
"""Runs a callback now or later: a served session's next tick, or at once in tests."""

WAITING, RUNNING, DONE, STOPPED, FAILED = "waiting", "running", "done", "stopped", "failed"
"""The states of a :class:`TrainingJob`."""

FINISHED = frozenset({DONE, STOPPED, FAILED})


class SharedGrid:
    """One training grid for the whole process, read or computed once, when first asked for.

    ``stored`` gives the grid at once if it can (the shipped results: a few milliseconds),
    else None; ``compute`` makes it otherwise (the core's default
    :func:`sdpa_core.training_grid`, seconds of CPU). :attr:`computations` counts how often
    ``compute`` ran (once at most, unless it raised). A caller asks with :meth:`request`
    and is called back with the future once the grid is there.
    """

    def __init__(
        self,
        compute: Callable[[], TrainingGrid] = training_grid,
        *,
        stored: Callable[[], TrainingGrid | None] | None = None,
    ) -> None:
        self._compute = compute
        self._stored = stored
        self._lock = threading.Lock()
        self._future: Future[TrainingGrid] | None = None
        self.computations = 0
        """How many times ``compute`` has been called."""
        self.from_stored = False
        """Whether the grid came from ``stored`` (no computation)."""

    @property
    def grid(self) -> TrainingGrid | None:
        """The grid if it has been read or computed, else None (never waits)."""
        future = self._future
        if future is None or not future.done() or future.exception() is not None:
            return None
        return future.result()

    def ready_grid(self) -> TrainingGrid | None:
        """The grid if it is there or ``stored`` gives it now, else None: nothing is
        computed (a warm-up that must not start seconds of CPU calls this)."""
        with self._lock:
            if self._future is None:
                stored = self._read_stored()
                if stored is not None:
                    self._future = self._stored_future(stored)
        return self.grid

    def request(self, *, background: bool = True) -> Future[TrainingGrid]:
        """The grid's future, starting its computation if nobody has yet.

        A grid ``stored`` gives is read in the calling thread, so the future is done on
        return. Otherwise, with ``background`` the grid is computed in a thread of its own,
        off the event loop; without, in the calling thread (outside a server: a notebook, a
        test), so the future is done on return unless another thread is computing it.
        """
        with self._lock:
            future = self._future
            start = future is None
            if start:
                # Under the lock: a second caller finds the future already there.
                stored = self._read_stored()
                if stored is not None:
                    future = self._future = self._stored_future(stored)
                    return future
                future = self._future = Future()
        if start:
            if background:
                threading.Thread(
                    target=self._run, args=(future,), name="sdpa-training-grid", daemon=True
                ).start()
            else:
                self._run(future)
        return future

    def _stored_future(self, grid: TrainingGrid) -> Future[TrainingGrid]:
        """A done future of the stored ``grid`` (called under the lock)."""
        self.from_stored = True
        future: Future[TrainingGrid] = Future()
        future.set_result(grid)
        return future

    def _read_stored(self) -> TrainingGrid | None:
        """The grid ``stored`` gives, or None (none given, none there, or it raised); asked
        once at most, so a stale file is read and reported once (called under the lock)."""
        stored, self._stored = self._stored, None
        if stored is None:
            return None
        try:
            return stored()
        except Exception:  # computed instead, as if nothing were stored
            log.exception("sdpa-sim: the stored training grid could not be read")
            return None

    def _run(self, future: Future[TrainingGrid]) -> None:
        self.computations += 1
        started = time.process_time()
        try:
            grid = self._compute()
        except Exception as error:  # the page says so; the log has the traceback
            log.exception("sdpa-sim: the training grid could not be computed")
            future.set_exception(error)
            return
        log.info("sdpa-sim: training grid computed in %.1f s CPU", time.process_time() - started)
        future.set_result(grid)


class TrainingJob:
    """One student's run: trained in a worker thread, its steps collected for the page.

    ``on_update(job)`` is handed to ``post`` whenever there is news (new steps, a new
    :attr:`status`) and none is pending already: it runs where ``post`` runs it (the
    session's event loop) and takes the news with :meth:`take`. After :meth:`close`
    nothing more is posted (the session has gone).
    """

    def __init__(
        self,
        settings: TrainingSettings,
        *,
        post: Later,
        on_update: Callable[[TrainingJob], None],
        run_seconds: float = RUN_SECONDS,
        update_interval: float = UPDATE_INTERVAL_S,
        steps: Callable[[TrainingSettings], Iterator[TrainingStep]] = iter_training,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.settings = settings
        self._post = post
        self._on_update = on_update
        self._run_seconds = run_seconds
        self._update_interval = update_interval
        self._steps = steps
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._new_steps: list[TrainingStep] = []
        self._update_due = False
        self._closed = False
        self._last_post = -math.inf
        self.status = WAITING
        """One of waiting, running, done, stopped, failed."""
        self.steps_done = 0
        """Steps trained so far (the page may not have them yet)."""
        self.history: list[TrainingStep] = []
        """Every step trained so far, oldest first."""
        self.seconds = 0.0
        """Wall time from the first step to the end of the run."""

    @property
    def total_steps(self) -> int:
        """Steps the run trains unless stopped."""
        return self.settings.steps

    @property
    def active(self) -> bool:
        """Waiting or running: not finished."""
        return self.status not in FINISHED

    @property
    def stop_requested(self) -> bool:
        """Whether :meth:`stop` (or :meth:`close`) has been called."""
        return self._stop.is_set()

    @property
    def final_loss(self) -> float | None:
        """Mean loss over the last tenth of the steps trained (None before the first)."""
        with self._lock:
            losses = [step.loss for step in self.history]
        if not losses:
            return None
        window = max(1, math.ceil(len(losses) * FINAL_FRACTION))
        return sum(losses[-window:]) / window

    def stop(self) -> None:
        """Ask the run to stop after its current step (a waiting run never starts)."""
        self._stop.set()

    def close(self) -> None:
        """Stop, and post nothing more: the session that asked for the run has gone."""
        with self._lock:
            self._closed = True
        self._stop.set()

    def take(self) -> list[TrainingStep]:
        """The steps trained since the last call, oldest first (call where ``post`` runs)."""
        with self._lock:
            steps, self._new_steps = self._new_steps, []
            self._update_due = False
        return steps

    def set_status(self, status: str) -> None:
        """Record a new status and tell the page (the runner calls this)."""
        self.status = status
        self._notify(force=True)

    def run(self) -> None:
        """Train, step by step, until done or stopped (in a worker thread).

        The steps are spread over at least ``run_seconds``; the wait between two is a wait
        on the stop signal, so Stop ends it at once.
        """
        if self._stop.is_set():
            self.set_status(STOPPED)
            return
        self.set_status(RUNNING)
        start = self._clock()
        status = DONE
        try:
            for index, step in enumerate(self._steps(self.settings)):
                with self._lock:
                    self._new_steps.append(step)
                    self.history.append(step)
                    self.steps_done = index + 1
                self.seconds = self._clock() - start
                self._notify()
                if self._stop.is_set():
                    break
                wait = start + self._run_seconds * (index + 1) / self.total_steps - self._clock()
                if wait > 0 and self._stop.wait(wait):
                    break
        except Exception:
            log.exception("sdpa-sim: a training run failed (%s)", self.settings)
            status = FAILED
        self.seconds = self._clock() - start
        if status == DONE and self.steps_done < self.total_steps:
            status = STOPPED
        self.set_status(status)

    def _notify(self, *, force: bool = False) -> None:
        """Post ``on_update`` unless one is pending, or (unless ``force``) was posted less
        than ``update_interval`` ago."""
        now = self._clock()
        with self._lock:
            if self._closed or self._update_due:
                return
            if not force and now - self._last_post < self._update_interval:
                return
            self._update_due = True
            self._last_post = now
        try:
            self._post(self._deliver)
        except RuntimeError:
            # The session's document was destroyed between the check above and the post.
            log.debug("sdpa-sim: a training update found its session closed")

    def _deliver(self) -> None:
        with self._lock:
            if self._closed:
                return
        self._on_update(self)


class TrainingRunner:
    """Runs :class:`TrainingJob` s off the event loop, at most ``limit`` at once.

    A job started over the limit waits (status ``waiting``) and starts, in order of
    arrival, when a running one ends; a stopped waiting job is dropped. ``executor`` runs
    each job's :meth:`TrainingJob.run` (a thread pool of ``limit`` threads unless given:
    tests pass one that runs it at once).
    """

    def __init__(
        self,
        limit: int = MAX_CONCURRENT_RUNS,
        executor: Executor | None = None,
        *,
        run_seconds: float = RUN_SECONDS,
        update_interval: float = UPDATE_INTERVAL_S,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be ≥ 1: got {limit}")
        self.limit = limit
        self.run_seconds = run_seconds
        self.update_interval = update_interval
        self._executor = executor
        self._lock = threading.Lock()
        self._running = 0
        self._waiting: deque[TrainingJob] = deque()

    @property
    def running(self) -> int:
        """Jobs training now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Jobs waiting for a free slot."""
        return len(self._waiting)

    def job(
        self,
        settings: TrainingSettings,
        *,
        post: Later,
        on_update: Callable[[TrainingJob], None],
        steps: Callable[[TrainingSettings], Iterator[TrainingStep]] = iter_training,
    ) -> TrainingJob:
        """A new job for ``settings`` with this runner's pace, not started yet."""
        return TrainingJob(
            settings,
            post=post,
            on_update=on_update,
            run_seconds=self.run_seconds,
            update_interval=self.update_interval,
            steps=steps,
        )

    def start(self, job: TrainingJob) -> bool:
        """Run ``job`` now, or over the limit make it wait its turn; True if it started."""
        with self._lock:
            free = self._running < self.limit
            if free:
                self._running += 1
            else:
                self._waiting.append(job)
        if free:
            self._submit(job)
        else:
            job.set_status(WAITING)
        return free

    def stop(self, job: TrainingJob) -> None:
        """Stop ``job``: a running one after its current step, a waiting one at once."""
        job.stop()
        with self._lock:
            was_waiting = job in self._waiting
            if was_waiting:
                self._waiting.remove(job)
        if was_waiting:
            job.set_status(STOPPED)

    def close(self, job: TrainingJob) -> None:
        """Stop ``job`` and post nothing more for it (its session has closed)."""
        job.close()
        self.stop(job)

    def _submit(self, job: TrainingJob) -> None:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(
                        max_workers=self.limit, thread_name_prefix="sdpa-train"
                    )
        self._executor.submit(self._run, job)

    def _run(self, job: TrainingJob) -> None:
        try:
            job.run()
        finally:
            with self._lock:
                following = self._waiting.popleft() if self._waiting else None
                if following is None:
                    self._running -= 1
            if following is not None:
                self._submit(following)


SHARED_GRID = SharedGrid(training_grid, stored=shipped_grid)
"""The default grid of this process, shared read-only by every session: the shipped
results, or (missing or stale) computed once."""

RUNNER = TrainingRunner()
"""The Train runs of this process, at most :data:`MAX_CONCURRENT_RUNS` at once."""
