"""The front's page queue: new pages wait here until a worker has room to build one.

A page holds its worker's one event loop while Bokeh builds the session, so the front hands
a worker its next page only when it has fewer than ``per_worker`` pages in progress (the
least loaded first, pages in arrival order); a worker's report that a page is finished, or
a page outliving its lifetime, lets the next one through. Without a live worker the waiting
pages are told so (the front answers them 503). docs/performance.md has the figures.
"""

from __future__ import annotations

import asyncio
import select
import socket
import time
from collections import deque
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar


class PageHost(Protocol):
    """What the queue needs of a worker slot (:class:`app.server.front.Worker`)."""

    index: int
    alive: bool
    building: deque[float]

    def load(self, now: float) -> int:
        """Live sessions plus the pages handed over that have not become sessions yet."""
        ...

    def pages_in_progress(self, now: float) -> int:
        """Pages handed over that the worker has not reported finished."""
        ...


Host = TypeVar("Host", bound=PageHost)


class PageQueue(Generic[Host]):
    """Pages waiting for a worker with room, in arrival order.

    ``per_worker`` pages build at once on a worker; while pages wait, the queue looks again
    every ``check_after`` seconds, so pages in progress whose report never comes stop holding
    it once their lifetime is over.
    """

    def __init__(self, workers: Sequence[Host], *, per_worker: int, check_after: float) -> None:
        self.workers = workers
        self.per_worker = per_worker
        """Pages a worker builds at once (0: no queue, every page is handed over at once)."""
        self.check_after = check_after
        self._waiting: deque[asyncio.Future[Host | None]] = deque()
        self._check: asyncio.TimerHandle | None = None

    @property
    def waiting(self) -> int:
        """How many pages wait for a worker now."""
        return sum(not waiter.done() for waiter in self._waiting)

    async def worker_for_page(self) -> Host | None:
        """Wait for a worker with room for one more page, and count the page on it; None if
        no worker is alive."""
        waiter: asyncio.Future[Host | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self.dispatch()
        return await waiter

    def dispatch(self) -> None:
        """Give waiting pages, oldest first, to the least loaded workers with room: after a
        worker reports a page finished, becomes alive or dies."""
        now = time.monotonic()
        while self._waiting and self._waiting[0].done():
            self._waiting.popleft()
        while self._waiting:
            alive = [worker for worker in self.workers if worker.alive]
            if not alive:
                # As for a page arriving now: 503, load it again in a moment.
                for waiter in self._waiting:
                    if not waiter.done():
                        waiter.set_result(None)
                self._waiting.clear()
                return
            room = [w for w in alive if w.pages_in_progress(now) < self.per_worker]
            if not room:
                break
            chosen = min(room, key=lambda worker: (worker.load(now), worker.index))
            waiter = self._waiting.popleft()
            if waiter.done():
                continue
            chosen.building.append(now)
            waiter.set_result(chosen)
        if self._waiting and self._check is None:
            self._check = asyncio.get_running_loop().call_later(self.check_after, self._recheck)

    def stop(self) -> None:
        """Stop looking again: the front is shutting down."""
        if self._check is not None:
            self._check.cancel()
            self._check = None

    def _recheck(self) -> None:
        self._check = None
        self.dispatch()


def client_left(connection: socket.socket) -> bool:
    """Whether the client closed its side of ``connection`` while its page waited in the
    queue (Linux): its page is then not built at all."""
    poller = select.poll()
    poller.register(connection, getattr(select, "POLLRDHUP", 0) | select.POLLHUP)
    return bool(poller.poll(0))
