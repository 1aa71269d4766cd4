"""When an update runs: at once, on a served session's next event-loop tick, or paced."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import panel as pn
from bokeh.document import Document
from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

Later = Callable[[Callable[[], None]], None]
"""Runs a callback now or later (a served session's next tick, a benchmark's own clock)."""


def run_now(callback: Callable[[], None]) -> None:
    """Run ``callback`` at once: the :data:`Later` outside a server."""
    callback()


def once_page_loaded(callback: Callable[[], None]) -> None:
    """Run ``callback`` now if the session's page has loaded (or outside a server), else as
    soon as it has: for a change to the page's structure made in answer to the page.

    A page can ask for more of itself before it has told the server it is ready: the
    "More controls" button opens itself as it renders on a wide window. Panel 1.9 drops the
    changes a ``hold`` collects before then, on the assumption that the client will get the
    whole document later, though that client has it already: the models built in answer
    never reach the page, and the next change that mentions them fails there with
    "reference pNNNN isn't known" (Panel 1.10 checks whether the client has the document).
    Waiting for the page's load (``pn.state.onload``) makes both versions send them.

    The changes go out through Bokeh's session, not Panel's own writer
    (:func:`sent_by_the_session`): such a change adds models to the page, and a patch that
    never arrives leaves a student without the lesson for good.
    """
    pn.state.onload(partial(sent_by_the_session, callback))


def sent_by_the_session(callback: Callable[[], None]) -> None:
    """Run ``callback`` with the changes it makes to a served session's document held, and
    let Bokeh's session send them as it releases the document's lock; elsewhere (no
    server, or a hold already open) run it under ``pn.io.hold()``.

    For the callbacks Bokeh runs under the session's lock: a page's patch, a next-tick
    callback, Panel's onload callbacks (which run while Bokeh handles the page's
    ``document_ready``). Why not Panel's hold alone: Panel writes the changes itself, and
    when the socket is busy it queues the message for a task that sends it later; with
    several messages queued close together (a class arriving on ``--num-procs 2``), one
    can stay in that queue until the session's next change made through Panel, which
    never comes when the page's moves travel on the session's channel. Measured with
    ``benchmarks/bench_class.py --num-procs 0`` (100 students opening the lesson at once):
    6 or 7 of 100 lessons never arrived in 4 of 13 runs, each with its patch still queued
    in Panel 8 s after it was made (docs/performance.md, *Eighth series*). Bokeh's
    session writes what it was given before it releases the lock.
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None or doc.callbacks.hold_value is not None:
        with pn.io.hold():
            callback()
        return
    doc.hold("combine")
    try:
        callback()
    finally:
        doc.unhold()


def next_tick(doc: Document) -> Later:
    """The :data:`Later` of a served session: ``doc``'s next event-loop tick, under its lock."""

    def defer(callback: Callable[[], None]) -> None:
        # A session whose page has closed has had its document destroyed (Bokeh then
        # drops its session context): nothing is left to update, and it takes no callback.
        if doc.session_context is None:
            return
        doc.add_next_tick_callback(partial(_run_in, doc, callback))

    return defer


def later_by(doc: Document) -> Callable[[float, Callable[[], None]], None]:
    """Runs a callback ``delay`` seconds from now on a served session's event loop, under
    ``doc``'s lock (nothing once the session has closed)."""

    def run_later(delay: float, callback: Callable[[], None]) -> None:
        if doc.session_context is None:
            return
        doc.add_timeout_callback(partial(_run_in, doc, callback), delay * 1000)

    return run_later


def _run_unlocked(doc: Document, callback: Callable[[], None]) -> None:
    with set_curdoc(doc):
        callback()


async def _run_in(doc: Document, callback: Callable[[], None]) -> None:
    # A coroutine, so it runs on the server's event loop and Panel sends what pn.io.hold()
    # collects there as one message instead of one per change.
    _run_unlocked(doc, callback)


REFRESH_POOL = ThreadPoolExecutor(
    max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="sdpa-refresh"
)
"""The threads a served session's large refresh runs in, shared by the process's sessions
(read-only caches only): NumPy releases the GIL in its products, so the event loop goes on
answering the other students meanwhile. Its threads start at the first refresh, after any
``--num-procs`` worker has been forked."""

WRITE_POLL_S = 0.005
"""How often a paced update looks again whether its session's last message has been sent."""

WRITE_WAIT_LIMIT_S = 10.0
"""Longest a paced update waits for its session's last message to be sent, in case Panel's
bookkeeping of writes ever stays busy: the page still ends on the last value."""


class Paced:
    """A :data:`Later` for a served session's plot updates: its next tick, but no sooner
    after the previous update was sent than that update took, and not while the session's
    messages are still being written to its socket (``writes_pending``).

    An update counts from its start until its message has been written (the next locked
    callback of the session runs only then). A drag or a flood of slider messages then costs
    at most about half of a core for that session, whatever its size, and a client that
    reads slowly (or not at all) has at most one update in flight. The values that arrive
    in between are folded by the caller into the next update, which always shows the last.

    An update that goes on elsewhere (a large refresh in :data:`REFRESH_POOL`) returns a
    :class:`~concurrent.futures.Future`, done once its numbers have been sent: it is in
    flight until then.
    """

    def __init__(
        self,
        doc: Document,
        clock: Callable[[], float] = time.perf_counter,
        writes_pending: Callable[[], bool] = lambda: False,
        off_lock_loop: Callable[[], IOLoop | None] = lambda: None,
    ) -> None:
        self._doc = doc
        self._clock = clock
        self._writes_pending = writes_pending
        self._off_lock_loop = off_lock_loop
        """The event loop an update may run on now outside the document's lock, or None: it
        then sends its numbers on the session's own channel, and whatever it changes of the
        document Panel applies on a locked tick of its own. Asked, not taken here: Bokeh
        3.10 applies a page's changes in a worker thread, which has no event loop."""
        self._not_before = 0.0
        """When, on ``clock``, the next update may start."""
        self._in_flight = False
        """Whether the last update has not been written out yet."""

    def __call__(self, callback: Callable[[], None]) -> None:
        """Schedule ``callback``: on the next tick, or once the last update has been written
        and as long as it took has passed since."""
        now = self._clock()
        self._schedule(callback, self._not_before - now, now)

    def _schedule(self, callback: Callable[[], None], wait: float, asked: float) -> None:
        loop = self._off_lock_loop()
        if loop is not None:
            # A plain event-loop callback: Bokeh's locked next-tick callback costs a
            # measured share of a move (docs/performance.md, *Sixth series*).
            # ``add_callback`` is the one IOLoop method safe from any thread.
            due = partial(_run_unlocked, self._doc, partial(self._when_due, callback, asked))
            if wait > 0:
                loop.add_callback(loop.call_later, wait, due)
            else:
                loop.add_callback(due)
            return
        run = partial(_run_in, self._doc, partial(self._when_due, callback, asked))
        if wait > 0:
            self._doc.add_timeout_callback(run, wait * 1000)
        else:
            self._doc.add_next_tick_callback(run)

    def _when_due(self, callback: Callable[[], None], asked: float) -> None:
        now = self._clock()
        if now - asked < WRITE_WAIT_LIMIT_S:
            if self._in_flight or self._writes_pending():
                self._schedule(callback, WRITE_POLL_S, asked)
                return
            if now < self._not_before:
                self._schedule(callback, self._not_before - now, asked)
                return
        self._in_flight = True
        if self._off_lock_loop() is not None:
            try:
                going_on = callback()
            except BaseException:
                self._sent(now)
                raise
            if isinstance(going_on, Future):
                going_on.add_done_callback(lambda done: self._sent(now))
            else:
                # Its frame is on the channel's socket now (``writes_pending`` watches it).
                self._sent(now)
            return
        try:
            callback()
        finally:
            # Bokeh writes what a locked callback sent before it releases the session's lock,
            # so the next locked callback runs once the update is serialised and written.
            self._doc.add_next_tick_callback(partial(_run_in, self._doc, partial(self._sent, now)))

    def _sent(self, start: float) -> None:
        end = self._clock()
        self._not_before = end + (end - start)
        self._in_flight = False
