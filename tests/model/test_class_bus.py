"""Class mode across processes: two classrooms on one bus share scenes, counts and answers;
a forged or malformed bus message is refused; a bus that goes down leaves each process a
class of its own, and says so (app/served/class_bus.py, app/served/classroom.py).

The bus here is in memory (every message signed and verified as on Redis); the proxy tests
run the same over Redis between two real processes behind nginx."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.served.class_bus import MAX_MESSAGE_BYTES, sign, signing_key, verify
from app.served.classroom import MAX_VOTERS, PRESENT_PARAMETER, Classroom, checked_status
from app.served.session import Session

KEY = "presenter-key-for-bus-tests"
SIGNING = signing_key(KEY)


class MemoryBus:
    """A bus between classrooms in one process: what one publishes, signed, reaches the
    others verified, as Redis would carry it."""

    def __init__(self) -> None:
        self.rooms: dict[str, Classroom] = {}
        self.up = True

    def join(self, origin: str, room: Classroom) -> None:
        self.rooms[origin] = room
        room.attach_bus(_Link(self, origin))
        room.bus_changed(True)

    def carry(self, origin: str, payload: dict[str, Any]) -> None:
        if not self.up:
            return
        message = sign({**payload, "origin": origin}, SIGNING)
        for other, room in self.rooms.items():
            if other != origin:
                received = verify(message, SIGNING)
                assert received is not None
                room.take_bus_message(received)

    def go_down(self) -> None:
        self.up = False
        for room in self.rooms.values():
            room.bus_changed(False)

    def come_back(self) -> None:
        self.up = True
        for room in self.rooms.values():
            room.bus_changed(True)


class _Link:
    def __init__(self, bus: MemoryBus, origin: str) -> None:
        self.bus, self.origin = bus, origin

    def publish(self, payload: dict[str, Any]) -> None:
        self.bus.carry(self.origin, payload)


def _two_processes() -> tuple[MemoryBus, Classroom, Classroom]:
    bus, first, second = MemoryBus(), Classroom(KEY), Classroom(KEY)
    bus.join("first", first)
    bus.join("second", second)
    return bus, first, second


def test_a_scene_and_the_counts_cross_to_the_other_process() -> None:
    _bus, first, second = _two_processes()
    presenter = Session({PRESENT_PARAMETER: KEY}, classroom=first)
    here = Session({}, classroom=first)
    there = Session({}, classroom=second)
    assert second.presented and first.students == 2 and second.students == 2
    assert presenter.seat.bar.students == 2
    assert there.seat.bar is not None and there.seat.bar.presented
    presenter.state.set_controls(d_k=1024, scaled=False)
    presenter.seat.bar.send_presses = 1
    assert presenter.seat.bar.reached == 2
    for student in (here, there):
        assert (student.state.d_k, student.state.scaled) == (1024, False)
    # Answers on either process show on the presenter's chart; a reset clears both.
    there.seat.bar.claim = "none"  # the page shows its ballot (a fresh browser's)
    assert there.seat.answer("divisor", "8")
    assert presenter.seat.bar.answers["divisor"]["right"] == 1
    presenter.seat.bar.revealed = True
    assert there.seat.bar.revealed and there.seat.bar.answers["divisor"]["right"] == 1
    presenter.seat.bar.reset_presses = 1
    assert second.answer_counts({"divisor": {"right": 0}})["divisor"]["right"] == 0
    # Live: a presenter's move reaches the other process by itself.
    presenter.seat.bar.live = True
    presenter.state.d_k = 16
    assert there.state.d_k == 16 and second.live


def test_a_bus_that_goes_down_leaves_each_process_alone_and_says_so() -> None:
    bus, first, second = _two_processes()
    presenter = Session({PRESENT_PARAMETER: KEY}, classroom=first)
    there = Session({}, classroom=second)
    explorer = Session({}, classroom=second)
    presenter.state.d_k = 256
    presenter.seat.bar.send_presses = 1
    assert there.state.d_k == explorer.state.d_k == 256
    bus.go_down()
    assert there.seat.bar.bus_down and presenter.seat.bar.bus_down
    assert not second.presented and first.students == 0
    # The presenter's bar says which part of the class it cannot reach.
    assert presenter.seat.bar.unreachable == 2
    presenter.state.d_k = 4
    presenter.seat.bar.send_presses = 2
    assert there.state.d_k != 4  # nothing crosses; the student's page works on its own
    assert presenter.seat.bar.held and presenter.seat.bar.reached == 0
    explorer.state.n = 16  # a student's move while alone marks them exploring
    assert not explorer.seat.bar.following and there.seat.bar.following
    bus.come_back()
    bus.rooms["first"].heartbeat()
    # The scene sent during the outage reaches the follower once the class is back, with
    # no other Send; the explorer's own scene stays theirs.
    assert not there.seat.bar.bus_down and second.presented
    assert there.state.d_k == 4 and there.seat.following
    assert explorer.state.d_k == 256 and explorer.state.n == 16
    # The other process's status says it took the scene: the bar counts its students.
    assert not presenter.seat.bar.held and presenter.seat.bar.reached == 2
    assert presenter.seat.bar.unreachable == 0


def test_the_counts_keep_the_unreachable_answers_during_an_outage() -> None:
    bus, first, second = _two_processes()
    presenter = Session({PRESENT_PARAMETER: KEY}, classroom=first)
    there = Session({}, classroom=second)
    there.seat.bar.claim = "none"
    assert there.seat.answer("divisor", "8")
    bus.rooms["second"].heartbeat()
    assert presenter.seat.bar.answers["divisor"]["right"] == 1
    bus.go_down()
    assert presenter.seat.bar.answers["divisor"]["right"] == 1
    assert presenter.seat.bar.students == 0 and presenter.seat.bar.unreachable == 1


def test_a_silent_process_counts_as_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.served.classroom as classroom_module

    _bus, first, second = _two_processes()
    Session({PRESENT_PARAMETER: KEY}, classroom=first)
    assert second.presented
    later = classroom_module.time.monotonic() + classroom_module.SILENT_AFTER_S + 1
    monkeypatch.setattr(classroom_module.time, "monotonic", lambda: later)
    second.heartbeat()
    assert not second.presented


def test_only_signed_messages_are_taken() -> None:
    message = sign({"kind": "reset", "origin": "x"}, SIGNING)
    assert verify(message, SIGNING) == {"kind": "reset", "origin": "x"}
    assert verify(message.decode(), SIGNING) is not None
    other = signing_key("another-presenter-key")
    assert verify(message, other) is None
    signature, _, body = message.partition(b".")
    assert verify(signature + b"." + body.replace(b"reset", b"scene"), SIGNING) is None
    for junk in (b"", b".", b"no-dot", None, 7, b"x" * (MAX_MESSAGE_BYTES + 1), ["a"]):
        assert verify(junk, SIGNING) is None
    unsigned_json = sign([1, 2], SIGNING)  # a signed message that is no object
    assert verify(unsigned_json, SIGNING) is None


@given(st.binary(max_size=300))
def test_no_bytes_from_a_stranger_are_taken(data: bytes) -> None:
    assert verify(data, SIGNING) is None


VOTER = "0123456789abcdef"
STATUS = {
    "presenters": 1,
    "students": 3,
    "live": False,
    "revealed": True,
    "voters": {VOTER: {"divisor": ["right", 1765000000.5]}, "fedcba9876543210": {}},
}


@pytest.mark.parametrize(
    "change",
    [
        {"presenters": -1},
        {"students": 10**7},
        {"students": True},
        {"live": "yes"},
        {"revealed": 1},
        {"voters": []},
        {"voters": None},
        {"voters": {"not-a-voter-id!!": {}}},
        {"voters": {VOTER.upper(): {}}},
        {"voters": {VOTER + "0": {}}},
        {"voters": {VOTER: []}},
        {"voters": {VOTER: {"q": "right"}}},
        {"voters": {VOTER: {"q": ["right"]}}},
        {"voters": {VOTER: {"q": ["right", "1"]}}},
        {"voters": {VOTER: {"q": ["right", True]}}},
        {"voters": {VOTER: {"q": ["right", float("nan")]}}},
        {"voters": {VOTER: {"q": ["right", float("inf")]}}},
        {"voters": {VOTER: {"q": ["x" * 33, 1.0]}}},
        {"voters": {VOTER: {"q": [1, 1.0]}}},
        {"voters": {VOTER: {"q" * 33: ["right", 1.0]}}},
        {"voters": {VOTER: {str(i): ["right", 1.0] for i in range(17)}}},
        {"voters": {f"{i:016x}": {} for i in range(MAX_VOTERS + 1)}},
    ],
)
def test_a_malformed_status_is_refused(change: dict[str, Any]) -> None:
    assert checked_status(STATUS) is not None
    assert checked_status({**STATUS, **change}) is None


def test_a_malformed_scene_from_the_bus_changes_only_what_checks() -> None:
    """A scene crosses as JSON: values go through the state's checks (out of range is
    clamped, the wrong kind ignored, an unknown preset dropped)."""
    _bus, first, second = _two_processes()
    Session({PRESENT_PARAMETER: KEY}, classroom=first)
    student = Session({}, classroom=second)
    second.take_bus_message(
        {
            "kind": "scene",
            "origin": "first",
            "at": 1.0,
            "scene": {"d_k": 10**9, "scaled": "no", "n": 16.0, "preset": "<b>", "x": 1},
        }
    )
    assert (student.state.d_k, student.state.scaled, student.state.n) == (1024, True, 16)
    assert student.state.preset == ""
    # A scene with no time, or one no newer than the last, changes nothing.
    for at in (None, "1", float("nan"), 1.0, 0.5):
        second.take_bus_message({"kind": "scene", "origin": "first", "at": at, "scene": {"n": 64}})
    assert student.state.n == 16


class _Listener:
    """A presenter's seat that counts how often the class told it something changed."""

    def __init__(self) -> None:
        self.told = 0

    def class_changed(self) -> None:
        self.told += 1

    def take_scene(self, scene: Any) -> None:
        """A presenter takes no scene."""


def test_a_heartbeat_that_repeats_a_status_tells_no_page() -> None:
    """Every process publishes its status each second: the pages hear of it only when it
    says something new."""
    _bus, first, second = _two_processes()
    listener = _Listener()
    first.join(listener, presenter=True)
    Session({}, classroom=second)
    told = listener.told
    for _ in range(3):
        second.heartbeat()
    assert listener.told == told
    Session({}, classroom=second)
    assert listener.told > told and first.students == 2
