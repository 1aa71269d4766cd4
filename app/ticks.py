"""When an update runs: at once, on a served session's next event-loop tick, or paced."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from bokeh.document import Document
from panel.io.state import set_curdoc

Later = Callable[[Callable[[], None]], None]
"""Runs a callback now or later (a served session's next tick, a benchmark's own clock)."""


def run_now(callback: Callable[[], None]) -> None:
    """Run ``callback`` at once: the :data:`Later` outside a server."""
    callback()


def next_tick(doc: Document) -> Later:
    """The :data:`Later` of a served session: ``doc``'s next event-loop tick, under its lock."""

    def defer(callback: Callable[[], None]) -> None:
        doc.add_next_tick_callback(partial(_run_in, doc, callback))

    return defer


async def _run_in(doc: Document, callback: Callable[[], None]) -> None:
    # A coroutine, so it runs on the server's event loop and Panel sends what pn.io.hold()
    # collects there as one message instead of one per change.
    with set_curdoc(doc):
        callback()


class Paced:
    """A :data:`Later` for a served session's plot updates: its next tick, but no sooner
    after the previous update ended than that update took.

    A drag or a flood of slider messages then costs at most about half of a core for that
    session, whatever its size: the values that arrive in between are folded by the caller
    into the next update, which always shows the last one.
    """

    def __init__(self, doc: Document, clock: Callable[[], float] = time.perf_counter) -> None:
        self._doc = doc
        self._clock = clock
        self._not_before = 0.0
        """When, on ``clock``, the next update may start."""

    def __call__(self, callback: Callable[[], None]) -> None:
        """Schedule ``callback`` for the next tick or, if the last update ended too recently,
        for when as long as it took has passed since."""
        wait = self._not_before - self._clock()
        timed = partial(_run_in, self._doc, partial(self._timed, callback))
        if wait > 0:
            self._doc.add_timeout_callback(timed, wait * 1000)
        else:
            self._doc.add_next_tick_callback(timed)

    def _timed(self, callback: Callable[[], None]) -> None:
        start = self._clock()
        try:
            callback()
        finally:
            end = self._clock()
            self._not_before = end + (end - start)
