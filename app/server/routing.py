"""Which worker process a new connection goes to: ``sdpa-sim --num-procs N``'s routing rule.

Pure functions of a request's head (its request line and headers) and of what the front
knows about its workers, so they can be tested without sockets (see :mod:`app.server.front` for
the process that applies them).

A Bokeh session lives in the process that built it. Each worker signs the session ids it
makes with a secret of its own (Bokeh's public ``BOKEH_SIGN_SESSIONS`` and
``BOKEH_SECRET_KEY`` settings), and the page's websocket carries the session's token in its
``Sec-WebSocket-Protocol`` header (``bokeh, <token>``): the worker whose key verifies the
token's signature owns the session, and no table shared between processes is needed. The
session's own websocket (:mod:`app.served.channel`) names it the same way: its ``?key=`` is a
session id the worker signed. Any other request (the page, its static files,
``autoload.js``) goes to the live worker with the fewest sessions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from bokeh.util.token import check_session_id_signature

from app.served.channel_address import CHANNEL_KEY, CHANNEL_PATHS
from app.server.request_guard import (
    WEBSOCKET_SUFFIX,
    is_page_request,
    offered_token,
    token_signed_by,
)

HEAD_END = b"\r\n\r\n"
"""Where a request's head ends (HTTP/1.1 lines end in CRLF)."""

MAX_HEAD_BYTES = 65536
"""The most of a head the front looks at: Tornado refuses longer heads itself (its default
``max_header_size``), so a connection that sends more is passed on unread."""


@dataclass(frozen=True)
class RequestHead:
    """The parts of an HTTP request's head that routing reads."""

    method: str
    target: str
    headers: Mapping[str, str] = field(default_factory=dict)
    """Header values by lower-case name; a header sent several times is joined with ", "."""

    @property
    def path(self) -> str:
        """The target's path, without its query."""
        return urlsplit(self.target).path

    def query_value(self, name: str) -> str | None:
        """The last value of query argument ``name`` (as Bokeh reads it), or None."""
        values = parse_qs(urlsplit(self.target).query, keep_blank_values=True).get(name)
        return values[-1] if values else None

    @property
    def asks_to_upgrade(self) -> bool:
        """Whether the request asks to become a websocket (``Upgrade: websocket``)."""
        upgrade = self.headers.get("upgrade", "")
        return "websocket" in {part.strip().lower() for part in upgrade.split(",")}

    @property
    def is_websocket(self) -> bool:
        """Whether the request is a websocket of an app: a path ending in ``/ws`` that asks
        to upgrade the connection. Headers alone do not make one: Tornado routes a page's
        path to the page whatever they say, and the worker's guard checks it as a page."""
        return self.asks_to_upgrade and self.path.endswith(WEBSOCKET_SUFFIX)

    @property
    def is_channel(self) -> bool:
        """Whether the request opens a session's own websocket: one of the
        :data:`CHANNEL_PATHS`, asking to upgrade the connection."""
        return self.asks_to_upgrade and self.path in CHANNEL_PATHS


def parse_head(data: bytes) -> RequestHead | None:
    """The request head at the start of ``data``, or None if it is not one.

    ``data`` may hold more than the head (a body, a pipelined request): reading stops at the
    first empty line. Without one the head is incomplete and None is returned too.
    """
    end = data.find(HEAD_END)
    if end < 0:
        return None
    lines = data[:end].decode("latin-1").split("\r\n")
    request_line = lines[0].split(" ")
    if len(request_line) != 3 or not request_line[2].startswith("HTTP/"):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            return None
        key = name.lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return RequestHead(method=request_line[0], target=request_line[1], headers=headers)


def websocket_token(head: RequestHead) -> str | None:
    """The session token a Bokeh websocket request carries, or None (see
    :func:`app.server.request_guard.offered_token`)."""
    if not head.is_websocket:
        return None
    return offered_token(head.headers.get("sec-websocket-protocol", ""))


def channel_key(head: RequestHead) -> str | None:
    """The key a session channel's websocket carries (``?key=``, the last one, as Tornado's
    ``get_query_argument`` reads it), or None: not a channel, or no key (its worker closes
    such a channel itself)."""
    if not head.is_channel:
        return None
    return head.query_value(CHANNEL_KEY) or None


@dataclass(frozen=True)
class Credential:
    """What in a request names an existing session: a token or a bare session id."""

    token: str | None = None
    session_id: str | None = None


def session_credential(head: RequestHead) -> Credential | None:
    """The token or session id the request names, where Bokeh would read it, or None.

    A websocket carries the token in its sub-protocols; a session's channel (app/served/channel.py)
    its session id, signed like Bokeh's, in ``?key=``; a page or ``autoload.js`` request may
    name a session with ``?bokeh-token=``, ``?bokeh-session-id=`` or a ``Bokeh-Session-Id``
    header, all of which Bokeh honours.
    """
    if head.is_channel:
        key = channel_key(head)
        return Credential(session_id=key) if key else None
    if head.is_websocket:
        token = websocket_token(head)
        return Credential(token=token) if token else None
    if token := head.query_value("bokeh-token"):
        return Credential(token=token)
    session_id = head.query_value("bokeh-session-id") or head.headers.get("bokeh-session-id")
    return Credential(session_id=session_id) if session_id else None


def signed_by(credential: Credential, key: bytes) -> bool:
    """Whether ``credential`` was signed with ``key`` (a worker's ``BOKEH_SECRET_KEY``).

    An empty key (a worker slot not started yet) signs nothing.
    """
    if not key:
        return False
    if credential.token is not None:
        return token_signed_by(credential.token, key)
    try:
        if credential.session_id is not None:
            return check_session_id_signature(credential.session_id, secret_key=key, signed=True)
    except (ValueError, KeyError, TypeError):
        return False
    return False


def owner(credential: Credential, keys: Sequence[bytes]) -> int | None:
    """The index of the key that signed ``credential``, or None if none did."""
    return next((index for index, key in enumerate(keys) if signed_by(credential, key)), None)


@dataclass(frozen=True)
class WorkerView:
    """What routing needs to know about one worker."""

    key: bytes
    """The secret the worker signs its session ids with."""
    alive: bool
    """Whether it takes new connections (its process runs and has answered)."""
    load: int
    """Its live sessions plus the pages sent to it that have not become sessions yet."""


@dataclass(frozen=True)
class Route:
    """Where a connection goes: to worker ``worker``, or answered by the front with ``status``."""

    worker: int | None = None
    status: int | None = None
    page: bool = False
    """Whether the request builds a session (a page or ``autoload.js``): it adds to the
    worker's load until the worker reports the session."""


def is_page(head: RequestHead, app_paths: Sequence[str]) -> bool:
    """Whether ``head`` asks for a page of the app (or its ``autoload.js``): Bokeh builds a
    session for each. ``app_paths`` are the paths the app is served under (``/main``, ``/``)."""
    return is_page_request(head.method, head.target, app_paths)


def least_loaded(workers: Sequence[WorkerView], turn: int = 0) -> int | None:
    """The live worker with the smallest load, or None if none is alive.

    Ties go to the first live worker at or after index ``turn`` (wrapping around): the
    front advances ``turn`` with each choice, so equal workers take turns.
    """
    count = len(workers)
    alive = [index for index in range(count) if workers[index].alive]
    if not alive:
        return None
    return min(alive, key=lambda index: (workers[index].load, (index - turn) % count))


def route(
    head: RequestHead | None,
    workers: Sequence[WorkerView],
    turn: int = 0,
    app_paths: Sequence[str] = ("/", "/main"),
) -> Route:
    """Where a connection whose first request has ``head`` goes.

    - A request naming a session (see :func:`session_credential`: a page's websocket, its
      channel, a link with ``?bokeh-session-id=``) goes to the worker that signed it, if that worker
      is alive. If it has stopped, the front answers 503: no other process has the
      session, the page has to be loaded again.
    - A request naming a session no worker signed is answered with 403, as each worker
      would (Bokeh refuses an id it did not sign): a link cannot choose a session id.
      The front answering also spares the worker a malformed ``?bokeh-token=``, which
      Bokeh answers with a 500.
    - Anything else (a page, a static file, or a head that cannot be parsed, which its
      worker answers with 400) goes to the least loaded live worker (:func:`least_loaded`).
    - With no live worker: 503.
    """
    credential = session_credential(head) if head is not None else None
    if credential is not None:
        signer = owner(credential, [worker.key for worker in workers])
        if signer is None:
            return Route(status=403)
        return Route(worker=signer) if workers[signer].alive else Route(status=503)
    chosen = least_loaded(workers, turn)
    if chosen is None:
        return Route(status=503)
    return Route(worker=chosen, page=head is not None and is_page(head, app_paths))
