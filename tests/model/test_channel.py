"""The session's own websocket, without a server (app/served/channel.py): frame messages both ways,
and what ``SessionChannel.deliver`` hands on of a page's untrusted text.

The route and its closes (4404, 4409, 1009, 403) are tested against a served app in
tests/server/test_channel.py.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from hostile_messages import hostile_messages, refused_channel_texts
from hypothesis import given, settings
from hypothesis import strategies as st

from app.page.controls import drawable
from app.served.channel import (
    ALIGNMENT,
    HEADER,
    MAX_NESTING,
    SessionChannel,
    frame_message,
    read_frame_message,
)
from app.served.components.controls import DrawnControls
from app.served.session import Session
from app.simulation.spec import CONTROL_BY_NAME, FIRST_SCREEN_CONTROLS
from app.simulation.state import SimulationState
from model.test_drawn_figures import GOOD, JSON, N, bad_messages, picked
from model.test_ticks import LoopThread, in_a_thread_without_a_loop

TARGETS = ("controls", "figures")
"""The receivers a served session's channel knows (the drawn controls and figures)."""

DRAWN = [name for name in FIRST_SCREEN_CONTROLS if drawable(name)]

REFUSED = "refused a channel message"
"""What the channel logs, once, for a message it hands to no receiver."""

# --- Frame messages --------------------------------------------------------------------------

ARRAY_NAMES = st.sampled_from(["float32", "float64"]) | st.integers(0, 10**6).map(
    lambda index: f"alone-{index}"
)

ARRAYS = st.dictionaries(
    ARRAY_NAMES,
    st.tuples(
        st.sampled_from(["<f4", ">f4", "<f8", ">f8"]),
        st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=70),
    ).map(lambda spec: np.array(spec[1], dtype=spec[0])),
    max_size=5,
)
"""The arrays of a packed frame: float32 and float64 in either byte order, empty to a few
dozen values, NaN and infinities among them, under the names ``packed_frame`` gives."""

PACKED = st.fixed_dictionaries(
    {
        "sequence": st.integers(0, 2**53),
        "parts": st.lists(st.text(max_size=8), max_size=4),
        "text": st.text(max_size=300),
        "packed": ARRAYS,
    }
)
"""Packed frames (app.page.frames.packed_frame's shape), text non-ASCII among them."""


def assert_layout(message: bytes) -> None:
    """Every array of ``message`` starts past the header at a multiple of ALIGNMENT, none
    overlaps the next, and the message ends with the last one."""
    (length,) = HEADER.unpack_from(message)
    header = json.loads(message[HEADER.size : HEADER.size + length].decode("utf-8"))
    end = HEADER.size + length
    for _, dtype, offset, size in header["arrays"]:
        assert offset % ALIGNMENT == 0, (offset, header)
        assert offset >= end, "an array starts inside the header or the previous array"
        assert offset - end < ALIGNMENT, "no more padding than alignment needs"
        end = offset + size * np.dtype(dtype).itemsize
    assert len(message) == end


@settings(max_examples=300, deadline=None)
@given(PACKED, st.text(max_size=12), st.integers(0, 2**40))
def test_a_frame_message_reads_back_as_it_was_packed(
    packed: dict[str, Any], to: str, handled: int
) -> None:
    message = frame_message(packed, to, handled=handled)
    assert_layout(message)
    read = read_frame_message(message)
    assert read["to"] == to and read["handled"] == handled
    assert read["sequence"] == packed["sequence"]
    assert read["parts"] == packed["parts"] and read["text"] == packed["text"]
    assert list(read["packed"]) == list(packed["packed"])
    for name, array in packed["packed"].items():
        back = read["packed"][name]
        assert back.dtype.itemsize == array.dtype.itemsize and back.dtype.kind == "f"
        assert back.dtype.byteorder in ("<", "=", "|")
        np.testing.assert_array_equal(back, array.astype(back.dtype))


def test_each_array_starts_aligned_whatever_the_headers_length() -> None:
    # The header's length moves the arrays, and the arrays' offsets lengthen the header:
    # every length of text steps across both.
    arrays = {"float32": np.arange(3, dtype=np.float32), "alone-0": np.ones(5)}
    for size in range(0, 3 * ALIGNMENT * 10):
        packed = {"sequence": 1, "parts": ["weights"], "text": "ä" * size, "packed": arrays}
        message = frame_message(packed, "figures")
        assert_layout(message)
        read = read_frame_message(message)
        assert read["text"] == "ä" * size
        np.testing.assert_array_equal(read["packed"]["alone-0"], np.ones(5))


def test_an_arrays_bytes_are_read_in_place() -> None:
    packed = {"sequence": 2, "parts": [], "text": "", "packed": {"float64": np.arange(4.0)}}
    message = frame_message(packed, "figures")
    array = read_frame_message(message)["packed"]["float64"]
    (length,) = HEADER.unpack_from(message)
    assert array.base is not None, "a view of the message, not a copy"
    assert message.index(np.arange(4.0).tobytes()) % ALIGNMENT == 0
    assert message.index(np.arange(4.0).tobytes()) >= HEADER.size + length


# --- Deliveries ------------------------------------------------------------------------------


class Received:
    """What each receiver of a channel got, in order."""

    def __init__(self, channel: SessionChannel) -> None:
        self.by_target: dict[str, list[Any]] = {target: [] for target in TARGETS}
        for target in TARGETS:
            channel.receive_with(target, self.by_target[target].append)

    def all(self) -> list[Any]:
        """Everything any receiver got."""
        return [body for bodies in self.by_target.values() for body in bodies]


@pytest.fixture
def channel() -> SessionChannel:
    """A channel of a session's document, not reachable from the route."""
    return SessionChannel(Document(), register=False)


def channel_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The warnings the channel logged."""
    return [record for record in caplog.records if record.name == "sdpa_sim.channel"]


@pytest.mark.parametrize(
    ("family", "text"),
    list(refused_channel_texts(TARGETS)),
    ids=lambda case: case if isinstance(case, str) and len(case) < 30 else None,
)
def test_a_message_without_a_known_receiver_costs_one_log_line(
    family: str, text: str, channel: SessionChannel, caplog: pytest.LogCaptureFixture
) -> None:
    received = Received(channel)
    with caplog.at_level(logging.WARNING):
        channel.deliver(text)
    assert received.all() == [] and channel.handled == 0
    (record,) = channel_warnings(caplog)
    assert REFUSED in record.getMessage() and len(record.getMessage()) < 200


ENVELOPES = st.dictionaries(
    st.sampled_from(["to", "msg", "x", "TO"]),
    JSON | st.sampled_from(TARGETS),
    max_size=4,
)
"""Objects with keys a message has, or nearly, and the targets among their values (JSON:
any value a JSON text decodes to, as the figures' click tests draw them)."""


def receiver_of(message: Any) -> str | None:
    """The receiver ``message`` (parsed) goes to, or None: exactly ``to`` and ``msg``, a
    known target, and no deeper than the channel allows."""
    if not isinstance(message, dict) or set(message) != {"to", "msg"}:
        return None
    if message["to"] not in TARGETS or not isinstance(message["to"], str):
        return None
    depth, level = 0, [message]
    while level:
        depth += 1
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, list | dict)
        ]
    return message["to"] if depth <= MAX_NESTING else None


@settings(max_examples=400, deadline=None)
@given(JSON | ENVELOPES)
def test_any_json_reaches_its_receiver_exactly_when_it_is_a_move(message: Any) -> None:
    channel = SessionChannel(Document(), register=False)
    received = Received(channel)
    channel.deliver(json.dumps(message))
    target = receiver_of(message)
    if target is None:
        assert received.all() == [] and channel.handled == 0
        return
    (body,) = received.by_target[target]
    assert json.dumps(body) == json.dumps(message["msg"])
    assert channel.handled == 1


def test_good_messages_reach_their_receivers_in_order(
    channel: SessionChannel, caplog: pytest.LogCaptureFixture
) -> None:
    received = Received(channel)
    moves = [{"name": "d_k", "index": 3}, {"name": "scaled", "value": False}]
    with caplog.at_level(logging.WARNING):
        for move in moves:
            channel.deliver(json.dumps({"to": "controls", "msg": move}))
        channel.deliver(json.dumps({"msg": {"row": 2.5}, "to": "figures"}))
    assert received.by_target == {"controls": moves, "figures": [{"row": 2.5}]}
    assert channel.handled == 3
    assert channel_warnings(caplog) == []


def test_a_receiver_runs_with_the_sessions_document_as_panels() -> None:
    doc = Document()
    channel = SessionChannel(doc, register=False)
    documents: list[object] = []
    channel.receive_with("controls", lambda body: documents.append(pn.state.curdoc))
    channel.deliver('{"to": "controls", "msg": {}}')
    assert documents == [doc]


def test_a_receiver_that_raises_still_counts_as_handled(channel: SessionChannel) -> None:
    def fail(body: object) -> None:
        raise RuntimeError(body)

    channel.receive_with("controls", fail)
    with pytest.raises(RuntimeError):
        channel.deliver('{"to": "controls", "msg": 1}')
    assert channel.handled == 1, "the frames' count of handled messages stays in step"


def test_an_unconnected_channel_sends_nothing(channel: SessionChannel) -> None:
    assert not channel.connected and not channel.writing
    packed = {"sequence": 1, "parts": [], "text": "", "packed": {}}
    assert channel.send(frame_message(packed, "figures")) is False
    assert channel.send(b"frame") is False
    assert channel.frames_sent == 0


class RecordingConnection:
    """Stands for the page's websocket: records the thread each write and close ran on."""

    def __init__(self) -> None:
        self.writes: list[tuple[int, bytes | str]] = []
        self.closed_on: int | None = None
        self.done = threading.Event()

    def write_message(self, message: bytes | str, binary: bool = False) -> None:
        self.writes.append((threading.get_ident(), message))
        self.done.set()

    def close(self, code: int | None = None, reason: str | None = None) -> None:
        self.closed_on = threading.get_ident()
        self.done.set()


def test_a_worker_threads_frame_and_close_run_on_the_connections_loop(
    channel: SessionChannel,
) -> None:
    """Bokeh 3.10 applies a page's changes in worker threads, which have no event loop; a
    socket is its event loop's alone."""
    served = LoopThread()
    try:
        connection = RecordingConnection()
        attached = threading.Event()
        served.loop.add_callback(lambda: (channel.attach(connection), attached.set()))
        assert attached.wait(10)
        assert channel.loop is served.loop
        sent: list[bool] = []
        in_a_thread_without_a_loop(lambda: sent.append(channel.send(b"frame")))
        assert connection.done.wait(10) and sent == [True]
        assert connection.writes == [(served.ident, b"frame")] and channel.frames_sent == 1
        connection.done.clear()
        in_a_thread_without_a_loop(channel.page_left)
        assert connection.done.wait(10) and connection.closed_on == served.ident
        assert not channel.connected and channel.loop is None
    finally:
        served.stop()


# --- The receivers, through the channel -------------------------------------------------------


def envelope(target: str, body: object) -> str:
    """The channel message that hands ``body`` to ``target``."""
    return json.dumps({"to": target, "msg": body})


def valid_move(message: object) -> tuple[str, object] | None:
    """The control and value ``message`` validly moves (a known control, a bool for a
    switch, an in-range int position for a slider), else None."""
    if not isinstance(message, dict) or not isinstance(message.get("name"), str):
        return None
    control = CONTROL_BY_NAME.get(message["name"])
    if control is None or control.name not in DRAWN:
        return None
    if control.widget == "switch":
        value = message.get("value")
        return (control.name, value) if isinstance(value, bool) else None
    index = message.get("index")
    if type(index) is int and 0 <= index < len(control.grid):
        return control.name, control.grid[index]
    return None


@pytest.mark.parametrize(
    ("family", "message"),
    list(hostile_messages(DRAWN, ["index", "value"])),
    ids=lambda case: case if isinstance(case, str) else None,
)
def test_a_hostile_move_on_the_channel_changes_nothing_the_page_may_not_change(
    family: str, message: object, channel: SessionChannel, caplog: pytest.LogCaptureFixture
) -> None:
    state = SimulationState()
    controls = DrawnControls(state, DRAWN)
    channel.receive_with(controls.channel_target, controls.take_message)
    before = state.param.values()
    with caplog.at_level(logging.WARNING):
        channel.deliver(envelope(controls.channel_target, message))
    assert channel_warnings(caplog) == [], "a well-formed envelope: the receiver judges"
    assert channel.handled == 1
    move = valid_move(message)
    if move is not None:
        name, value = move
        assert getattr(state, name) == value
        return
    assert state.param.values() == before
    assert "refused a change from a page to DrawnControls" in caplog.text


def click_messages() -> Iterator[tuple[str, object]]:
    """``(family, message)`` clicks: the figures' own bad and good clicks, and every
    hostile family with ``row`` as its field."""
    for message in bad_messages():
        yield "bad click", message
    for y, _ in GOOD:
        yield "good click", {"row": y}
    yield from hostile_messages(["row"], ["row"])


@pytest.fixture(scope="module")
def clicked() -> Session:
    """One unserved session of ``N`` rows whose figures take the clicks."""
    return Session({"n": str(N)})


@pytest.mark.parametrize(
    ("family", "message"),
    list(click_messages()),
    ids=lambda case: case if isinstance(case, str) else None,
)
def test_a_hostile_click_on_the_channel_picks_a_row_within_the_matrix_or_none(
    family: str, message: object, clicked: Session, channel: SessionChannel
) -> None:
    figures = clicked.figures
    channel.receive_with(figures.channel_target, figures.take_message)
    clicked.state.row = 5
    channel.deliver(envelope(figures.channel_target, message))
    expected = picked(message)
    assert clicked.state.row == (5 if expected is None else expected)
    assert 0 <= clicked.state.row < N
