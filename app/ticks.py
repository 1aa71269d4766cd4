"""When an update runs: at once, or on a served session's next event-loop tick."""

from __future__ import annotations

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
