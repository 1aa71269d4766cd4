"""The class bus on a real Redis: two buses exchange signed messages; a message published on
the channel without the key is refused; when Redis stops each bus says so, and when it
comes back they talk again (app/served/class_bus.py)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from redis_support import RedisServer

from app.served.class_bus import CHANNEL, RedisBus, sign, signing_key

KEY = signing_key("presenter-key-for-redis-tests")
WAIT_S = 20.0


class Inbox:
    """What one bus hands its process: messages and connection changes, in order."""

    def __init__(self) -> None:
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()

    def message(self, payload: dict[str, Any]) -> None:
        self.events.put(("message", payload))

    def connected(self, up: bool) -> None:
        self.events.put(("connected", up))

    def wait(self, kind: str, matches: Any = None) -> Any:
        """The next event of ``kind`` (that ``matches``, if given), within WAIT_S."""
        deadline = time.monotonic() + WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                got, value = self.events.get(timeout=left)
            except queue.Empty:
                break
            if got == kind and (matches is None or matches(value)):
                return value
        raise AssertionError(f"no {kind} event within {WAIT_S:.0f} s")


def _bus(server: RedisServer, origin: str, inbox: Inbox) -> RedisBus:
    bus = RedisBus(
        server.url,
        KEY,
        origin=origin,
        on_message=inbox.message,
        on_connected=inbox.connected,
    )
    bus.start()
    return bus


def _exchange(sender: RedisBus, inbox: Inbox, text: str) -> dict[str, Any]:
    """Publish until ``inbox`` hears it (a subscriber may not be listening yet)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        sender.publish({"kind": "note", "text": text})
        try:
            return _wait_briefly(inbox, text)
        except AssertionError:
            continue
    raise AssertionError(f"{text!r} never crossed the bus")


def _wait_briefly(inbox: Inbox, text: str) -> dict[str, Any]:
    """The message ``text`` if ``inbox`` hears it within half a second."""
    deadline = time.monotonic() + 0.5
    while (left := deadline - time.monotonic()) > 0:
        try:
            kind, value = inbox.events.get(timeout=left)
        except queue.Empty:
            break
        if kind == "message" and value.get("text") == text:
            return value
    raise AssertionError("not yet")


def test_two_buses_talk_refuse_forgeries_and_survive_an_outage(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    import redis

    first_inbox, second_inbox = Inbox(), Inbox()
    first = _bus(redis_server, "first", first_inbox)
    second = _bus(redis_server, "second", second_inbox)
    try:
        assert first_inbox.wait("connected") is True
        assert second_inbox.wait("connected") is True
        received = _exchange(first, second_inbox, "hello")
        assert received["origin"] == "first"

        # Published on the channel by someone without the key: refused, never handed on.
        client = redis.Redis.from_url(redis_server.url)
        client.publish(CHANNEL, b'{"kind": "reset", "origin": "stranger"}')
        client.publish(CHANNEL, sign({"kind": "reset", "origin": "x"}, signing_key("wrong-key")))
        client.close()
        _exchange(first, second_inbox, "after the forgeries")
        assert "refused an unsigned or damaged class message" in caplog.text

        # Redis stops: both buses say so; it comes back: they talk again.
        redis_server.stop()
        assert first_inbox.wait("connected") is False
        assert second_inbox.wait("connected") is False
        redis_server.start()
        assert first_inbox.wait("connected") is True
        assert second_inbox.wait("connected") is True
        assert _exchange(second, first_inbox, "back")["origin"] == "second"
    finally:
        first.stop()
        second.stop()


def test_a_browser_with_tabs_on_two_processes_is_one_voter_over_redis(
    redis_server: RedisServer,
) -> None:
    """Two classrooms of one class over Redis: a browser's tabs on both are one voter whose
    last answer counts, a script's forged ballot a voter of its own; both processes count
    the same, and the presenter sees 2 browsers on 3 pages."""
    from model.test_class_ballot import Clock, answer_once, claim_ballot, open_seat

    from app.served.classroom import Classroom

    presenter_key = "presenter-key-for-redis-tests"
    clock = Clock()
    rooms = [Classroom(presenter_key, clock=clock) for _ in range(2)]
    arrived = threading.Event()

    def taker(room: Classroom) -> Callable[[dict[str, Any]], None]:
        def take(payload: dict[str, Any]) -> None:
            room.take_bus_message(payload)
            arrived.set()

        return take

    buses = []
    for index, room in enumerate(rooms):
        bus = RedisBus(
            redis_server.url,
            signing_key(presenter_key),
            origin=f"process-{index}",
            on_message=taker(room),
            on_connected=room.bus_changed,
        )
        room.attach_bus(bus)  # no heartbeat thread: each change is published at once
        bus.start()
        buses.append(bus)

    def presented_there() -> None:
        """Wait until the second process knows the class is presented (a status sent before
        it listened, or while its bus reconnected, is sent again)."""
        deadline = time.monotonic() + WAIT_S
        while not rooms[1].presented:
            assert time.monotonic() < deadline, "the second process never heard the presenter"
            arrived.clear()
            rooms[0].heartbeat()
            arrived.wait(0.5)

    try:
        presenter = open_seat(rooms[0], clock, presenter=True)
        here = open_seat(rooms[0], clock)
        ballot = claim_ballot(here, "none")
        presented_there()
        there = open_seat(rooms[1], clock)
        assert claim_ballot(there, ballot) == ballot
        presented_there()
        script = open_seat(rooms[1], clock)
        assert claim_ballot(script, ballot[:-1] + "x") not in ("", ballot)
        assert answer_once(here, clock, "divisor", "8")
        assert answer_once(there, clock, "divisor", "64")  # the same voter, later: it counts
        assert answer_once(script, clock, "divisor", "8")
        expected = {"right": 1, "wrong": 1}
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if all(
                room.answer_counts({"divisor": expected})["divisor"] == expected
                and (room.browsers, room.students) == (2, 3)
                for room in rooms
            ):
                break
            arrived.clear()
            for room in rooms:  # a status sent before the other listened is sent again
                room.heartbeat()
            arrived.wait(0.5)
        else:
            raise AssertionError("the two processes never agreed on the class's answers")
        presenter.class_changed()
        assert presenter.bar.answers["divisor"] == expected
        assert (presenter.bar.browsers, presenter.bar.students) == (2, 3)
    finally:
        for bus in buses:
            bus.stop()
