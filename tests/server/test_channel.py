"""The session's own websocket (app/served/channel.py) against a served ``sdpa-sim``.

A page session is opened by the protocol client with its moves on Bokeh's websocket
(``channel=False``), so each test opens the channel itself with the key the page's figures
carry. What a page may not do is refused without harm: a key that names no session (4404),
an origin Bokeh would refuse (403), a message over the limit (1009, the session carries on),
a flood of malformed messages (each dropped, the session answers the next good move), a
second connection with the same key (it replaces the first, 4409). Every wait is on a
message or a close, bounded by :data:`TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import pytest
from bokeh.util.token import generate_session_id
from guard_cases import REFUSED_NAMES
from hostile_messages import hostile_messages, refused_channel_binaries, refused_channel_texts
from procs_support import FrontServer, run_async, running_front, tracebacks
from protocol_client import (
    HEATMAP_PART,
    ProtocolSession,
    channel_url,
    is_values_message,
    page_url,
)
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from app.page.controls import drawable
from app.served.channel import (
    MAX_MESSAGE_BYTES,
    REPLACED,
    UNKNOWN_SESSION,
    read_frame_message,
)
from app.simulation.spec import FIRST_SCREEN_CONTROLS

TIMEOUT = 30.0
"""Seconds any one wait may take on a loaded machine."""

TEST_TIMEOUT = 120.0
"""Seconds a whole scenario may take."""

TOO_BIG = 1009
"""The close code of a message over the limit (RFC 6455, "message too big")."""

TARGETS = ("controls", "figures")
"""The receivers a served session's channel knows."""

D_K = 64
"""The sessions' d_k when the page loads (the good move goes elsewhere)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontServer]:
    """One ``sdpa-sim`` (one process: ``panel serve`` with the channel mounted)."""
    log_path = tmp_path_factory.mktemp("channel") / "server.log"
    try:
        with running_front(log_path, workers=1) as front:
            yield front
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


@asynccontextmanager
async def page_session(server: FrontServer) -> AsyncIterator[ProtocolSession]:
    """A loaded page's session (document pulled, ``document_ready`` sent), whose moves go
    over Bokeh's websocket; closed at the end."""
    session = ProtocolSession(page_url(server.url, n=8, d_k=D_K), timeout=TIMEOUT, channel=False)
    try:
        await session.open()
        await session.send_document_ready()
        assert session.index.channel_key(), "the served page names its channel's key"
        yield session
    finally:
        await session.close()


def address(session: ProtocolSession, query: str, path: str = "/channel") -> str:
    """The address ``path`` with ``query`` on ``session``'s server, as a websocket's."""
    scheme, netloc, *_ = urlsplit(channel_url(session.url, ""))
    return urlunsplit((scheme, netloc, path, query, ""))


async def connect(
    session: ProtocolSession, url: str, origin: str | None = None
) -> WebSocketClientConnection | int:
    """Open the channel at ``url`` with ``session``'s Origin (or ``origin``): the connection,
    or the HTTP status that refused it."""
    request = HTTPRequest(
        url,
        headers={"Origin": origin or session.origin},
        connect_timeout=TIMEOUT,
        request_timeout=TIMEOUT,
    )
    try:
        return await websocket_connect(request, max_message_size=64 * 2**20)
    except HTTPClientError as error:
        return error.code


async def open_channel(session: ProtocolSession) -> WebSocketClientConnection:
    """The channel of ``session``, opened as its page opens it."""
    connection = await connect(session, channel_url(session.url, session.index.channel_key()))
    assert isinstance(connection, WebSocketClientConnection), f"refused: {connection}"
    return connection


async def close_code(connection: WebSocketClientConnection) -> int | None:
    """Read until the server closes ``connection``; its close code (frames are skipped)."""
    async with asyncio.timeout(TIMEOUT):
        while await connection.read_message() is not None:
            pass
    return connection.close_code


def move_text(name: str, index: int) -> str:
    """A slider move as the page sends it on the channel."""
    return json.dumps({"to": "controls", "msg": {"name": name, "index": index}})


def frame_state(frame: dict[str, Any]) -> dict[str, Any]:
    """The controls' state a frame read back (:func:`read_frame_message`) shows."""
    return json.loads(frame["text"])["state"]


async def frame_where(
    connection: WebSocketClientConnection, wanted: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The first frame on ``connection`` for which ``wanted`` holds (earlier ones, and the
    components' values messages, skipped)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            message = await connection.read_message()
            assert message is not None, f"the channel closed: {connection.close_code}"
            if isinstance(message, str):
                # A component's new values (the controls' answer to a move put back).
                assert is_values_message(message), f"a text message: {message[:80]!r}"
                continue
            frame = read_frame_message(message)
            if wanted(frame):
                return frame


async def good_move(
    session: ProtocolSession, connection: WebSocketClientConnection, d_k: float
) -> dict[str, Any]:
    """Move d_k to ``d_k`` on ``connection``; the frame that shows it."""
    slider = session.index.slider("d_k")
    index = slider.position(d_k)
    await connection.write_message(move_text("d_k", index))
    value = float(slider.options[index])
    return await frame_where(connection, lambda frame: frame_state(frame)["d_k"] == value)


async def figure_frames_until(
    connection: WebSocketClientConnection, handled: int
) -> list[dict[str, Any]]:
    """The figures' frames on ``connection`` (read back), up to the first that shows the
    page's first ``handled`` messages."""
    frames: list[dict[str, Any]] = []
    async with asyncio.timeout(TIMEOUT * 2):
        while not frames or frames[-1]["handled"] < handled:
            message = await connection.read_message()
            assert message is not None, f"the channel closed: {connection.close_code}"
            if isinstance(message, bytes):
                frame = read_frame_message(message)
                if frame["to"] == "figures":
                    frames.append(frame)
    return frames


def run(scenario: Any) -> Any:
    """Run ``scenario`` (a coroutine) in a thread of its own, bounded by TEST_TIMEOUT."""
    return run_async(scenario, TEST_TIMEOUT)


def assert_no_traceback(server: FrontServer, since: int) -> None:
    """The server logged no traceback since byte ``since`` of its log."""
    found = tracebacks(server.log_text(since))
    assert not found, found


# --- Tests ------------------------------------------------------------------------------------


def test_a_good_move_comes_back_as_a_binary_frame(server: FrontServer) -> None:
    async def scenario() -> dict[str, Any]:
        async with page_session(server) as session:
            connection = await open_channel(session)
            frame = await good_move(session, connection, 256)
            connection.close()
            return frame

    mark = server.log_size()
    frame = run(scenario())
    assert frame["to"] == "figures"
    assert frame_state(frame)["d_k"] == 256
    assert {"scores", HEATMAP_PART} <= set(frame["parts"])
    assert frame["handled"] == 1, "the frame shows the one message the page sent"
    assert frame["packed"], "the numbers come as arrays"
    assert_no_traceback(server, mark)


def unknown_keys(key: str) -> list[str]:
    """Keys that name no session, built around the live ``key`` (Tornado strips spaces
    and control characters around a query's value: ``key`` with them is ``key``)."""
    keys = ["", "x", key[:-1], key + "x", key[1:], key[::-1], f"{key}\x00x"]
    keys += [key.swapcase(), f"../{key}", f"{key}%00", "ä" * 20, "k" * 3000]
    keys += [generate_session_id(), generate_session_id(signed=True, secret_key=b"x" * 32)]
    return [other for other in keys if other != key]


def test_a_key_that_names_no_session_is_closed_with_4404(server: FrontServer) -> None:
    async def scenario() -> tuple[dict[str, int | None], dict[str, Any]]:
        async with page_session(server) as session:
            key = session.index.channel_key()
            live = await open_channel(session)
            urls = [address(session, urlencode({"key": other})) for other in unknown_keys(key)]
            urls += [address(session, ""), address(session, "key")]
            urls += [address(session, f"key={key}&key=x", "/main/channel")]
            urls += [address(session, f"keys={key}")]
            connections = await asyncio.gather(*(connect(session, url) for url in urls))
            codes = {}
            for url, connection in zip(urls, connections, strict=True):
                assert isinstance(connection, WebSocketClientConnection), (url, connection)
                codes[url] = await close_code(connection)
            # None of them reached the session: its own channel still carries its frames.
            frame = await good_move(session, live, 512)
            live.close()
            return codes, frame

    mark = server.log_size()
    codes, frame = run(scenario())
    assert set(codes.values()) == {UNKNOWN_SESSION}, codes
    assert frame["handled"] == 1
    assert_no_traceback(server, mark)


def refused_origins(port: int) -> list[str]:
    """Origins Bokeh's websocket refuses for a server on 127.0.0.1:``port``."""
    origins = [f"http://{name}:{port}" for name in REFUSED_NAMES]
    origins += [f"https://{name}" for name in REFUSED_NAMES]
    origins += ["null", "file://", f"http://127.0.0.1:{port}.evil.example"]
    origins += [f"http://evil.example@127.0.0.1.evil.example:{port}"]
    return origins


def test_a_channel_from_a_refused_origin_is_refused_at_the_handshake(
    server: FrontServer,
) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with page_session(server) as session:
            live = await open_channel(session)
            url = channel_url(session.url, session.index.channel_key())
            origins = refused_origins(server.port)
            answers = await asyncio.gather(*(connect(session, url, origin) for origin in origins))
            # Refused, so not attached: the page's own channel was not replaced.
            frame = await good_move(session, live, 128)
            live.close()
            return dict(zip(origins, answers, strict=True)), frame

    mark = server.log_size()
    answers, frame = run(scenario())
    assert set(answers.values()) == {403}, answers
    assert frame_state(frame)["d_k"] == 128
    assert_no_traceback(server, mark)


def test_a_message_over_the_limit_closes_the_channel_and_the_session_carries_on(
    server: FrontServer,
) -> None:
    async def scenario() -> tuple[list[int | None], int, dict[str, Any]]:
        async with page_session(server) as session:
            codes = []
            for message in ("x" * (MAX_MESSAGE_BYTES + 1), b"\0" * (MAX_MESSAGE_BYTES + 1)):
                connection = await open_channel(session)
                await connection.write_message(message, binary=isinstance(message, bytes))
                codes.append(await close_code(connection))
            # Bokeh's websocket still carries a move and its frame.
            shown = len(session.heatmap_times)
            slider = session.index.slider("d_k")
            await session.move(slider, slider.position(32))
            await session.wait_for(lambda: len(session.heatmap_times) > shown, "a frame")
            # And a new channel with the same key works.
            connection = await open_channel(session)
            frame = await good_move(session, connection, 1024)
            connection.close()
            return codes, len(session.errors), frame

    mark = server.log_size()
    codes, errors, frame = run(scenario())
    assert codes == [TOO_BIG, TOO_BIG]
    assert errors == 0
    assert frame_state(frame)["d_k"] == 1024
    assert_no_traceback(server, mark)


def hostile_stream() -> list[tuple[str, str | bytes]]:
    """Every generated hostile channel message a websocket can carry under the limit:
    envelopes no receiver gets, binary messages, and well-formed envelopes with hostile
    moves and clicks (``(family, message)``)."""
    stream: list[tuple[str, str | bytes]] = []
    for family, text in refused_channel_texts(TARGETS):
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            continue  # a lone surrogate: no websocket text carries it
        if size <= MAX_MESSAGE_BYTES:
            stream.append((family, text))
    binaries = refused_channel_binaries(TARGETS)
    stream += [(family, data) for family, data in binaries if len(data) <= MAX_MESSAGE_BYTES]
    drawn = [name for name in FIRST_SCREEN_CONTROLS if drawable(name)]
    for family, message in hostile_messages(drawn, ["index", "value"]):
        stream.append((f"move: {family}", json.dumps({"to": "controls", "msg": message})))
    for family, message in hostile_messages(["row"], ["row"]):
        stream.append((f"click: {family}", json.dumps({"to": "figures", "msg": message})))
    return stream


def test_a_stream_of_hostile_messages_leaves_the_session_answering(server: FrontServer) -> None:
    stream = hostile_stream()

    async def scenario() -> tuple[dict[str, Any], bool, list[str]]:
        async with page_session(server) as session:
            connection = await open_channel(session)
            for _, message in stream:
                await connection.write_message(message, binary=isinstance(message, bytes))
            frame = await good_move(session, connection, 431)
            still_open = connection.close_code is None
            connection.close()
            return frame, still_open and not session.closed, list(session.errors)

    mark = server.log_size()
    frame, still_open, errors = run(scenario())
    assert still_open, "no message of the stream closed the channel or the session"
    assert errors == []
    assert HEATMAP_PART in frame["parts"]
    assert frame_state(frame)["d_k"] == 431
    delivered = sum(isinstance(m, str) and f.startswith(("move", "click")) for f, m in stream)
    assert frame["handled"] == delivered + 1, "each envelope handed on, once, in order"
    log = server.log_text(mark)
    assert "Traceback" not in log, tracebacks(log)
    refused = len(stream) - delivered
    assert log.count("refused a channel message") + log.count("refused a binary") == refused


def test_a_second_connection_with_the_same_key_replaces_the_first(server: FrontServer) -> None:
    async def scenario() -> tuple[int | None, dict[str, Any]]:
        async with page_session(server) as session:
            first = await open_channel(session)
            second = await open_channel(session)
            code = await close_code(first)
            frame = await good_move(session, second, 99)
            second.close()
            return code, frame

    mark = server.log_size()
    code, frame = run(scenario())
    assert code == REPLACED
    assert frame_state(frame)["d_k"] == 99
    assert_no_traceback(server, mark)


def image_cells(frame: dict[str, Any], part: str, field: str) -> int:
    """How many numbers a frame's image (``numbers[part][field]``, travelling alone: larger
    than the pack limit) holds."""
    entry = json.loads(frame["text"])["numbers"][part][field]
    return int(frame["packed"][entry["alone"]].size)


def test_a_burst_of_moves_at_n_1024_shows_each_frames_own_moves_and_ends_on_the_last(
    server: FrontServer,
) -> None:
    # At this size a refresh runs off the event loop while later moves arrive: each frame
    # must show the state its numbers were computed for, and count exactly its moves.
    wanted = [("d_k", 512), ("n", 768), ("d_k", 256), ("n", 1024), ("d_k", 128), ("n", 640)]

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, float]]]:
        url = page_url(server.url, n=1024, d_k=1024)
        session = ProtocolSession(url, timeout=TIMEOUT, channel=False)
        try:
            await session.open()
            await session.send_document_ready()
            connection = await open_channel(session)
            states, state = [], {"n": 1024.0, "d_k": 1024.0}
            for name, value in wanted:
                slider = session.index.slider(name)
                index = slider.position(value)
                state = {**state, name: float(slider.options[index])}
                states.append(state)
                await connection.write_message(move_text(name, index))
            frames = await figure_frames_until(connection, len(wanted))
            connection.close()
            return frames, states
        finally:
            await session.close()

    mark = server.log_size()
    frames, states = run(scenario())
    assert frames[-1]["handled"] == len(wanted)
    for frame in frames:
        shown = frame_state(frame)
        expected = states[frame["handled"] - 1]
        assert {"n": shown["n"], "d_k": shown["d_k"]} == expected, "the moves it counts"
        if "scores" in frame["parts"]:
            assert image_cells(frame, "scores", "rawImage") == shown["n"] ** 2
    assert_no_traceback(server, mark)


def test_resample_to_a_seed_never_drawn_is_answered_with_its_histograms(
    server: FrontServer,
) -> None:
    # A seed no session of the process has drawn builds its tables of pooled pairs first
    # (~0.5 s), off the event loop: the frame still shows exactly the moves it counts, a
    # d_k move sent while the tables are built included.
    seed = 7301

    async def scenario() -> list[dict[str, Any]]:
        session = ProtocolSession(
            page_url(server.url, n=8, d_k=D_K, seed=seed), timeout=TIMEOUT, channel=False
        )
        try:
            await session.open()
            await session.send_document_ready()
            connection = await open_channel(session)
            press = {"to": "controls", "msg": {"name": "resample", "value": True}}
            await connection.write_message(json.dumps(press))
            slider = session.index.slider("d_k")
            index = slider.position(D_K * 2)
            await connection.write_message(move_text("d_k", index))
            frames = await figure_frames_until(connection, 2)
            connection.close()
            return frames
        finally:
            await session.close()

    mark = server.log_size()
    frames = run(scenario())
    last = frame_state(frames[-1])
    assert (last["seed"], last["d_k"]) == (seed + 1, D_K * 2)
    assert any("histograms" in frame["parts"] for frame in frames)
    for frame in frames:
        # A frame counting only the press shows the new seed at the old d_k.
        if frame["handled"] == 1:
            assert (frame_state(frame)["seed"], frame_state(frame)["d_k"]) == (seed + 1, D_K)
    assert_no_traceback(server, mark)
