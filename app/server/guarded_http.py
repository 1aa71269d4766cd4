"""Tornado's HTTPServer with a look at every request before Bokeh and Panel see it.

``sdpa-sim`` configures :class:`GuardedHTTPServer` (Tornado's public ``Configurable``
mechanism) before ``panel serve`` builds its server, in one process as in each worker of
``--num-procs``. For every request it wraps Tornado's two public interfaces around the
application:

- the request's :class:`~tornado.httputil.HTTPMessageDelegate`: the request line and the
  headers go to the :class:`~app.server.request_guard.RequestGuard` first, and a refused request is
  answered here with a plain 4xx (Bokeh never sees it; a HEAD request gets the head
  alone), and so is a path that reaches a route this server does not know
  (:mod:`app.server.mounted_routes`);
- the request's :class:`~tornado.httputil.HTTPConnection`: every response but a websocket's
  101 gets the guard's ``Content-Security-Policy``, a static file without a cache lifetime
  gets one, and a text response is compressed (static files once per process:
  :mod:`app.server.compression`).

A connection the ``--num-procs`` front hands over as a page holds a slot in the front's page
queue: its end is reported to ``on_page_done`` once, however it comes (the page's response
written, a refusal, the client gone, a head Tornado refuses before any delegate exists).

A page request the guard lets through goes first to ``before_page``, whose awaitable the
request waits for (Tornado waits for what a delegate's ``headers_received`` returns) while
the event loop serves everyone else: ``sdpa-sim`` computes a slow page's first numbers
there, off the loop (app/served/warmup.py).

What Tornado refuses itself, before any delegate exists, it answers on the connection's
stream: a head it cannot parse (a bad request line, a folded header line, a query of over
1,000 parameters) gets the bare ``HTTP/1.1 400 Bad Request`` and no body.
:class:`GuardedIOStream`, the stream each connection is served on, writes the guard's
plain 400 in its place. A head
longer than Tornado reads (its ``max_header_size``) closes the connection inside the
stream, with nothing to answer it with: the server reads up to :data:`READ_HEAD_BYTES`, and
the guard answers a head over :data:`~app.server.routing.MAX_HEAD_BYTES` with a plain 431, so only
heads over :data:`READ_HEAD_BYTES` still get no answer.
"""

from __future__ import annotations

import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from tornado import httputil
from tornado.httpserver import HTTPServer
from tornado.iostream import IOStream

from app.server.compression import CompressedCache, CompressingConnection, give_cache_lifetime
from app.server.mounted_routes import (
    COMPONENT_PREFIX,
    KNOWN_HANDLERS,
    RouteTable,
    component_allowed,
)
from app.server.request_guard import NOT_FOUND, Refusal, RequestGuard, is_page_request
from app.server.routing import MAX_HEAD_BYTES

BeforePage = Callable[[str], Awaitable[None] | None]
"""Called with a page request's target (path and query) before the application sees it;
the request waits for the awaitable it returns, if any."""

READ_HEAD_BYTES = 256 * 1024
"""How much of a request's head Tornado reads (``max_header_size``; its default is 64 KiB,
past which it closes the connection without an answer). Heads over
:data:`~app.server.routing.MAX_HEAD_BYTES` are refused with a 431 once read; reading up to four
times that costs at most 256 KiB per connection while it is read."""

TORNADO_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\n\r\n"
"""What Tornado writes for a head it cannot parse (``HTTP1Connection`` on an
``HTTPInputError``): nothing else a server writes is these bytes alone."""

HEAD_TOO_LARGE = Refusal(
    431,
    "Request Header Fields Too Large",
    "The request's head is longer than 64 KiB: no page or file of this server needs one.",
)
UNREADABLE_HEAD = Refusal(
    400,
    "Bad Request",
    "The request could not be read as HTTP: its request line, a header line or its query "
    "(over 1,000 parameters) is malformed.",
)


def refusal_bytes(refusal: Refusal, extra: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 response for ``refusal`` that closes the connection: status, plain
    text, its length and the ``extra`` headers (the guard's)."""
    body = (refusal.text + "\n").encode("utf-8")
    lines = [
        f"HTTP/1.1 {refusal.status} {refusal.reason}",
        "Content-Type: text/plain; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in (extra or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def head_bytes(start_line: httputil.RequestStartLine, headers: httputil.HTTPHeaders) -> int:
    """About how long the request's head was on the wire (each header line as Tornado
    kept it, with its separator and line end)."""
    size = len(start_line.method) + len(start_line.path) + len(start_line.version) + 4
    return size + sum(len(name) + len(value) + 4 for name, value in headers.get_all()) + 2


class GuardedIOStream(IOStream):
    """A connection's stream that answers Tornado's own refusal of an unreadable head with
    the guard's plain 400 (:data:`UNREADABLE_HEAD`) and its headers, not an empty 400."""

    def __init__(self, *args: Any, answer_headers: dict[str, str] | None = None, **kwargs: Any):
        """IOStream's arguments, plus the headers a refusal written here carries."""
        super().__init__(*args, **kwargs)
        self.bad_request = refusal_bytes(UNREADABLE_HEAD, answer_headers)

    def write(self, data: bytes | memoryview) -> Any:
        """Write ``data``; Tornado's bare 400 is replaced by the guard's."""
        if len(data) == len(TORNADO_BAD_REQUEST) and bytes(data) == TORNADO_BAD_REQUEST:
            data = self.bad_request
        return super().write(data)


PageDone = Callable[[float], None]
"""Called once a connection's first request, a page, has its response finished (or the
client left first), with the seconds since its head was read."""


class GuardedHTTPServer(HTTPServer):
    """HTTPServer whose requests pass a :class:`RequestGuard` and report finished pages.

    Configure it with ``HTTPServer.configure(GuardedHTTPServer, guard=…, on_page_done=…)``
    before the server is created; both are optional.
    """

    def initialize(
        self,
        *args: Any,
        guard: RequestGuard | None = None,
        session_key: bytes | None = None,
        on_page_done: PageDone | None = None,
        before_page: BeforePage | None = None,
        app_paths: Sequence[str] = ("/", "/main"),
        known_handlers: Iterable[str] = KNOWN_HANDLERS,
        **kwargs: Any,
    ) -> None:
        """HTTPServer's initialize, plus the guard, the key this process signs session ids
        with (websockets' tokens are checked against it), the page hooks (after a page's
        response, before its session is built), the app's paths and the handlers a
        request may reach (``module.Class``; a path routed to any other is a 404)."""
        # A head up to READ_HEAD_BYTES is read, so that one over MAX_HEAD_BYTES is answered.
        kwargs["max_header_size"] = max(kwargs.get("max_header_size") or 0, READ_HEAD_BYTES)
        super().initialize(*args, **kwargs)
        self.guard = guard
        self.session_key = session_key
        self.on_page_done = on_page_done
        self.before_page = before_page
        self.app_paths = tuple(app_paths)
        self.routes = RouteTable.of(self.request_callback, known_handlers)
        """The routes the application mounts; a path reaching one it does not know is a 404."""
        warning = self.routes.warning()
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)
        self.compressed = CompressedCache()
        """Static files compressed once for every client (app/server/compression.py)."""
        self._had_requests: weakref.WeakSet[object] = weakref.WeakSet()
        """Connections that have had a request: the next one is not their first."""
        self._page_slots: weakref.WeakKeyDictionary[IOStream, PageSlot] = (
            weakref.WeakKeyDictionary()
        )
        """The connections handed over as pages (by ``sdpa-sim --num-procs``'s front), each
        with the slot it holds in the front's page queue until it is reported."""

    def answer_headers(self) -> dict[str, str]:
        """The headers of every response but a websocket's (the guard's)."""
        return self.guard.response_headers() if self.guard is not None else {}

    def guarded_stream(self, stream: IOStream) -> IOStream:
        """A :class:`GuardedIOStream` on ``stream``'s socket, or ``stream`` itself if it is
        one already or is not a plain IOStream (TLS: ``sdpa-sim`` serves plain HTTP). Only a
        stream nothing has read from yet may be replaced (as ``handle_stream`` gets it)."""
        if type(stream) is not IOStream:
            return stream
        return GuardedIOStream(
            stream.socket,
            max_buffer_size=self.max_buffer_size,
            read_chunk_size=self.read_chunk_size,
            answer_headers=self.answer_headers(),
        )

    def handle_stream(self, stream: IOStream, address: tuple, *, page: bool = False) -> None:
        """Serve the connection on a :class:`GuardedIOStream`. ``page``: the front counted
        it as a page, whose end :attr:`on_page_done` hears of once, however it ends (its
        response written, the client gone, or a head Tornado refuses before any handler)."""
        guarded = self.guarded_stream(stream)
        if page:
            self._page_slots[guarded] = PageSlot(self)
        super().handle_stream(guarded, address)

    def start_request(
        self, server_conn: object, request_conn: httputil.HTTPConnection
    ) -> httputil.HTTPMessageDelegate:
        """The application's delegate for this request, behind the guard's."""
        first = server_conn not in self._had_requests
        self._had_requests.add(server_conn)
        # Only a connection's first request is the page the front counted.
        slot = self._page_slots.get(getattr(server_conn, "stream", None)) if first else None
        compressing = CompressingConnection(request_conn, self.compressed)
        connection = _WatchedConnection(compressing, self, slot)
        inner = super().start_request(server_conn, connection)
        return _GuardedRequest(inner, connection, compressing, self)

    def on_close(self, server_conn: object) -> None:
        """The connection is over: a page slot it still holds is reported now."""
        slot = self._page_slots.pop(getattr(server_conn, "stream", None), None)
        if slot is not None:
            slot.report()
        super().on_close(server_conn)


class PageSlot:
    """A connection the front counted as a page, until its end is reported (once)."""

    def __init__(self, server: GuardedHTTPServer) -> None:
        self._server = server
        self.started = time.monotonic()
        """When the connection was handed over (``time.monotonic``)."""
        self.reported = False

    def report(self) -> None:
        """Tell :attr:`GuardedHTTPServer.on_page_done` the page is over, the first time."""
        if self.reported:
            return
        self.reported = True
        if self._server.on_page_done is not None:
            self._server.on_page_done(time.monotonic() - self.started)


class _WatchedConnection(httputil.HTTPConnection):
    """The request's connection as the application sees it: the same, plus the security
    header on responses and a report when a watched page's response is finished."""

    def __init__(
        self,
        connection: httputil.HTTPConnection,
        server: GuardedHTTPServer,
        slot: PageSlot | None,
    ) -> None:
        self._connection = connection
        self._server = server
        self.slot = slot
        """The front's page slot this request holds (its connection's first), if any."""
        self.content_addressed = False
        """Whether the request is for a file whose name carries its content's hash (the
        served page's bundle, one of the guard's component files)."""

    def write_headers(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
        chunk: bytes | None = None,
    ) -> Awaitable[None]:
        """Write the response's head, with the guard's headers unless it is a websocket's."""
        guard = self._server.guard
        is_upgrade = isinstance(start_line, httputil.ResponseStartLine) and start_line.code == 101
        if guard is not None and not is_upgrade:
            for name, value in guard.response_headers().items():
                if name not in headers:
                    headers[name] = value
        if isinstance(start_line, httputil.ResponseStartLine):
            give_cache_lifetime(start_line.code, headers, content_addressed=self.content_addressed)
        return self._connection.write_headers(start_line, headers, chunk)

    def write(self, chunk: bytes) -> Awaitable[None]:
        """Write part of the body."""
        return self._connection.write(chunk)

    def finish(self) -> None:
        """Finish the response; report the page slot it holds, if any."""
        self._connection.finish()
        self.done()

    def done(self) -> None:
        """Report the page slot this request holds as done, once."""
        if self.slot is not None:
            self.slot.report()

    def __getattr__(self, name: str) -> Any:
        # Everything else HTTP1Connection offers (detach for websockets, the close callback,
        # the stream and context the request reads) is the real connection's.
        return getattr(self._connection, name)


class _GuardedRequest(httputil.HTTPMessageDelegate):
    """The guard in front of the application's delegate for one request."""

    def __init__(
        self,
        inner: httputil.HTTPMessageDelegate,
        connection: _WatchedConnection,
        compressing: CompressingConnection,
        server: GuardedHTTPServer,
    ) -> None:
        self._inner: httputil.HTTPMessageDelegate | None = inner
        self._connection = connection
        self._compressing = compressing
        self._server = server
        self._method = ""

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Awaitable[None] | None:
        """Check the request; answer it here if refused, else pass it on."""
        assert isinstance(start_line, httputil.RequestStartLine)
        self._method = start_line.method
        path = start_line.path.partition("?")[0]
        self._compressing.request_received(start_line.method, path, headers)
        page = is_page_request(start_line.method, start_line.path, self._server.app_paths)
        guard = self._server.guard
        refusal = None
        if head_bytes(start_line, headers) > MAX_HEAD_BYTES:
            refusal = HEAD_TOO_LARGE
        elif guard is not None:
            refusal = guard.check(start_line, headers, self._server.session_key)
        if refusal is None and self._server.routes.refuses(path):
            refusal = NOT_FOUND
        if refusal is not None:
            self._inner = None
            self._refuse(refusal)
            return None
        assert self._inner is not None
        # The guard lets through only the app's own bundles there, named by their hash.
        self._connection.content_addressed = guard is not None and (
            path.startswith(COMPONENT_PREFIX) and component_allowed(path, guard.component_files)
        )
        before = self._server.before_page
        waiting = before(start_line.path) if page and before is not None else None
        if waiting is None:
            return self._inner.headers_received(start_line, headers)
        return self._after(waiting, start_line, headers)

    async def _after(
        self,
        waiting: Awaitable[None],
        start_line: httputil.RequestStartLine,
        headers: httputil.HTTPHeaders,
    ) -> None:
        """Hand the request on once ``waiting`` (``before_page``'s) is done."""
        await waiting
        assert self._inner is not None
        received = self._inner.headers_received(start_line, headers)
        if received is not None:
            await received

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        """Pass the body on (a refused request's is read and dropped)."""
        return self._inner.data_received(chunk) if self._inner is not None else None

    def finish(self) -> None:
        """The request is complete: the application handles it."""
        if self._inner is not None:
            self._inner.finish()

    def on_connection_close(self) -> None:
        """The client left before the request was complete."""
        if self._inner is not None:
            self._inner.on_connection_close()
        self._connection.done()

    def _refuse(self, refusal: Refusal) -> None:
        body = (refusal.text + "\n").encode("utf-8")
        headers = httputil.HTTPHeaders(
            {"Content-Type": "text/plain; charset=utf-8", "Content-Length": str(len(body))}
        )
        for name, value in refusal.headers:
            headers[name] = value
        start_line = httputil.ResponseStartLine("HTTP/1.1", refusal.status, refusal.reason)
        # A response to HEAD has the length of the body it would have, and no body.
        chunk = None if self._method == "HEAD" else body
        self._connection.write_headers(start_line, headers, chunk)
        self._connection.finish()
