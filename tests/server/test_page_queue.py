"""The front's page queue (app/server/page_queue.py): a worker gets a new page only when it has
fewer than ``PAGES_PER_WORKER`` in progress, the least loaded first; a finished page lets the
next one through; without a live worker the waiting pages are answered 503.

No processes: the front's workers are slots whose state the tests set.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from procs_support import run_async

from app.server import front
from app.server.front import Front, FrontConfig
from app.server.page_queue import PageQueue, client_left


def _front(workers: int = 2) -> Front:
    config = FrontConfig(address="127.0.0.1", port=5299, workers=workers, serve_arguments=list)
    instance = Front(config)
    for worker in instance.workers:
        worker.alive = True
    return instance


def test_pages_wait_for_a_worker_with_room_and_go_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(front, "PAGES_PER_WORKER", 1)

    async def scenario() -> list[object]:
        the_front = _front()
        first, second = the_front.workers
        second.live = 5  # busier: the first gets the first page
        waiting = [asyncio.ensure_future(the_front.pages.worker_for_page()) for _ in range(4)]
        await asyncio.sleep(0)
        given = [task.result() if task.done() else None for task in waiting]
        assert given[:2] == [first, second] and given[2:] == [None, None]
        second.page_done()
        the_front.pages.dispatch()
        await asyncio.sleep(0)
        assert waiting[2].result() is second and not waiting[3].done()
        first.page_done()
        the_front.pages.dispatch()
        await asyncio.sleep(0)
        assert waiting[3].result() is first
        return [len(first.building), len(second.building)]

    assert run_async(scenario(), 30) == [1, 1]


def test_a_page_in_progress_stops_holding_the_queue_after_its_lifetime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(front, "PAGES_PER_WORKER", 1)
    worker = _front(1).workers[0]
    worker.building.extend([100.0])
    assert worker.pages_in_progress(now=100.0 + front.PAGE_LIFETIME - 1) == 1
    assert worker.pages_in_progress(now=100.0 + front.PAGE_LIFETIME + 1) == 0


def test_without_a_live_worker_waiting_pages_get_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(front, "PAGES_PER_WORKER", 1)

    async def scenario() -> object:
        the_front = _front(1)
        worker = the_front.workers[0]
        worker.building.append(1e18)  # a page in progress for good
        waiting = asyncio.ensure_future(the_front.pages.worker_for_page())
        await asyncio.sleep(0)
        assert not waiting.done()
        worker.alive = False
        the_front.pages.dispatch()
        return await waiting

    assert run_async(scenario(), 30) is None


def test_a_client_that_left_while_its_page_waited_is_noticed() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"GET /main HTTP/1.1\r\n\r\n")
        assert not client_left(ours)
        theirs.close()
        assert client_left(ours)


def test_the_queue_serves_any_worker_slots_on_its_own() -> None:
    """The queue needs no front: given slots and a bound, it hands out pages, counts the
    waiting ones and stops looking again when told."""

    async def scenario() -> tuple[int, int, object]:
        slots = [front.Worker(0, alive=True), front.Worker(1, alive=True)]
        queue = PageQueue(slots, per_worker=1, check_after=60.0)
        waiting = [asyncio.ensure_future(queue.worker_for_page()) for _ in range(3)]
        await asyncio.sleep(0)
        waited = queue.waiting
        slots[1].page_done()
        queue.dispatch()
        third = await asyncio.wait_for(waiting[2], 10)
        queue.stop()
        return waited, queue.waiting, third

    waited, after, third = run_async(scenario(), 30)
    assert (waited, after) == (1, 0)
    assert third is not None and third.index == 1
