"""A page's slow first numbers, computed off the event loop before its session is built.

Bokeh builds a page's session, its first numbers included, on the server's one event loop
while it answers the page's GET, and every other student's moves wait meanwhile. Most
first screens take a few milliseconds; two kinds take far longer: a seed no session of the
process has drawn lately (its tables of 10,000 pooled pairs, ~0.5 s) and a large matrix
(n² ≥ :data:`app.served.session.OFF_LOOP_CELLS`: at n = d_k = 1024 a 1024³ product, ~50 ms).
``sdpa-sim`` hands each page request's address to :func:`warm_page` before the application
sees it (app/server/guarded_http.py, ``before_page``): for such a page it computes the numbers in
:data:`app.served.work_queue.WORK_POOL` (never in the threads the students' moves run in), into
the caches every session of the process shares, and the request goes on once they are
there. The session built then finds them: its build is a lookup. Pages asking for the same
numbers at the same moment (a class opening one link) wait for one computation.

The first page request of a process also starts :func:`warm_training`, which it does not
wait for: the training section's shipped grid is read and its figures built in
:data:`app.served.work_queue.WORK_POOL`, so the first student who opens "Does the scale
matter for learning?" gets them drawn at once instead of ~0.4 s of the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Hashable
from concurrent.futures import Future
from urllib.parse import urlsplit

from tornado.httputil import parse_qs_bytes

from app.served.components.training import training_figures
from app.served.session import OFF_LOOP_CELLS
from app.served.work_queue import WORK_POOL
from app.simulation.model import SimulationModel
from app.simulation.parts import histograms_ready, law_of
from app.simulation.state import SimulationState
from app.simulation.training import SHARED_GRID

log = logging.getLogger(__name__)

_warming: dict[Hashable, Future] = {}
"""The computations under way, by what they compute: a second page asking for the same
numbers waits for the first one's (touched on the event loop only)."""


_training_warm_up: Future | None = None
"""The process's :func:`warm_training`, once started (touched on the event loop only)."""


def warm_training() -> Future:
    """Read the process's shipped training grid (:data:`app.simulation.training.SHARED_GRID`)
    and build its figures in the work pool, once per process; the same future afterwards,
    whose result is the figures (None without a shipped grid). Nothing is computed: with no
    shipped results (or stale ones) the grid is computed when a section first asks, as
    before."""
    global _training_warm_up
    if _training_warm_up is None:
        _training_warm_up = WORK_POOL.submit(_build_training)
    return _training_warm_up


def _build_training() -> str | None:
    """The shipped grid's figures (kept for the process: the sessions' build is a lookup),
    or None if there is no shipped grid or they could not be built."""
    try:
        grid = SHARED_GRID.ready_grid()
        return None if grid is None else training_figures(grid)
    except Exception:  # a session builds them again and reports what fails
        log.warning("sdpa-sim: the training figures could not be built ahead", exc_info=True)
        return None


def slow_to_start(state: SimulationState) -> bool:
    """Whether a session at ``state`` would take long to compute its first numbers: a
    large matrix, or a seed whose pooled pairs' tables are not built."""
    return state.n**2 >= OFF_LOOP_CELLS or not histograms_ready(state.seed, law_of(state))


def _computed_for(state: SimulationState) -> Hashable:
    """What a warm-up computes, as a key: the controls the slow parts depend on."""
    return (state.n, state.d_k, state.seed, law_of(state), state.causal)


def warm_page(target: str) -> Awaitable[None] | None:
    """For a page request's ``target`` (its path and query, untrusted) whose session would
    be slow to start (:func:`slow_to_start`), an awaitable that is done once its numbers are
    in the shared caches; None for any other page. Never raises: a query it cannot read
    is left to the session, which explains it to the student. The first call also starts
    :func:`warm_training`."""
    warm_training()
    try:
        state = SimulationState()
        state.apply_query(parse_qs_bytes(urlsplit(target).query, keep_blank_values=True))
        if not slow_to_start(state):
            return None
        key = _computed_for(state)
    except Exception:  # the session reads the same query and reports what is wrong
        log.warning("sdpa-sim: could not read a page's query ahead: %r", target[:80])
        return None
    future = _warming.get(key)
    if future is None or future.done():
        future = WORK_POOL.submit(SimulationModel, state)
        _warming[key] = future
    return _settled(key, future)


async def _settled(key: Hashable, future: Future) -> None:
    """Wait for ``future`` (a warm-up in the pool) without holding up the event loop."""
    try:
        await asyncio.wrap_future(future)
    except Exception:
        # The session computes the page again and reports any error as it always has.
        log.warning("sdpa-sim: a page's numbers could not be computed ahead", exc_info=True)
    finally:
        if _warming.get(key) is future:
            del _warming[key]
