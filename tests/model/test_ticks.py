"""Paced updates: the next tick after an idle spell, else no sooner than the last one took."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from types import SimpleNamespace

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

from app.served.ticks import WRITE_POLL_S, WRITE_WAIT_LIMIT_S, Paced, sent_by_the_session


class FakeDocument:
    """Records the callbacks a :class:`Paced` schedules, as a Bokeh document would take them."""

    def __init__(self) -> None:
        self.next_tick: list[Callable] = []
        self.timeouts: list[tuple[Callable, float]] = []

    def add_next_tick_callback(self, callback: Callable) -> None:
        self.next_tick.append(callback)

    def add_timeout_callback(self, callback: Callable, timeout_ms: float) -> None:
        self.timeouts.append((callback, timeout_ms))


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(scheduled: Callable) -> None:
    """Run a scheduled callback's coroutine to its end (it never awaits), without an event
    loop: Playwright's sync API keeps one in this thread after a browser test."""
    coroutine = scheduled()
    with contextlib.suppress(StopIteration):
        coroutine.send(None)
    coroutine.close()


def run_update(doc: FakeDocument) -> None:
    """Run the scheduled update, then the callback that marks it as written."""
    run(doc.next_tick.pop(0))
    run(doc.next_tick.pop(0))


def test_an_update_after_an_idle_spell_runs_on_the_next_tick() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock)
    paced(lambda: ran.append("first"))
    assert len(doc.next_tick) == 1 and not doc.timeouts
    run_update(doc)
    assert ran == ["first"]


def test_the_next_update_waits_as_long_as_the_last_one_took_to_be_sent() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock)

    def slow_update() -> None:
        clock.now += 0.030  # 30 ms to compute
        ran.append(clock.now)

    paced(slow_update)
    run(doc.next_tick.pop(0))
    clock.now += 0.010  # and 10 ms to serialise and write
    run(doc.next_tick.pop(0))
    clock.now += 0.010  # a new value arrives 10 ms after the update was sent
    paced(slow_update)
    assert not doc.next_tick
    ((callback, timeout_ms),) = doc.timeouts
    assert timeout_ms == pytest.approx(30.0), "it waits the remaining 30 of 40 ms"
    doc.timeouts.clear()
    clock.now += 0.030
    run(callback)
    assert len(ran) == 2
    run(doc.next_tick.pop(0))
    clock.now += 0.100  # idle again for longer than the update took
    paced(slow_update)
    assert len(doc.next_tick) == 1


def test_an_update_waits_while_the_last_one_is_being_written() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock)
    paced(lambda: ran.append("first"))
    run(doc.next_tick.pop(0))  # computed; its message not written yet
    paced(lambda: ran.append("second"))
    run(doc.next_tick.pop(1))  # the second comes due before the first is written
    assert ran == ["first"]
    ((poll, timeout_ms),) = doc.timeouts
    assert timeout_ms == pytest.approx(WRITE_POLL_S * 1000)
    doc.timeouts.clear()
    run(doc.next_tick.pop(0))  # the first is written
    clock.now += 1.0
    run(poll)
    assert ran == ["first", "second"]


def test_an_update_that_raises_still_paces_the_next() -> None:
    doc, clock = FakeDocument(), FakeClock()
    paced = Paced(doc, clock=clock)

    def failing() -> None:
        clock.now += 0.020
        raise ValueError("boom")

    paced(failing)
    with pytest.raises(ValueError, match="boom"):
        run(doc.next_tick.pop(0))
    run(doc.next_tick.pop(0))
    paced(lambda: None)
    assert doc.timeouts and not doc.next_tick


def test_an_update_waits_until_the_sessions_messages_are_sent() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    sending = [True]
    paced = Paced(doc, clock=clock, writes_pending=lambda: sending[0])
    paced(lambda: ran.append(clock.now))
    run(doc.next_tick.pop())
    assert not ran, "the socket is still busy with the last image"
    ((callback, timeout_ms),) = doc.timeouts
    assert timeout_ms == pytest.approx(WRITE_POLL_S * 1000)
    doc.timeouts.clear()
    clock.now += 0.2
    sending[0] = False
    run(callback)
    assert ran == [clock.now]


def test_a_session_whose_writes_never_end_still_gets_the_last_value() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock, writes_pending=lambda: True)
    paced(lambda: ran.append("shown"))
    scheduled = doc.next_tick.pop()
    while not ran:
        run(scheduled)
        if not ran:
            ((scheduled, _),) = doc.timeouts
            doc.timeouts.clear()
            clock.now += 1.0
    assert clock.now - 100.0 >= WRITE_WAIT_LIMIT_S


class LoopThread:
    """A Tornado event loop running in a thread of its own, as a served session's is."""

    def __init__(self) -> None:
        ready = threading.Event()
        self.loop: IOLoop | None = None
        self.ident = 0

        def serve() -> None:
            asyncio.set_event_loop(asyncio.new_event_loop())
            self.loop, self.ident = IOLoop.current(), threading.get_ident()
            ready.set()
            self.loop.start()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        assert ready.wait(10), "the event loop did not start"

    def stop(self) -> None:
        """Stop the loop and wait for its thread."""
        self.loop.add_callback(self.loop.stop)
        self.thread.join(10)


def in_a_thread_without_a_loop(function: Callable[[], object]) -> None:
    """Call ``function`` in a fresh thread, which has no event loop (as the worker threads
    Bokeh 3.10 applies a page's changes in), and wait for it."""
    failures: list[BaseException] = []

    def call() -> None:
        try:
            function()
        except BaseException as error:  # handed to the test's thread
            failures.append(error)

    thread = threading.Thread(target=call)
    thread.start()
    thread.join(10)
    assert not failures, failures


def test_an_update_off_the_lock_runs_on_the_loop_whichever_thread_asks() -> None:
    served = LoopThread()
    try:
        doc, ran, where = FakeDocument(), threading.Event(), []

        def update() -> None:
            where.append(threading.get_ident())
            ran.set()

        paced = Paced(doc, off_lock_loop=lambda: served.loop)
        for _ in range(2):  # the first at once, the second paced after the first
            ran.clear()
            in_a_thread_without_a_loop(lambda: paced(update))
            assert ran.wait(10), "the update never ran"
        assert where == [served.ident, served.ident]
        assert not doc.next_tick and not doc.timeouts, "nothing went through the lock"
    finally:
        served.stop()


def test_an_update_that_goes_on_elsewhere_stays_in_flight_until_its_future_is_done() -> None:
    served = LoopThread()
    try:
        doc, ran, second_ran = FakeDocument(), [], threading.Event()
        computing: Future = Future()

        def first() -> Future:
            ran.append("first")
            return computing  # its numbers are computed in another thread

        def second() -> None:
            ran.append("second")
            second_ran.set()

        paced = Paced(doc, off_lock_loop=lambda: served.loop)
        paced(first)
        paced(second)
        # The second polls on the loop while the first is in flight: it has not run.
        assert not second_ran.wait(20 * WRITE_POLL_S)
        assert ran == ["first"]
        computing.set_result(None)
        assert second_ran.wait(10), "the second update never ran once the first was done"
        assert ran == ["first", "second"]
    finally:
        served.stop()


class StubSessionContext:
    """What Panel reads of a served session's context: a request with no arguments."""

    request = SimpleNamespace(arguments={}, cookies={}, headers={})
    session = None


class ServedDocument(Document):
    """A document that looks served (it has a session context) without a server."""

    session_context = StubSessionContext()


def test_a_change_made_once_the_page_has_loaded_is_sent_by_bokehs_session_in_one_go() -> None:
    doc = ServedDocument()
    box = pn.Column(pn.Spacer(height=0, margin=0))
    doc.add_root(box.get_root(doc))
    sent: list[object] = []
    doc.on_change(sent.append)

    def add_section() -> None:
        # Panel's own hold inside (as the lesson's code has) must not write on its own.
        with pn.io.hold():
            box.append(pn.pane.HTML("<p>section</p>"))
            box.append(pn.pane.HTML("<p>another</p>"))
        assert sent == [], "the changes left before the callback ended"

    with set_curdoc(doc):
        sent_by_the_session(add_section)
    assert doc.callbacks.hold_value is None
    assert sent, "the held changes were never handed to the session"
    assert len(box.get_root(doc).children) == 3


def test_outside_a_server_the_callback_runs_under_panels_hold() -> None:
    box = pn.Column()
    ran: list[bool] = []

    def add() -> None:
        box.append(pn.pane.HTML("<p>x</p>"))
        ran.append(True)

    sent_by_the_session(add)
    assert ran == [True]
    assert len(box.objects) == 1
