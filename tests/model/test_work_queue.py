"""A session's heavy jobs through its work gate (app/served/work_queue.py), without a server:
one job in the pool at a time, repeats merged, one waiting per kind, the next only once the
last result is written, a failing job that frees the gate, a closed session's work dropped."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest
from hostile_messages import queued_work_floods

from app.served.components.assumptions import AssumptionsSession
from app.served.work_queue import WorkGate
from app.simulation.csv_files import histogram_csv, matrix_csv
from app.simulation.model import SimulationModel
from app.simulation.state import SimulationState


class HeldPool:
    """An executor that holds each job until the test runs it (:meth:`run_next`)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[[], Any], Future]] = []
        self.most_at_once = 0

    def submit(self, compute: Callable[[], Any]) -> Future:
        """Hold ``compute``; its future is done once the test runs it."""
        future: Future = Future()
        self.jobs.append((compute, future))
        self.most_at_once = max(self.most_at_once, len(self.jobs))
        return future

    def run_next(self) -> None:
        """Run the oldest held job (its result or error goes to its future)."""
        compute, future = self.jobs.pop(0)
        try:
            future.set_result(compute())
        except Exception as error:
            future.set_exception(error)

    def drain(self, limit: int = 1000) -> None:
        """Run held jobs, and those they let start, until none is left."""
        for _ in range(limit):
            if not self.jobs:
                return
            self.run_next()
        raise AssertionError("the gate never ran dry")


class Timers:
    """A gate's ``wait``: callbacks kept until the test fires them."""

    def __init__(self) -> None:
        self.due: list[Callable[[], None]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self.due.append(callback)

    def fire(self) -> None:
        """Run the callbacks due now (those they schedule wait for the next call)."""
        due, self.due = self.due, []
        for callback in due:
            callback()


def job(value: object, ran: list) -> Callable[[], object]:
    """A job that notes it ran and returns ``value``."""

    def compute() -> object:
        ran.append(value)
        return value

    return compute


def test_a_repeat_of_the_running_or_waiting_job_is_merged() -> None:
    pool, ran, got = HeldPool(), [], []
    gate = WorkGate(pool=pool)
    assert gate.submit("download matrix", "a.csv", job("a", ran), got.append)
    for _ in range(5):
        assert not gate.submit("download matrix", "a.csv", job("a", ran), got.append)
    assert gate.submit("download matrix", "b.csv", job("b", ran), got.append)
    assert not gate.submit("download matrix", "b.csv", job("b", ran), got.append)
    pool.drain()
    assert got == ["a", "b"] and ran == ["a", "b"]
    assert gate.merged == 6 and pool.most_at_once == 1


def test_the_latest_request_replaces_the_waiting_one_of_its_kind_only() -> None:
    pool, got = HeldPool(), []
    gate = WorkGate(pool=pool)
    gate.submit("download matrix", "first", lambda: "first", got.append)
    for key in ("m1", "m2", "m3"):
        gate.submit("download matrix", key, lambda key=key: key, got.append)
    gate.submit("download histogram", "h", lambda: "h", got.append)
    assert gate.waiting == 2 and gate.replaced == 2
    pool.drain()
    # The other kind is not lost; each kind waits its turn in the order first asked.
    assert got == ["first", "m3", "h"]


@pytest.mark.parametrize(("family", "messages"), list(queued_work_floods(seed=45, length=200)))
def test_a_generated_flood_holds_one_job_in_the_pool_and_one_waiting_per_kind(
    family: str, messages: list
) -> None:
    pool, got, last = HeldPool(), [], {}
    gate = WorkGate(pool=pool)
    for index, (target, msg) in enumerate(messages):
        kind, key = f"{target} {sorted(msg)[0]}", repr(msg)
        last[kind] = key
        gate.submit(kind, key, lambda job=(index, kind, key): job, got.append)
        assert len(pool.jobs) <= 1 and gate.waiting <= len(last)
        if index % 7 == 0 and pool.jobs:
            pool.run_next()
    pool.drain()
    assert pool.most_at_once == 1
    assert len({index for index, _, _ in got}) == len(got), "each result delivered once"
    # Whatever was merged or replaced, each kind's last request is what the page has last.
    delivered = {kind: key for _, kind, key in got}
    assert delivered == last
    assert not gate.busy and gate.waiting == 0


def test_a_failing_job_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    pool, got = HeldPool(), []
    gate = WorkGate(pool=pool)

    def broken() -> str:
        raise ValueError("no numbers")

    gate.submit("download matrix", "broken", broken, got.append)
    gate.submit("download matrix", "fine", lambda: "fine", got.append)
    pool.drain()
    assert got == ["fine"]
    assert "download matrix job failed" in caplog.text
    # And the same job may be asked for again once it has failed.
    assert gate.submit("download matrix", "broken", lambda: "again", got.append)
    pool.drain()
    assert got == ["fine", "again"]


def test_a_closed_session_drops_its_waiting_work_and_the_running_result() -> None:
    pool, got = HeldPool(), []
    gate = WorkGate(pool=pool)
    gate.submit("download matrix", "a", lambda: "a", got.append)
    gate.submit("download histogram", "b", lambda: "b", got.append)
    gate.close()
    pool.drain()
    assert got == [] and gate.waiting == 0 and not gate.busy
    assert not gate.submit("download matrix", "c", lambda: "c", got.append)
    assert pool.jobs == []


def test_the_next_job_waits_until_the_last_result_has_been_written() -> None:
    pool, timers, got = HeldPool(), Timers(), []
    written = {"done": True}
    gate = WorkGate(pool=pool, ready=lambda: written["done"], wait=timers)

    def deliver(value: object) -> None:
        got.append(value)
        written["done"] = False  # the page's socket has not taken it yet

    gate.submit("download matrix", "a", lambda: "a", deliver)
    gate.submit("download matrix", "b", lambda: "b", deliver)
    pool.run_next()
    assert got == ["a"] and pool.jobs == [], "b is not computed while a is unread"
    for _ in range(3):
        timers.fire()
        assert pool.jobs == [] and len(timers.due) == 1, "one look at a time"
    # Flooding meanwhile adds no second look and no job.
    for key in ("c", "d", "e"):
        gate.submit("download matrix", key, lambda key=key: key, deliver)
    assert len(timers.due) == 1 and gate.waiting == 1
    written["done"] = True
    timers.fire()
    pool.drain()
    assert got == ["a", "e"]


def test_results_go_through_post() -> None:
    pool, posted, got = HeldPool(), [], []
    gate = WorkGate(pool=pool, post=posted.append)
    gate.submit("download matrix", "a", lambda: "a", got.append)
    assert pool.jobs == [] and len(posted) == 1, "started where post runs"
    posted.pop()()
    pool.run_next()
    assert got == [] and len(posted) == 1, "delivered where post runs"
    posted.pop()()
    assert got == ["a"]


# --- The assumptions section's downloads ----------------------------------------------------


def test_repeated_presses_send_each_file_once_and_a_press_after_a_move_a_new_file() -> None:
    state = SimulationState()
    state.set_controls(n=6)
    model = SimulationModel(state)
    sent: list[dict] = []
    pool = HeldPool()
    section = AssumptionsSession(
        model, sent.append, in_thread=True, post=lambda call: call(), work=WorkGate(pool=pool)
    )
    before, histogram_before = matrix_csv(model), histogram_csv(model)
    for _ in range(4):
        section.take({"download": "matrix"})
        section.take({"download": "histogram"})
    model.state.set_controls(sigma_q=1.2)
    model.refresh({"sigma_q"})
    section.take({"download": "matrix"})
    section.take({"download": "matrix"})
    pool.drain()
    files = [changes["download"] for changes in sent if "download" in changes]
    assert [(file["which"], file["text"]) for file in files] == [
        ("matrix", before),
        ("histogram", histogram_before),
        ("matrix", matrix_csv(model)),
    ]
    assert histogram_before != histogram_csv(model), "each file holds the numbers of its press"
    assert pool.most_at_once == 1 and section.downloads == 3


def test_a_pool_that_is_shut_down_leaves_the_gate_free() -> None:
    class ShutDown:
        def submit(self, compute: Callable[[], Any]) -> Future:
            raise RuntimeError("cannot schedule new futures after shutdown")

    gate, got = WorkGate(pool=ShutDown()), []
    gate.submit("download matrix", "a", lambda: "a", got.append)
    assert not gate.busy and got == []
