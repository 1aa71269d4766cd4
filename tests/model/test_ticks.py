"""Paced updates: the next tick after an idle spell, else no sooner than the last one took."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from app.ticks import Paced


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


def test_an_update_after_an_idle_spell_runs_on_the_next_tick() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock)
    paced(lambda: ran.append("first"))
    assert len(doc.next_tick) == 1 and not doc.timeouts
    run(doc.next_tick.pop())
    assert ran == ["first"]


def test_the_next_update_waits_as_long_as_the_last_one_took() -> None:
    doc, clock, ran = FakeDocument(), FakeClock(), []
    paced = Paced(doc, clock=clock)

    def slow_update() -> None:
        clock.now += 0.040  # a 40 ms update
        ran.append(clock.now)

    paced(slow_update)
    run(doc.next_tick.pop())
    clock.now += 0.010  # a new value arrives 10 ms after the update ended
    paced(slow_update)
    assert not doc.next_tick
    ((callback, timeout_ms),) = doc.timeouts
    assert abs(timeout_ms - 30.0) < 1e-6, "it waits the remaining 30 of 40 ms"
    clock.now += 0.030
    run(callback)
    assert len(ran) == 2
    clock.now += 0.100  # idle again for longer than the update took
    paced(slow_update)
    assert len(doc.next_tick) == 1


def test_an_update_that_raises_still_paces_the_next() -> None:
    doc, clock = FakeDocument(), FakeClock()
    paced = Paced(doc, clock=clock)

    def failing() -> None:
        clock.now += 0.020
        raise ValueError("boom")

    paced(failing)
    with pytest.raises(ValueError, match="boom"):
        run(doc.next_tick.pop())
    paced(lambda: None)
    assert doc.timeouts and not doc.next_tick
