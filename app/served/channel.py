"""A session's own websocket: the page's moves in, the session's frames of numbers out.

Bokeh's document protocol carries a move as a document event: Bokeh decodes and applies a
PATCH-DOC, Panel counts the message in its busy counter (``edit_readonly`` on every
parameter of ``pn.state``, twice), and a frame goes back as a property change that Bokeh
walks and serialises. That was about two thirds of the server's 8–12 ms per move
(docs/performance.md, *Fifth series*). On this channel a move is one short JSON text
message that reaches the session's handler directly, and a frame one binary message
(:func:`frame_message`): nothing of Bokeh's or Panel's document machinery runs.

- The route is a Tornado handler ``panel serve`` mounts with ``--plugins app.served.channel``
  (``sdpa-sim`` passes it, its workers too): ``/channel`` and ``/main/channel``, the
  address the page resolves ``channel`` against its own.
- A served session opens a :class:`SessionChannel` and gives the page its key, a session
  id signed with the process's secret (so ``--num-procs``' front routes the channel to the
  worker that holds the session, as it routes Bokeh's websocket). The key is the only way
  to the session: a page that does not know it reaches nothing.
- The channel is an accelerator, not a second page: when it is not mounted (plain
  ``panel serve``, a notebook), refused, or closes, the page and the session carry moves
  and frames over Bokeh's websocket as before, and frames carry sequence numbers, so one
  sent either way is drawn once and in order.

Every message is untrusted: an origin Bokeh would refuse is refused (403), a message over
:data:`MAX_MESSAGE_BYTES` closes the channel (1009), and anything but a JSON object naming a
known receiver is dropped with one log line; what a receiver gets it checks as it checks the
same message over Bokeh's websocket.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import struct
import weakref
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlparse

import numpy as np
from bokeh.document import Document
from bokeh.server.util import check_allowlist
from bokeh.settings import settings
from bokeh.util.token import generate_session_id
from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from app.served.channel_address import CHANNEL_KEY, CHANNEL_PATHS

log = logging.getLogger("sdpa_sim.channel")

ENABLED_ENV = "SDPA_SIM_CHANNEL"
"""Set to ``1`` where the channel is mounted (:func:`enable`): plain ``panel serve`` and a
notebook have no such route, and their sessions open no channel."""

MAX_MESSAGE_BYTES = 4096
"""The longest message a page may send on the channel: a move is under 100 bytes."""

MAX_NESTING = 8
"""The deepest a page's message may nest arrays and objects: a move nests two. Deeper is
refused, so no receiver walks (or logs) a deep structure; Python 3.11's parser gives up on
arrays nested about 1000 deep, which fit in :data:`MAX_MESSAGE_BYTES`."""

UNKNOWN_SESSION = 4404
"""The close code for a key that names no open session of this process (it closed, or the
key is not one): the page then carries on over Bokeh's websocket."""

REPLACED = 4409
"""The close code of a channel another connection with the same key replaced."""

HEADER = struct.Struct("<I")
"""A frame message starts with its JSON header's length in bytes, little-endian."""

ALIGNMENT = 8
"""Each array of a frame message starts at a multiple of this many bytes from the message's
start, so the page reads it in place as a typed array."""

Receiver = Callable[[Any], None]
"""Takes one message a page sent on the channel (parsed JSON, untrusted)."""


class SessionChannel:
    """One session's end of its channel: the key its page connects with, the receivers of
    what the page sends, and the connection frames go out on while the page holds one.

    ``doc`` is the session's document: each received message is handled at once, with it
    as Panel's current document. ``register`` makes the key reachable from
    the route (tests of the model leave it out).
    """

    def __init__(self, doc: Document, *, register: bool = True) -> None:
        self.key = new_key()
        """What the page connects with: a session id signed with the process's secret."""
        self._doc = doc
        self._receivers: dict[str, Receiver] = {}
        self._connection: ChannelHandler | None = None
        self._loop: IOLoop | None = None
        self._writing: Any = None
        """The future of the last frame written, until the socket has taken it."""
        self.frames_sent = 0
        """Frames sent on the channel (the rest went over Bokeh's websocket)."""
        self.handled = 0
        """The page's messages handed to a receiver so far: a frame carries the count, so
        the page (and a benchmark) knows which of its moves the frame shows."""
        if register:
            _OPEN[self.key] = self
            doc.on_session_destroyed(self._on_destroyed)

    def receive_with(self, target: str, receiver: Receiver) -> None:
        """Hand the page's messages to ``target`` (``{"to": target, "msg": …}``) to
        ``receiver``."""
        self._receivers[target] = receiver

    @property
    def connected(self) -> bool:
        """Whether a page holds the channel open: frames go out on it."""
        return self._connection is not None

    @property
    def loop(self) -> IOLoop | None:
        """The event loop the page's connection runs on while a page holds the channel,
        else None: where the session sends frames from, outside the document's lock."""
        return self._loop if self._connection is not None else None

    @property
    def writing(self) -> bool:
        """Whether the last frame sent is still being written to the socket."""
        return self._writing is not None and not self._writing.done()

    def send_values(self, values: Mapping[str, Any], to: str) -> bool:
        """Send the page's component ``to`` the new ``values`` of some of its properties, as
        one JSON text message ``{"to", "values"}``; False as :meth:`send`."""
        if self._connection is None:
            return False
        return self.send(json.dumps({"to": to, "values": values}, separators=(",", ":")))

    def send(self, message: bytes | str) -> bool:
        """Send one ``message`` to the page (binary for bytes, text for a string); False
        when no page holds the channel (or it has just closed): the caller sends it over
        Bokeh's websocket instead."""
        connection = self._connection
        if connection is None:
            return False
        self.frames_sent += 1
        if self._on_loop_thread():
            return self._write(connection, message)
        # Bokeh 3.10 runs a session's locked callbacks in worker threads; Tornado's socket
        # is the event loop's alone.
        self._call_on_loop(self._write, connection, message)
        return True

    def _write(self, connection: ChannelHandler, message: bytes | str) -> bool:
        try:
            self._writing = connection.write_message(message, binary=isinstance(message, bytes))
        except WebSocketClosedError:
            if self._connection is connection:
                self._connection = None
            return False
        return True

    def page_left(self) -> None:
        """The page sent a message over Bokeh's websocket: it no longer holds the channel
        (it closed on the page's side, or never opened there), whatever this side still
        believes. Frames go over Bokeh's websocket from now on, and a connection this side
        still holds is closed."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._call_on_loop(connection.close)

    def close(self) -> None:
        """Forget the key and close the page's connection, if any (the session ended)."""
        _OPEN.pop(self.key, None)
        connection, self._connection = self._connection, None
        if connection is not None:
            self._call_on_loop(connection.close)

    def _on_loop_thread(self) -> bool:
        loop = self._loop
        if loop is None:
            return True
        try:
            return asyncio.get_running_loop() is loop.asyncio_loop
        except RuntimeError:
            return False

    def _call_on_loop(self, function: Callable[..., Any], *args: Any) -> None:
        """Call ``function(*args)`` now on the connection's event loop, or soon from
        another thread (``add_callback`` is the one IOLoop method safe from any thread)."""
        loop = self._loop
        if loop is None or self._on_loop_thread():
            function(*args)
        else:
            loop.add_callback(function, *args)

    def _on_destroyed(self, session_context: object) -> None:
        self.close()

    # What the route calls --------------------------------------------------------------

    def attach(self, connection: ChannelHandler) -> None:
        """``connection`` is the page's channel from now on (a previous one is closed)."""
        previous, self._connection = self._connection, connection
        self._loop = IOLoop.current()
        if previous is not None and previous is not connection:
            previous.close(REPLACED, "replaced by a newer connection")

    def detach(self, connection: ChannelHandler) -> None:
        """``connection`` closed: frames go over Bokeh's websocket again."""
        if self._connection is connection:
            self._connection = None

    def deliver(self, text: str) -> None:
        """Hand the page's message ``text`` to its receiver on the session's next tick;
        a message that is not ``{"to": known receiver, "msg": …}`` costs one log line."""
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            message = None
        receiver = None
        if (
            isinstance(message, dict)
            and set(message) == {"to", "msg"}
            and _nests_within(message, MAX_NESTING)
        ):
            target = message["to"]
            receiver = self._receivers.get(target) if isinstance(target, str) else None
        if receiver is None:
            log.warning("sdpa-sim: refused a channel message: %s", repr(text)[:80])
            return
        body = message["msg"]
        # At once, not on a locked tick of the document: what the receiver changes of the
        # document Panel applies on such a tick itself, and the plots' update is paced.
        with set_curdoc(self._doc):
            self._hand(receiver, body)

    def _hand(self, receiver: Receiver, body: Any) -> None:
        try:
            receiver(body)
        finally:
            self.handled += 1


_OPEN: weakref.WeakValueDictionary[str, SessionChannel] = weakref.WeakValueDictionary()
"""The channels of this process's live sessions, by key: how the route finds a session.
Weak, so a session that is dropped without its document's destroy callback leaves nothing."""


def new_key() -> str:
    """A fresh channel key: a Bokeh session id, signed with the process's secret when
    sessions are signed (``sdpa-sim`` signs them; the front routes by that signature)."""
    return generate_session_id(
        secret_key=settings.secret_key_bytes(), signed=settings.sign_sessions()
    )


def open_channel(key: str) -> SessionChannel | None:
    """The live session channel ``key`` names, or None."""
    return _OPEN.get(key)


def frame_message(packed: Mapping[str, Any], to: str, handled: int = 0) -> bytes:
    """A packed frame (:func:`app.page.frames.packed_frame`) for the page's drawn component
    ``to`` as one binary message.

    Layout: the header's length (:data:`HEADER`), the header as UTF-8 JSON (``to``,
    ``handled``: the page's channel messages the session had handled when it composed the
    frame, ``sequence``, ``parts``, ``text``, and ``arrays``: ``[name, dtype, byte offset,
    length]`` for each array of ``packed``), then each array's bytes at its offset, a
    multiple of :data:`ALIGNMENT` (little-endian, as the page reads them). The page's
    ``SdpaChannel.frame`` (app/page/assets/channel.js) turns it back into the packed frame the
    drawing code unpacks.
    """
    arrays = [
        (name, np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")))
        for name, array in packed["packed"].items()
    ]
    layout = []

    def header_bytes(start: int) -> bytes:
        layout.clear()
        offset = start
        for name, array in arrays:
            layout.append([name, array.dtype.name, offset, int(array.size)])
            offset = _aligned(offset + array.nbytes)
        header = {
            "to": to,
            "handled": handled,
            "sequence": packed["sequence"],
            "parts": list(packed["parts"]),
            "text": packed["text"],
            "arrays": layout,
        }
        return json.dumps(header, separators=(",", ":")).encode("utf-8")

    # The offsets depend on the header's length, which depends on the offsets' digits:
    # a second pass settles it (a longer header moves the arrays by one alignment step).
    start = _aligned(HEADER.size + len(header_bytes(0)))
    header = header_bytes(start)
    while _aligned(HEADER.size + len(header)) > start:
        start = _aligned(HEADER.size + len(header))
        header = header_bytes(start)
    out = bytearray(HEADER.pack(len(header)) + header)
    for (_, array), (_, _, offset, _) in zip(arrays, layout, strict=True):
        out.extend(b"\0" * (offset - len(out)))
        out.extend(array.tobytes())
    return bytes(out)


def read_frame_message(message: bytes) -> dict[str, Any]:
    """The packed frame :func:`frame_message` wrote, with its ``to`` (for tests and the
    protocol client)."""
    (length,) = HEADER.unpack_from(message)
    header = json.loads(message[HEADER.size : HEADER.size + length].decode("utf-8"))
    packed = {
        name: np.frombuffer(
            message, dtype=np.dtype(dtype).newbyteorder("<"), count=size, offset=offset
        )
        for name, dtype, offset, size in header["arrays"]
    }
    return {
        "to": header["to"],
        "handled": header["handled"],
        "sequence": header["sequence"],
        "parts": header["parts"],
        "text": header["text"],
        "packed": packed,
    }


def _nests_within(value: Any, limit: int) -> bool:
    """Whether parsed JSON ``value`` nests lists and dicts at most ``limit`` deep (a scalar
    is 0 deep, ``{"a": []}`` 2)."""
    level = [value] if isinstance(value, list | dict) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, list | dict)
        ]
    return not level


def _aligned(offset: int) -> int:
    return -(-offset // ALIGNMENT) * ALIGNMENT


class ChannelHandler(WebSocketHandler):
    """The channel's route: ``GET /channel?key=KEY`` as a websocket from an origin Bokeh's
    own websocket accepts."""

    _channel: SessionChannel | None = None

    @property
    def max_message_size(self) -> int:
        """Tornado closes the connection (1009) on a longer message."""
        return MAX_MESSAGE_BYTES

    def check_origin(self, origin: str) -> bool:
        """The origins Bokeh's websocket accepts (``--allow-websocket-origin`` and the
        server's own address)."""
        allowed = settings.allowed_ws_origin() or self.application.websocket_origins
        return check_allowlist(urlparse(origin).netloc.lower(), list(allowed))

    def open(self) -> None:
        """Attach to the session the key names, or close with :data:`UNKNOWN_SESSION`."""
        key = self.get_query_argument(CHANNEL_KEY, "")
        channel = open_channel(key) if key else None
        if channel is None:
            self.close(UNKNOWN_SESSION, "no such session here")
            return
        self.set_nodelay(True)
        self._channel = channel
        channel.attach(self)

    def on_message(self, message: str | bytes) -> None:
        """Deliver a text message to the session; a binary one is refused."""
        if self._channel is None:
            return
        if isinstance(message, bytes):
            log.warning("sdpa-sim: refused a binary channel message of %d bytes", len(message))
            return
        self._channel.deliver(message)

    def on_close(self) -> None:
        """The page closed the channel (or its page went away)."""
        if self._channel is not None:
            self._channel.detach(self)
            self._channel = None


ROUTES = [(f"(?:{'|'.join(re.escape(path) for path in CHANNEL_PATHS)})", ChannelHandler)]
"""What ``panel serve --plugins app.served.channel`` mounts: the :data:`CHANNEL_PATHS`."""


def enable() -> list[str]:
    """Serve sessions with a channel in this process and the processes it starts: the
    ``panel serve`` arguments that mount it (``sdpa-sim`` calls this before serving)."""
    os.environ[ENABLED_ENV] = "1"
    return ["--plugins", __name__]


def enabled() -> bool:
    """Whether this process's sessions open a channel (:func:`enable` ran here or in the
    process that started this one)."""
    return os.environ.get(ENABLED_ENV) == "1"
