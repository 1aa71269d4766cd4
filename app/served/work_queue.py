"""Per-session limits on the heavy work a page's messages queue (issue 45).

A page's message costs the server a few bytes to send and can cost seconds of a thread and
tens of MiB to answer: a "Download CSV" press at n = 1024 writes a 50 MB text in 1.4 s.
Submitted to a pool as it came, eight such presses from one page delayed every other
student's moves from 0.15 s to 26–35 s and held about 650 MiB while the page did not read.
A :class:`WorkGate` stands between one session's messages and the pool:

- **One at a time.** A session has at most one job of its gate in :data:`WORK_POOL` (queued
  or running), so one student's presses never take more than one of its threads, and
  :data:`app.served.ticks.REFRESH_POOL`, which runs the students' moves, is not shared
  with them at all.
- **Repeats merged.** Each job has a kind (a fixed name in the code, never the page's) and
  a key (what it computes). The latest request of a kind is the one that counts: it
  replaces the waiting job of its kind, and is dropped when the same job is already
  waiting or running (then nothing of its kind waits). A gate holds at most one waiting
  job per kind, whatever arrives.
- **Results not piled up.** A result is delivered where ``post`` runs (the session's event
  loop) and the next job starts only once ``ready()`` says what was sent has been written
  to the page's socket: a page that does not read holds one result, not a queue of them.
- **Nothing wedges.** A job that raises is logged and frees the gate; :meth:`WorkGate.close`
  (the session has gone) drops the waiting jobs and the running one's result.

The other work a page's messages start keeps the same rules by its own means: a move's
or Resample's refresh is paced by :class:`app.served.ticks.Paced` (one in flight per
session, the moves that arrive meanwhile folded into the next), a Train run by
:class:`app.served.components.training_session.TrainingSession` (one run per session, a
press while it runs ignored) in :data:`app.simulation.training.RUNNER`'s own threads, and a
page's warm-up (:mod:`app.served.warmup`, before any session exists) is merged by what it
computes and runs in :data:`WORK_POOL` too.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from app.served.ticks import Later, run_now

log = logging.getLogger(__name__)

WORK_POOL = ThreadPoolExecutor(
    max_workers=max(1, (os.cpu_count() or 1) // 2), thread_name_prefix="sdpa-work"
)
"""The threads the sessions' heavy jobs (CSV files) and the pages' warm-ups run in, apart
from :data:`app.served.ticks.REFRESH_POOL`: half the cores, so the students' moves always
find a free thread there. Its threads start at the first job, after any ``--num-procs``
worker has been forked."""

READY_POLL_S = 0.05
"""How often a gate looks again whether the last result has been written to the page."""

Wait = Callable[[float, Callable[[], None]], None]
"""Runs a callback some seconds from now where ``post`` runs (a served session's loop)."""


@dataclass
class _Job:
    kind: str
    key: Hashable
    compute: Callable[[], Any]
    deliver: Callable[[Any], None]


class WorkGate:
    """One session's heavy jobs: at most one in ``pool`` at a time, one waiting per kind,
    repeats merged, each result delivered through ``post`` and the next started once
    ``ready()`` (looked at again every :data:`READY_POLL_S` through ``wait``).

    Defaults (a pool of its own is :data:`WORK_POOL`, ``post`` at once, always ready) suit
    a test; a served session passes its next tick, its socket's state and its timer.
    """

    def __init__(
        self,
        *,
        pool: Executor = WORK_POOL,
        post: Later = run_now,
        ready: Callable[[], bool] = lambda: True,
        wait: Wait | None = None,
    ) -> None:
        self._pool = pool
        self._post = post
        self._ready = ready
        self._wait = wait
        self._lock = threading.Lock()
        self._waiting: dict[str, _Job] = {}
        """The jobs waiting, one per kind, oldest first (a replacement keeps its place)."""
        self._running: _Job | None = None
        self._start_due = False
        """Whether a start is posted or a look at ``ready()`` scheduled (one at a time)."""
        self._closed = False
        self.merged = 0
        """Requests dropped because the same job was running or waiting (for tests)."""
        self.replaced = 0
        """Waiting jobs replaced by a newer request of their kind (for tests)."""
        self.started = 0
        """Jobs handed to the pool (for tests)."""

    @property
    def waiting(self) -> int:
        """Jobs waiting for their turn (at most one per kind)."""
        return len(self._waiting)

    @property
    def busy(self) -> bool:
        """Whether a job is in the pool or its result not yet delivered."""
        return self._running is not None

    def submit(
        self,
        kind: str,
        key: Hashable,
        compute: Callable[[], Any],
        deliver: Callable[[Any], None],
    ) -> bool:
        """Ask for ``compute()`` in the pool and ``deliver(result)`` where ``post`` runs;
        False when merged into the same job (same ``kind`` and ``key``) already running or
        waiting, or once closed. ``compute`` must hold what it needs (it runs later, in
        another thread); ``kind`` is one of a few names fixed in the code."""
        job = _Job(kind, key, compute, deliver)
        with self._lock:
            if self._closed:
                return False
            if self._same(self._running, job):
                # The latest request is the one under way: nothing of its kind need wait.
                self.replaced += self._waiting.pop(kind, None) is not None
                self.merged += 1
                return False
            if self._same(self._waiting.get(kind), job):
                self.merged += 1
                return False
            self.replaced += kind in self._waiting
            self._waiting[kind] = job
            post = not self._start_due and self._running is None
            self._start_due |= post
        if post:
            self._post(self._start_next)
        return True

    def close(self) -> None:
        """Drop the waiting jobs and the running one's result: the session has gone."""
        with self._lock:
            self._closed = True
            self._waiting.clear()

    @staticmethod
    def _same(one: _Job | None, other: _Job) -> bool:
        return one is not None and (one.kind, one.key) == (other.kind, other.key)

    def _start_next(self) -> None:
        with self._lock:
            self._start_due = False
            if self._closed or self._running is not None or not self._waiting:
                return
            if self._wait is not None and not self._ready():
                # The last result is still being written: the next waits, so a page that
                # does not read holds one result.
                self._start_due = True
                later = True
            else:
                later = False
                kind = next(iter(self._waiting))
                job = self._running = self._waiting.pop(kind)
                self.started += 1
        if later:
            self._wait(READY_POLL_S, self._start_next)
            return
        try:
            future = self._pool.submit(job.compute)
        except RuntimeError:
            # The pool is shut down (the process is stopping): nothing more will run.
            log.warning("sdpa-sim: a session's %s job found the pool shut down", job.kind)
            with self._lock:
                self._running = None
            return
        future.add_done_callback(lambda done: self._post(partial(self._finish, job, done)))

    def _finish(self, job: _Job, done: Future) -> None:
        with self._lock:
            self._running = None
            closed = self._closed
        try:
            error = done.exception()
            if error is not None:
                log.error("sdpa-sim: a session's %s job failed", job.kind, exc_info=error)
            elif not closed:
                job.deliver(done.result())
        finally:
            # Whatever happened to this one, the next gets its turn.
            with self._lock:
                post = not self._start_due and bool(self._waiting)
                self._start_due |= post
            if post:
                self._start_next()
