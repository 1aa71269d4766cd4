"""A browser stand-in that speaks Bokeh's websocket protocol to the served app.

The server cannot tell one of these sessions from Chromium's: the page is requested (Panel
builds the session's document then), the websocket ``/main/ws`` is opened with the page's
token and an allowed ``Origin``, the document is pulled, the theme and layout patches a
browser sends after painting are replayed, and ``document_ready`` is sent as BokehJS sends
it once the page is idle (without it ``pn.state.onload`` callbacks never run). Nothing is
rendered and no Bokeh ``Document`` is built on this side: incoming messages are assembled
with Bokeh's own :class:`~bokeh.protocol.receiver.Receiver` and only their JSON is indexed,
so one process can hold a class of sessions.

The tests import it as a top-level module (pytest puts ``tests/`` on the path); the
benchmark scripts add ``tests/`` to the path themselves, as for ``browser_support``.

Everything the client knows about the app's page (model names, slider labels, the lesson's
gate) is in the constants and :class:`ModelIndex` lookups below, and how a student opens the
lesson is in :func:`open_lesson`: change them there when the page changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from bokeh.client.websocket import WebSocketClientConnectionWrapper
from bokeh.protocol import Protocol
from bokeh.protocol.message import Message
from bokeh.protocol.messages.patch_doc import patch_doc
from bokeh.protocol.receiver import Receiver
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, WebSocketClosedError, websocket_connect

# --- What the client knows about the app's page -------------------------------------------

FRAME_ATTRIBUTE = "frame"
"""The property of the first-screen figures' data model that each update sets (app/served/
components/figures.py, ``DrawnFigures.frame``): a frame of numbers (app/page/frames.py,
``numbers_frame``: ``{"sequence", "state", "parts", "numbers"}``). The heatmap and the
histograms are not models of the session's document: the page embeds them in documents of
its own and draws every frame into them."""

FIGURES_ATTRIBUTE = "shared"
"""The other property that marks the figures' data model (the address of its page data,
app/served/page_data.py): the model has both, whatever the type name Panel generates for it
(``DrawnFigures1``…)."""

LESSON_MARKUP_ATTRIBUTE = "channel_target"
"""The property of the drawn lesson's data model (app/served/components/lesson.py,
``DrawnLesson.channel_target``, never its default: the lesson's component, which draws the
row comparison, has a ``frame`` and page data too, and is told apart by it)."""

CHANNEL_KEY_ATTRIBUTE = "channel_key"
"""The figures' data model property holding the key of the session's own websocket
(app/served/channel.py): moves then go on it as text, frames come back on it as binary messages.
Empty or absent: the page has no channel, and moves and frames use Bokeh's websocket."""

CONTROLS_TARGET = "controls"
"""The receiver a drawn control's move is addressed to on the channel."""

LESSON_TARGET = "lesson"
"""The name the channel gives the lesson's component (app/served/session.py)."""

FIGURES_TARGET = "figures"
"""The component the first screen's frames are addressed to on the channel (the lesson's
component has a target of its own)."""

HEATMAP_PART = "weights"
"""The model part whose numbers carry the heatmap's image (``weightsImage``): every move
that changes the image recomputes it (d_k, n and seed change the scores and so the weights,
temperature the weights alone), so a frame whose ``parts`` name it shows a move."""

LESSON_MODELS = ("lesson",)
"""Names of models only the lesson below the plots holds (its one drawn component,
app/served/sections.py): it has arrived once all are in."""

SLIDER_LABELS = {"d_k": "d_k (key dimension)", "temperature": "temperature"}
"""Slider key (the control's name) → its label (app/simulation/spec.py)."""

CONTROLS_ATTRIBUTES = ("controls", "values")
"""The properties that mark the drawn first-screen controls' data model (app/served/
components/controls.py, ``DrawnControls``): the page draws a slider per entry of ``controls``
and sends each move as a message, ``{"name", "index"}``."""

FIRST_SCREEN_TYPE = "FirstScreen"
"""Start of the type name of the first screen's data model (``FirstScreen1``; app/served/
components/first_screen.py), when the page has one. It holds the lesson's gate (the page sets its
``lesson_opened``: the lesson is then built when the student reaches the gate, not on
``document_ready``); "More controls" opens on the page alone."""

DOCUMENT_READY = {
    "kind": "MessageSent",
    "msg_type": "bokeh_event",
    "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map"}},
}
"""The event BokehJS sends once every root of the page has been rendered (a
``DocumentReady`` Bokeh event in a ``MessageSent`` document event, the empty values encoded
as BokehJS's serializer encodes ``{}``)."""

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""Largest websocket frame accepted: a heatmap image at n = 1024 is a 4 MiB buffer (a
frame's images come as binary frames of their own)."""

# --- What a browser sends after painting (Chromium 156, light theme, 1280×800) -------------

FONT = '"Roboto", "Helvetica", "Arial", sans-serif'
AXIS_THEME: dict[str, Any] = {
    "axis_line_color": "rgba(0, 0, 0, 0.22)",
    "major_tick_line_color": "rgba(0, 0, 0, 0.22)",
    "minor_tick_line_color": "rgba(0, 0, 0, 0.22)",
    "axis_line_alpha": 0,
    "major_tick_line_alpha": 0,
    "minor_tick_line_alpha": 0,
    "major_label_text_color": "rgba(0, 0, 0, 0.6)",
    "major_label_text_font": FONT,
    "major_label_text_font_size": "0.925em",
    "axis_label_text_color": "rgba(0, 0, 0, 0.87)",
    "axis_label_text_font": FONT,
    "axis_label_text_font_size": "1em",
    "axis_label_text_font_style": "normal",
    "axis_label_standoff": 12,
}
THEME: dict[str, dict[str, Any]] = {
    "Figure": {
        "background_fill_color": "#fff",
        "border_fill_color": "#fff",
        "outline_line_color": "rgba(0, 0, 0, 0.87)",
        "outline_line_alpha": 0,
    },
    "Title": {
        "text_color": "rgba(0, 0, 0, 0.87)",
        "text_font": FONT,
        "text_font_size": "1.05em",
        "text_font_style": "normal",
    },
    "LinearAxis": AXIS_THEME,
    "LogAxis": AXIS_THEME,
    "Legend": {
        "background_fill_color": "#fff",
        "background_fill_alpha": 0,
        "label_text_color": "rgba(0, 0, 0, 0.87)",
        "label_text_font": FONT,
        "label_text_font_size": "0.95em",
        "title_text_color": "rgba(0, 0, 0, 0.6)",
        "title_text_font": FONT,
        "title_text_font_size": "0.95em",
        "title_text_font_style": "normal",
        "spacing": 8,
        "label_standoff": 8,
        "glyph_width": 14,
        "glyph_height": 14,
    },
    "ColorBar": {
        "background_fill_color": "#fff",
        "background_fill_alpha": 0,
        "major_tick_line_alpha": 0,
        "minor_tick_line_alpha": 0,
        "bar_line_alpha": 0,
        "title_text_color": "rgba(0, 0, 0, 0.87)",
        "title_text_font": FONT,
        "title_text_font_size": "0.95em",
        "title_text_font_style": "normal",
        "major_label_text_color": "rgba(0, 0, 0, 0.6)",
        "major_label_text_font": FONT,
        "major_label_text_font_size": "0.9em",
    },
    "Grid": {"grid_line_color": "rgba(0, 0, 0, 0.1)"},
}
"""Model type → the properties panel-material-ui's theme sets on it in the page, with the
values Chromium sent (captured with Playwright): each model's set goes back to the server
as one PATCH-DOC, once per figure of the session's document as it is painted (the lesson's;
the first screen's figures live in documents of the page's own, which send nothing)."""

TOOLBAR_STYLESHEET = (
    ".bk-right.bk-active, .bk-above.bk-active {\n"
    "      --highlight-color: #1976d2 !important;\n    }"
)
FIGURE_SIZE = {"inner_width": 400, "inner_height": 300, "outer_width": 480, "outer_height": 380}
"""A figure's laid-out size, which BokehJS reports back (Chromium's differ per figure; the
server's work does not depend on the numbers)."""

BROWSER_INFO_TYPE = "panel.models.browser.BrowserInfo"
BROWSER_INFO = {
    "dark_mode": False,
    "device_pixel_ratio": 1,
    "language": "en-US",
    "webdriver": False,
    "timezone": "UTC",
    "timezone_offset": 0,
    "webgl": True,
}
"""What Panel's BrowserInfo model reports, one PATCH-DOC per property, as the page sends it."""

LOCATION_TYPE = "panel.models.location.Location"


# --- The document as JSON ----------------------------------------------------------------


class ProtocolError(RuntimeError):
    """The server answered something a browser would not have accepted, or nothing in time."""


@dataclass
class ModelRecord:
    """One Bokeh model of the session's document, as its JSON describes it."""

    id: str
    type: str
    """Bokeh's type name: ``Figure``, ``GlyphRenderer``, ``GridSlider1`` (a data model)…"""
    attributes: dict[str, Any]
    """The properties sent, with references to other models as ``{"id": …}``."""

    @property
    def name(self) -> str | None:
        """The model's ``name`` property, if it has one."""
        return self.attributes.get("name")


class ModelIndex:
    """Every model of one session's document, kept up to date from the server's messages.

    Only what the client needs is tracked: the models (from the pulled document and every
    patch that adds one) and the properties patches change. Column data are not kept, nor
    the figures' frames (only which parts the newest one carried).
    """

    def __init__(self) -> None:
        self.models: dict[str, ModelRecord] = {}
        self._by_name: dict[str, str] = {}
        self.messages: dict[str, list[Any]] = {}
        """What the server's messages to each component carried (their data), by its id."""

    def __len__(self) -> int:
        return len(self.models)

    def add(self, fragment: Any) -> list[str]:
        """Index every model defined anywhere in the JSON ``fragment``; return their ids."""
        added: list[str] = []
        stack = [fragment]
        # Iterative: a page nests layouts deeper than Python's recursion is comfortable with.
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if item.get("type") == "object" and "id" in item:
                    record = ModelRecord(
                        item["id"], item.get("name", ""), item.get("attributes", {})
                    )
                    self.models[record.id] = record
                    if isinstance(record.name, str):
                        self._by_name.setdefault(record.name, record.id)
                    added.append(record.id)
                    stack.extend(reversed(record.attributes.values()))
                elif item.get("type") in ("ndarray", "bytes"):
                    continue  # array data: nothing to index in it
                else:
                    stack.extend(reversed(item.values()))
            elif isinstance(item, list):
                stack.extend(reversed(item))
        return added

    def apply(self, event: Mapping[str, Any]) -> list[str]:
        """Update the index with one document event of a PATCH-DOC; return new model ids."""
        kind = event.get("kind")
        if kind == "ModelChanged":
            added = self.add(event.get("new"))
            record = self.resolve(event.get("model"))
            attr = event.get("attr")
            if record is None or attr == "data":
                return added
            if attr == FRAME_ATTRIBUTE:
                # A frame's numbers are the page's to draw: keep what it answered.
                record.attributes[attr] = {"parts": frame_parts(event.get("new"))}
            else:
                record.attributes[attr] = event.get("new")
            return added
        if kind == "MessageSent":
            self._keep_message(event.get("msg_data"))
        if kind in ("RootAdded", "MessageSent"):
            return self.add(event)
        return []

    def _keep_message(self, data: Any) -> None:
        """Keep what a component's message from the server carries (Panel's ``esm_event``,
        which a component's ``_send_msg`` sends), by the component's id."""
        if not isinstance(data, dict) or data.get("name") != "esm_event":
            return
        values = data.get("values")
        model = map_get(values, "model")
        if isinstance(model, dict) and isinstance(model.get("id"), str):
            self.messages.setdefault(model["id"], []).append(map_get(values, "data"))

    def resolve(self, reference: Any) -> ModelRecord | None:
        """The model a ``{"id": …}`` reference (or a full definition) points to."""
        if isinstance(reference, dict) and "id" in reference:
            return self.models.get(reference["id"])
        return None

    def named(self, name: str) -> ModelRecord | None:
        """The first model whose ``name`` property is ``name``."""
        model_id = self._by_name.get(name)
        return self.models.get(model_id) if model_id else None

    def find(self, predicate: Callable[[ModelRecord], bool]) -> Iterator[ModelRecord]:
        """Every model for which ``predicate`` is true, in the order they arrived."""
        return (record for record in self.models.values() if predicate(record))

    def children(self, record: ModelRecord, *attributes: str) -> list[ModelRecord]:
        """The models referenced by ``record``'s ``attributes`` (single references or lists)."""
        found = []
        for attribute in attributes:
            value = record.attributes.get(attribute)
            for reference in value if isinstance(value, list) else [value]:
                child = self.resolve(reference)
                if child is not None:
                    found.append(child)
        return found

    def figures_data(self) -> set[str]:
        """Ids of the data models the first-screen figures' frames are set on (one per
        ``DrawnFigures`` of the page): the models with both :data:`FRAME_ATTRIBUTE` and
        :data:`FIGURES_ATTRIBUTE` among their properties, and not the lesson's
        :data:`LESSON_MARKUP_ATTRIBUTE`."""
        return {
            record.id
            for record in self.find(
                lambda record: (
                    FRAME_ATTRIBUTE in record.attributes
                    and FIGURES_ATTRIBUTE in record.attributes
                    and LESSON_MARKUP_ATTRIBUTE not in record.attributes
                )
            )
        }

    def channel_key(self) -> str:
        """The key of the session's own websocket the page's figures name, "" if none."""
        figures = self.figures_data()
        for record in self.find(lambda record: record.id in figures):
            key = record.attributes.get(CHANNEL_KEY_ATTRIBUTE)
            if isinstance(key, str) and key:
                return key
        return ""

    def slider(self, key: str) -> Slider:
        """The slider ``key`` (a key of :data:`SLIDER_LABELS`) of the drawn first-screen
        controls: the component its moves are sent to and the labels of its positions.
        Raises ProtocolError if the page lacks it."""
        for data in self.find(
            lambda record: all(name in record.attributes for name in CONTROLS_ATTRIBUTES)
        ):
            for control in data.attributes["controls"]:
                if map_get(control, "name") != key or map_get(control, "widget") != "slider":
                    continue
                component = self.component_of(data.id)
                if component is None:
                    break
                positions = map_get(control, "positions") or []
                return Slider(key, component.id, [str(position) for position in positions])
        raise ProtocolError(f"no drawn slider {key!r} ({SLIDER_LABELS[key]!r}) in the document")

    def component_of(self, data_id: str) -> ModelRecord | None:
        """The component model (Panel's ``ReactiveESM``) whose ``data`` is ``data_id``."""
        return next(
            self.find(lambda record: _reference_id(record.attributes.get("data")) == data_id),
            None,
        )

    def has_lesson(self) -> bool:
        """Whether every model of :data:`LESSON_MODELS` is in the document."""
        return all(name in self._by_name for name in LESSON_MODELS)

    def lesson_gate(self) -> ModelRecord | None:
        """The data model holding the lesson's gate (whose ``lesson_opened`` the page sets),
        if the page has one. Found by type: ``lesson_opened`` is left out of the JSON while
        it is false."""
        return next(self.find(lambda record: record.type.startswith(FIRST_SCREEN_TYPE)), None)

    def figures(self, ids: Iterable[str]) -> list[ModelRecord]:
        """The Bokeh figures among the models ``ids``, in that order."""
        return [self.models[i] for i in ids if i in self.models and self.models[i].type == "Figure"]


@dataclass(frozen=True)
class Slider:
    """A drawn slider: a move sends the index of a position in ``options``."""

    key: str
    """The control's name, which the move's message carries."""
    model_id: str
    """The drawn controls' component model, whose data event carries the move."""
    options: list[str]

    def position(self, value: float) -> int:
        """The position whose label shows ``value``, or the nearest on a log scale."""
        numbers = [float(option) for option in self.options]
        if value in numbers:
            return numbers.index(value)
        return min(range(len(numbers)), key=lambda i: abs(math.log(numbers[i] / value)))


@dataclass
class Move:
    """One slider change sent to the server, and when the page would have shown it."""

    slider: str
    position: int
    msgid: str
    sent: float
    """``time.monotonic()`` once the message was written to the socket."""
    acked: float | None = None
    """When the server's OK for the message arrived (the change has been applied)."""
    answered: float | None = None
    """When the frame that shows the move on the heatmap arrived, its images included (see
    :func:`attribute_moves`)."""
    error: str | None = None

    @property
    def latency(self) -> float | None:
        """Seconds from send to the heatmap's frame, or None if it never came."""
        return None if self.answered is None else self.answered - self.sent


@dataclass
class SessionTimes:
    """``time.monotonic()`` stamps of one session's arrival (None: not reached)."""

    started: float = 0.0
    page: float | None = None
    """The page's HTML received (the server has built the session's document)."""
    connected: float | None = None
    """The websocket is open and the server's ACK received."""
    document: float | None = None
    """The PULL-DOC-REPLY received (the first screen's first frame is in it): the first
    screen can be drawn."""
    document_ready: float | None = None
    """``document_ready`` sent."""
    lesson_requested: float | None = None
    """The student opened the lesson (only when the page has a gate for it)."""
    lesson: float | None = None
    """The PATCH-DOC that completed the lesson's models received."""
    closed: float | None = None


def page_url(base: str, **params: object) -> str:
    """``base`` (the page, e.g. ``http://127.0.0.1:5400/main``) with query ``params``."""
    query = urlencode({name: value for name, value in params.items() if value is not None})
    return f"{base.rstrip('/')}?{query}" if query else base.rstrip("/")


def websocket_url(page: str) -> str:
    """The websocket BokehJS opens for ``page``: same host, the app's path + ``/ws``."""
    parts = urlsplit(page)
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/ws", "", ""))


def channel_url(page: str, key: str) -> str:
    """The session channel's address for ``page``, as the page resolves it: ``channel``
    beside the page (``/main`` → ``/channel``), ``ws`` or ``wss``, with the key."""
    parts = urlsplit(page)
    scheme = "wss" if parts.scheme == "https" else "ws"
    directory = parts.path.rsplit("/", 1)[0]
    return urlunsplit((scheme, parts.netloc, f"{directory}/channel", urlencode({"key": key}), ""))


def channel_frame_header(message: bytes) -> dict[str, Any]:
    """The JSON header of a binary frame message of the channel (app/served/channel.py,
    ``frame_message``): ``to``, ``handled``, ``sequence``, ``parts``, ``text``, ``arrays``."""
    (length,) = struct.unpack_from("<I", message)
    return json.loads(message[4 : 4 + length].decode("utf-8"))


def is_values_message(text: str) -> bool:
    """Whether ``text`` is a channel's values message (app/served/channel.py,
    ``SessionChannel.send_values``): ``{"to": component, "values": {…}}``."""
    return values_message(text) is not None


def values_message(text: str) -> dict[str, Any] | None:
    """``text`` read as a channel's values message (:func:`is_values_message`), or None."""
    try:
        message = json.loads(text)
    except ValueError:
        return None
    is_values = (
        isinstance(message, dict)
        and set(message) == {"to", "values"}
        and isinstance(message["values"], dict)
    )
    return message if is_values else None


def default_origin(page: str) -> str:
    """The ``Origin`` a browser sends for a websocket opened by ``page``."""
    parts = urlsplit(page)
    return f"{parts.scheme}://{parts.netloc}"


TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"')


def page_token(html: str) -> str:
    """The session token the page's ``render_items`` hand to BokehJS."""
    match = TOKEN.search(html)
    if match is None:
        raise ProtocolError("no session token in the page's HTML")
    return match.group(1)


# --- One session ---------------------------------------------------------------------------


class ProtocolSession:
    """One student's page over Bokeh's websocket protocol.

    Open it with :meth:`open` (page, websocket, document, the browser's first patches), then
    :meth:`send_document_ready`; make moves with :meth:`move`; :meth:`close` at the end.
    Waits are bounded by ``timeout`` seconds and raise ProtocolError when it runs out.
    ``echo=False`` leaves out the theme and layout patches a painted page sends back;
    ``channel=False`` sends moves over Bokeh's websocket even where the page offers the
    session's own channel (as a page whose channel was refused does).
    """

    def __init__(
        self,
        url: str,
        *,
        origin: str | None = None,
        timeout: float = 60.0,
        echo: bool = True,
        channel: bool = True,
    ) -> None:
        self.url = url
        self.use_channel = channel
        """Whether moves go on the session's own websocket when the page offers one."""
        self.origin = origin or default_origin(url)
        self.timeout = timeout
        self.echo = echo
        self.index = ModelIndex()
        self.times = SessionTimes()
        self.errors: list[str] = []
        self.moves: list[Move] = []
        self.bytes_received = 0
        self.messages_received = 0
        self.newest_frame_parts: set[str] = set()
        """The parts the newest first-screen frame received answered, by either websocket."""
        self.heatmap_times: list[float] = []
        """Arrival of every PATCH-DOC that carried a new heatmap image: a frame of the
        first-screen figures naming :data:`HEATMAP_PART`, its binary buffers included
        (Bokeh's receiver hands a message over once all of them have come)."""
        self.document_models: int | None = None
        """How many models the pulled document held (the first screen, before the lesson)."""
        self.closed = False
        self._socket: WebSocketClientConnection | None = None
        self._connection: WebSocketClientConnectionWrapper | None = None
        self._protocol = Protocol()
        self._receiver = Receiver(self._protocol)
        self._reader: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._awaiting_ok: dict[str, Move] = {}
        self._attributed: tuple[int, int, int, bool] | None = None
        """Moves, answers and heatmap patches counted (and whether settled) when the moves
        were last attributed: they are attributed again only when one of them changed."""
        self._acks = 0
        self._last_message = 0.0
        self._figures_data: set[str] = set()
        self._acked = False
        self._lesson_echoed = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._channel: WebSocketClientConnection | None = None
        self._channel_reader: asyncio.Task[None] | None = None
        self._channel_moves: list[Move] = []
        """The moves sent on the channel, in order: a frame's ``handled`` count says how
        many of them it shows."""
        self.lesson_values: list[dict[str, Any]] = []
        """The values the lesson's component was sent on the channel, in order, each
        download's text replaced by its length (a flood of files is not kept)."""

    @property
    def on_channel(self) -> bool:
        """Whether moves go on the session's own websocket (it is open)."""
        return self._channel is not None and not self.closed

    # Arrival ---------------------------------------------------------------------------

    async def open(self) -> None:
        """Load the page, open its websocket, pull the document and send what a browser
        sends once it has painted it (theme and layout)."""
        self.times.started = time.monotonic()
        client = AsyncHTTPClient(force_instance=True)
        try:
            response = await client.fetch(
                HTTPRequest(self.url, request_timeout=self.timeout, connect_timeout=self.timeout)
            )
        finally:
            client.close()
        self.times.page = time.monotonic()
        token = page_token(response.body.decode("utf-8", errors="replace"))
        request = HTTPRequest(
            websocket_url(self.url),
            headers={"Origin": self.origin},
            connect_timeout=self.timeout,
            request_timeout=self.timeout,
        )
        self._socket = await websocket_connect(
            request, subprotocols=["bokeh", token], max_message_size=MAX_MESSAGE_BYTES
        )
        # Chromium sends with TCP_NODELAY; Tornado's websocket client leaves Nagle on, and a
        # message's three frames (header, metadata, content) then wait ~40 ms for the
        # server's delayed ACK: 50 ms per move instead of 6 on an idle server.
        protocol = getattr(self._socket, "protocol", None)
        if protocol is not None:
            protocol.set_nodelay(True)
        self._connection = WebSocketClientConnectionWrapper(self._socket)
        self._reader = asyncio.create_task(self._read())
        await self.wait_for(lambda: self._acked, "the server's ACK")
        self.times.connected = time.monotonic()
        await self._send(self._protocol.create("PULL-DOC-REQ"))
        await self.wait_for(lambda: self.times.document is not None, "the document")
        key = self.index.channel_key()
        if self.use_channel and key:
            await self._open_channel(key)
        if self.echo:
            await self._echo_after_paint(self.index.models.keys(), first_screen=True)

    async def send_document_ready(self) -> None:
        """Tell the server the page is idle, as BokehJS does: Panel runs its onload callbacks."""
        await self.send_events([DOCUMENT_READY])
        self.times.document_ready = time.monotonic()

    async def wait_lesson(self) -> float:
        """Wait until the lesson's models have arrived; return when (``time.monotonic()``)."""
        await self.wait_for(lambda: self.times.lesson is not None, "lesson")
        assert self.times.lesson is not None
        return self.times.lesson

    # Moves -----------------------------------------------------------------------------

    async def move(self, slider: Slider, position: int) -> Move:
        """Move ``slider`` to ``position`` as the page's drawn controls do (on the session's
        channel when it is open, else a data event, ``model.send_msg({name, index})``, as
        Chromium sends it) and track when the heatmap shows it."""
        if self.on_channel:
            return await self._move_on_channel(slider, position)
        message = patch_doc(
            patch_doc.create_header(),
            {},
            {"events": [move_event(slider.model_id, slider.key, position)]},
        )
        move = Move(slider.key, position, message.header["msgid"], time.monotonic())
        self._awaiting_ok[move.msgid] = move
        self.moves.append(move)
        await self._send(message)
        # Stamped once written: a loaded client's own delay before sending is not the server's.
        move.sent = time.monotonic()
        return move

    def unanswered(self, settled: bool = False) -> list[Move]:
        """Moves the heatmap has not shown yet, attributing the patches received so far
        (``settled``: the session is quiet, see :func:`attribute_moves`)."""
        counts = (len(self.moves), self._acks, len(self.heatmap_times), settled)
        if counts != self._attributed and not self._channel_moves:
            attribute_moves(self.moves, self.heatmap_times, settled=settled)
            self._attributed = counts
        return [move for move in self.moves if move.answered is None and move.error is None]

    async def wait_answered(self, timeout: float | None = None, settle: float = 1.0) -> bool:
        """Wait until every move has been shown; False if ``timeout`` ran out first.

        Once the server has acknowledged every move and sent nothing for ``settle``
        seconds, the moves still waiting are settled (see :func:`attribute_moves`).
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while self.unanswered():
            now = time.monotonic()
            quiet_since = max([self._last_message, *(m.acked or 0.0 for m in self.moves)])
            if not self._awaiting_ok and now - quiet_since >= settle:
                return not self.unanswered(settled=True)
            if now >= deadline or self.closed:
                return False
            await self._next_message(min(deadline, quiet_since + settle) - now)
        return True

    # Plumbing --------------------------------------------------------------------------

    async def send_events(self, events: list[dict[str, Any]]) -> str:
        """Send one PATCH-DOC with ``events``; return its message id."""
        message = patch_doc(patch_doc.create_header(), {}, {"events": events})
        await self._send(message)
        return message.header["msgid"]

    async def wait_for(
        self, condition: Callable[[], bool], what: str, timeout: float | None = None
    ) -> None:
        """Wait until ``condition()`` holds, re-checked on every message received."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not condition():
            if self.closed:
                raise ProtocolError(f"connection closed while waiting for {what}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProtocolError(f"no {what} within {limit:.0f} s")
            await self._next_message(remaining)

    async def _next_message(self, timeout: float) -> None:
        """Return when the next message has been handled, or after ``timeout`` seconds."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiter, max(timeout, 0.0))

    async def close(self) -> None:
        """Close the websocket (the server discards the session after its linger time)."""
        if self._socket is not None and not self.closed:
            self._socket.close()
        if self._channel is not None:
            self._channel.close()
        self.closed = True
        if self._channel_reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._channel_reader, 5)
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (TimeoutError, asyncio.CancelledError):
                self._reader.cancel()
        self.times.closed = time.monotonic()

    async def _open_channel(self, key: str) -> None:
        """Open the session's own websocket as the page does (app/page/assets/channel.js)."""
        request = HTTPRequest(
            channel_url(self.url, key),
            headers={"Origin": self.origin},
            connect_timeout=self.timeout,
            request_timeout=self.timeout,
        )
        self._channel = await websocket_connect(request, max_message_size=MAX_MESSAGE_BYTES)
        protocol = getattr(self._channel, "protocol", None)
        if protocol is not None:
            protocol.set_nodelay(True)
        self._channel_reader = asyncio.create_task(self._read_channel())

    async def press(self, name: str) -> Move:
        """Press the action button ``name`` (Resample: ``"resample"``) as the page's drawn
        controls do, on the session's channel, and track when the heatmap shows it."""
        if not self.on_channel:
            raise ProtocolError("an action's button is pressed on the session's channel")
        return await self._move_on_channel(name, -1, {"name": name, "value": True})

    async def send_to(self, target: str, msg: dict[str, Any]) -> None:
        """Send ``msg`` to the component the session's channel names ``target`` (the
        lesson's: ``"lesson"``), as the page's drawing code does."""
        if not self.on_channel or self._channel is None:
            raise ProtocolError("messages to a component go on the session's channel")
        try:
            await self._channel.write_message(json.dumps({"to": target, "msg": msg}))
        except WebSocketClosedError as error:
            raise ProtocolError("the channel closed while sending") from error

    async def _move_on_channel(
        self, slider: Slider | str, position: int, body: dict[str, Any] | None = None
    ) -> Move:
        assert self._channel is not None
        key = slider if isinstance(slider, str) else slider.key
        msg = body if body is not None else {"name": key, "index": position}
        text = json.dumps({"to": CONTROLS_TARGET, "msg": msg})
        move = Move(key, position, f"channel-{len(self._channel_moves)}", time.monotonic())
        self.moves.append(move)
        self._channel_moves.append(move)
        try:
            await self._channel.write_message(text)
        except WebSocketClosedError as error:
            raise ProtocolError("the channel closed while sending") from error
        move.sent = time.monotonic()
        # Handed to the session in order: nothing else acknowledges it.
        move.acked = move.sent
        return move

    async def _read_channel(self) -> None:
        assert self._channel is not None
        try:
            while True:
                message = await self._channel.read_message()
                if message is None:
                    break
                now = time.monotonic()
                if not isinstance(message, bytes):
                    # A component's values (the collapse marker's view): not the heatmap's.
                    values = values_message(message)
                    if values is None:
                        self.errors.append(f"channel: a text message {message[:40]!r}")
                    else:
                        self._keep_lesson_values(values)
                    self.bytes_received += len(message)
                    self.messages_received += 1
                    self._last_message = now
                    self._wake()
                    continue
                self.bytes_received += len(message)
                self.messages_received += 1
                self._last_message = now
                header = channel_frame_header(message)
                if header.get("to") != FIGURES_TARGET:
                    # The lesson's row comparison and output.
                    self._wake()
                    continue
                self.newest_frame_parts = set(header.get("parts", []))
                if HEATMAP_PART in self.newest_frame_parts:
                    self.heatmap_times.append(now)
                    shown = min(int(header.get("handled", 0)), len(self._channel_moves))
                    for move in self._channel_moves[:shown]:
                        if move.answered is None:
                            move.answered = now
                self._wake()
        except Exception as error:  # a broken frame must not pass unnoticed
            self.errors.append(f"channel: {error!r}")
        finally:
            code = self._channel.close_code
            if not self.closed and code not in (None, 1000, 1001):
                self.errors.append(f"channel closed by the server: {code}")
            self._channel = None
            self._wake()

    def _keep_lesson_values(self, message: dict[str, Any]) -> None:
        if message["to"] != LESSON_TARGET:
            return
        values = message["values"]
        download = map_get(values.get("assumptions"), "download")
        if isinstance(download, dict):
            text = download.get("text")
            download["text"] = len(text) if isinstance(text, str) else None
        self.lesson_values.append(values)

    def downloads(self) -> list[dict[str, Any]]:
        """The CSV files the assumptions section sent on the channel so far (``which``,
        ``name`` and the text's length as ``text``), in order."""
        return [
            values["assumptions"]["download"]
            for values in self.lesson_values
            if isinstance(values.get("assumptions"), dict) and "download" in values["assumptions"]
        ]

    async def open_sections(self, *names: str) -> None:
        """Open the lesson's lazy sections ``names`` (``"training"``, ``"assumptions"``) as
        their buttons do: the page sets the lesson's ``opened``."""
        # The lesson's data model carries its component's name and properties.
        data = self.index.named(LESSON_TARGET)
        if data is None:
            raise ProtocolError("no lesson in the document: open it first (open_lesson)")
        event = {"kind": "ModelChanged", "model": {"id": data.id}, "attr": "opened"}
        await self.send_events([{**event, "new": list(names)}])

    async def _send(self, message: Message[Any]) -> None:
        if self._connection is None or self.closed:
            raise ProtocolError("the websocket is not open")
        try:
            await message.send(self._connection)
        except WebSocketClosedError as error:
            raise ProtocolError("the websocket closed while sending") from error

    async def _read(self) -> None:
        assert self._socket is not None
        try:
            while True:
                fragment = await self._socket.read_message()
                if fragment is None:
                    break
                self.bytes_received += len(fragment)
                message = await self._receiver.consume(fragment)
                if message is not None:
                    self.messages_received += 1
                    self._last_message = time.monotonic()
                    self._dispatch(message, self._last_message)
                    self._wake()
        except Exception as error:  # a broken frame must not pass unnoticed
            self.errors.append(f"reading: {error!r}")
        finally:
            if not self.closed and self.times.closed is None:
                code = self._socket.close_code
                reason = self._socket.close_reason
                if code not in (None, 1000, 1001):
                    self.errors.append(f"websocket closed by the server: {code} {reason}")
            self.closed = True
            self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _dispatch(self, message: Message[Any], now: float) -> None:
        kind = message.msgtype
        if kind == "ACK":
            self._acked = True
        elif kind == "PULL-DOC-REPLY":
            self.index.add(message.content.get("doc", {}))
            self.document_models = len(self.index)
            self._figures_data = self.index.figures_data()
            self.times.document = now
            if self.index.has_lesson():
                self.times.lesson = now
        elif kind == "PATCH-DOC":
            self._on_patch(message.content.get("events", []), now)
        elif kind == "OK":
            move = self._awaiting_ok.pop(message.header.get("reqid", ""), None)
            if move is not None:
                move.acked = now
                self._acks += 1
        elif kind == "ERROR":
            text = message.content.get("text", "") if isinstance(message.content, dict) else ""
            move = self._awaiting_ok.pop(message.header.get("reqid", ""), None)
            if move is not None:
                move.error = text
                self._acks += 1
            self.errors.append(f"server ERROR: {text}")

    def _on_patch(self, events: list[dict[str, Any]], now: float) -> None:
        added: list[str] = []
        shows_heatmap = False
        for event in events:
            added += self.index.apply(event)
            shows_heatmap = shows_heatmap or self._is_heatmap_image(event)
        if added:
            self._figures_data = self.index.figures_data()
        if self.times.lesson is None and added and self.index.has_lesson():
            self.times.lesson = now
            if self.echo and not self._lesson_echoed:
                self._lesson_echoed = True
                # The page paints the lesson's figures, then reports their theme and size.
                task = asyncio.get_running_loop().create_task(self._echo_after_paint(added))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if shows_heatmap:
            self.heatmap_times.append(now)

    def _is_heatmap_image(self, event: Mapping[str, Any]) -> bool:
        model = event.get("model")
        if not isinstance(model, dict) or model.get("id") not in self._figures_data:
            return False
        if event.get("kind") != "ModelChanged" or event.get("attr") != FRAME_ATTRIBUTE:
            return False
        self.newest_frame_parts = frame_parts(event.get("new"))
        return HEATMAP_PART in self.newest_frame_parts

    async def _echo_after_paint(self, ids: Iterable[str], first_screen: bool = False) -> None:
        """Send what a painted page sends back for the models ``ids``: the theme of each
        figure's parts and its size (one PATCH-DOC per model, as BokehJS does) and, for the
        first screen, Panel's browser information."""
        try:
            for events in browser_echo(self.index, list(ids), first_screen, self.url):
                await self.send_events(events)
        except ProtocolError as error:
            if not self.closed:
                self.errors.append(f"echo: {error}")


def attribute_moves(
    moves: list[Move], heatmap_times: list[float], *, settled: bool = False
) -> None:
    """Set each move's ``answered``: the arrival of the heatmap patch that first shows it.

    The page cannot tell which move an image answers, and the server's OK for a move is no
    marker either: Bokeh applies a message in an executor and Panel handles the change on a
    later tick, so the image may come before or after the OK. What holds is the order:
    the server applies one connection's messages in turn, and each update reads the state
    as all changes handled so far left it. So every heatmap patch shows a prefix of the
    moves, one more at least (a move always changes the image: see :class:`SliderWalk`),
    and comes after they were sent.

    Walking sends, OKs and patches in arrival order, a patch is given every waiting move
    the server has acknowledged (they were applied before it was sent), or, if none has
    been, the oldest waiting move (the image that raced ahead of its OK). A patch left with
    no move means an earlier patch was given a move whose change was handled only after
    it; the last moves are then passed on to later patches, one each. ``settled`` (the
    server has acknowledged every move and gone quiet): the moves still waiting were
    shown by the last patch if they were sent before it, since the last image shows the
    final state. Exact when one move at a time is in flight; with several, a move can be
    credited to the image one update before the one that showed it. Moves the server
    refused (``error``) are left unanswered.
    """
    events: list[tuple[float, int, int]] = []
    for index, move in enumerate(moves):
        move.answered = None
        if move.error is not None:
            continue
        events.append((move.sent, 0, index))
        if move.acked is not None:
            events.append((move.acked, 1, index))
    events += [(when, 2, index) for index, when in enumerate(heatmap_times)]
    # Same stamp: a send or an OK counts before a patch stamped with it.
    events.sort()
    waiting: list[int] = []
    acked: set[int] = set()
    shown: list[list[int]] = [[] for _ in heatmap_times]
    for _when, kind, index in events:
        if kind == 0:
            waiting.append(index)
        elif kind == 1:
            acked.add(index)
        elif waiting:
            count = sum(1 for move in waiting if move in acked) or 1
            shown[index], waiting = waiting[:count], waiting[count:]
        else:
            _pass_on(shown, index, moves, heatmap_times)
    if settled and heatmap_times:
        last = len(heatmap_times) - 1
        shown[last] += [move for move in waiting if moves[move].sent < heatmap_times[last]]
    for patch, indices in enumerate(shown):
        for move in indices:
            moves[move].answered = heatmap_times[patch]


def _pass_on(
    shown: list[list[int]], empty: int, moves: list[Move], heatmap_times: list[float]
) -> None:
    """Give the empty patch ``empty`` the last move of the patch before it, and so on back
    while a patch would be left empty, as long as each move was sent before its patch."""
    patch = empty
    while patch > 0:
        previous = shown[patch - 1]
        if not previous or moves[previous[-1]].sent > heatmap_times[patch]:
            return
        shown[patch].insert(0, previous.pop())
        if previous:
            return
        patch -= 1


def map_get(value: Any, key: str) -> Any:
    """Item ``key`` of a dict as Bokeh serializes it (``{"type": "map", "entries": …}``, or
    a plain JSON object), None if it has none."""
    if isinstance(value, dict) and value.get("type") == "map":
        for entry in value.get("entries", []):
            if isinstance(entry, list | tuple) and len(entry) == 2 and entry[0] == key:
                return entry[1]
        return None
    return value.get(key) if isinstance(value, dict) else None


def _reference_id(value: Any) -> str | None:
    """The id of a model reference (``{"id": …}``), None for anything else."""
    return value.get("id") if isinstance(value, dict) else None


def move_event(model_id: str, name: str, position: int) -> dict[str, Any]:
    """The document event a page's drawn slider ``name`` sends when moved to ``position``:
    the component's data event, encoded as BokehJS encodes it (captured from Chromium)."""
    data = {"type": "map", "entries": [["name", name], ["index", position]]}
    values = {"type": "map", "entries": [["model", {"id": model_id}], ["data", data]]}
    return {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {"type": "event", "name": "data_event", "values": values},
    }


def frame_parts(frame: Any) -> set[str]:
    """The model parts a frame of the first-screen figures answers (its ``parts``), as the
    ``new`` value of the PATCH-DOC event that set it serializes the frame."""
    parts = map_get(frame, "parts")
    return {part for part in parts if isinstance(part, str)} if isinstance(parts, list) else set()


def browser_echo(
    index: ModelIndex, ids: list[str], first_screen: bool, href: str
) -> list[list[dict[str, Any]]]:
    """The PATCH-DOC event lists a painted page sends for the models ``ids``, in order."""
    messages: list[list[dict[str, Any]]] = []

    def changes(record: ModelRecord, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            {"kind": "ModelChanged", "model": {"id": record.id}, "attr": attr, "new": value}
            for attr, value in values.items()
        ]

    figures = index.figures(ids)
    if first_screen:
        for record in index.find(lambda record: record.type == BROWSER_INFO_TYPE):
            messages += [changes(record, {attr: value}) for attr, value in BROWSER_INFO.items()]
    for figure in figures:
        messages.append(changes(figure, THEME["Figure"]))
        for toolbar in index.children(figure, "toolbar"):
            messages.append(changes(toolbar, {"stylesheets": [TOOLBAR_STYLESHEET]}))
        parts = index.children(figure, "title", "left", "right", "above", "below", "center")
        messages += [changes(part, THEME[part.type]) for part in parts if part.type in THEME]
    messages += [changes(figure, FIGURE_SIZE) for figure in figures]
    if not first_screen:
        for record in index.find(lambda record: record.type == LOCATION_TYPE):
            messages.append(changes(record, {"href": href}))
    return messages


# --- What a student does --------------------------------------------------------------------


async def open_lesson(session: ProtocolSession) -> float:
    """Open the lesson below the plots as a student does, and wait until it has arrived.

    The one place that knows how the page hands out its lesson. If the page has a lesson
    gate (a data model whose type starts with :data:`FIRST_SCREEN_TYPE`, with a
    ``lesson_opened`` flag), the student reaches it (scrolls near it or presses it): the page
    sets ``lesson_opened``.
    Otherwise the server builds the lesson once the page is ready (``document_ready``,
    which :meth:`ProtocolSession.send_document_ready` sends) and there is nothing to do but
    wait. Returns when it arrived (``time.monotonic()``).
    """
    if session.times.lesson is None:
        gate = session.index.lesson_gate()
        if gate is not None and not gate.attributes.get("lesson_opened"):
            session.times.lesson_requested = time.monotonic()
            await session.send_events(
                [
                    {
                        "kind": "ModelChanged",
                        "model": {"id": gate.id},
                        "attr": "lesson_opened",
                        "new": True,
                    }
                ]
            )
    return await session.wait_lesson()


@dataclass
class SliderWalk:
    """Positions for successive moves of one slider: round a window of positions, one step
    at a time, wrapping at its end.

    Moves that the server folds into one update then never add up to no change (as a step
    up and back down would, leaving the heatmap as it was and the moves unanswered), unless
    a whole round folds.
    """

    slider: Slider
    low: int
    high: int
    current: int

    @classmethod
    def around(cls, slider: Slider, start: int, width: int) -> SliderWalk:
        """A walk over ``width`` positions starting at ``start``, kept within the slider."""
        width = min(width, len(slider.options))
        low = max(0, min(start - width // 2, len(slider.options) - width))
        return cls(slider, low, low + width - 1, start)

    def next(self) -> int:
        """The position after the current one (back to ``low`` after ``high``)."""
        self.current = self.low if self.current >= self.high else self.current + 1
        return self.current


def session_summary(session: ProtocolSession) -> dict[str, Any]:
    """A summary of ``session`` for reports: arrival stamps, moves, errors, bytes."""
    return {
        "times": session.times.__dict__.copy(),
        "moves": [
            {
                "slider": move.slider,
                "sent": move.sent,
                "acked": move.acked,
                "answered": move.answered,
                "error": move.error,
            }
            for move in session.moves
        ],
        "errors": list(session.errors),
        "bytes_received": session.bytes_received,
        "heatmap_patches": len(session.heatmap_times),
        "document_models": session.document_models,
        "models": len(session.index),
    }
