"""Tornado's HTTPServer with a look at every request before Bokeh and Panel see it.

``sdpa-sim`` configures :class:`GuardedHTTPServer` (Tornado's public ``Configurable``
mechanism) before ``panel serve`` builds its server, in one process as in each worker of
``--num-procs``. For every request it wraps Tornado's two public interfaces around the
application:

- the request's :class:`~tornado.httputil.HTTPMessageDelegate`: the request line and the
  headers go to the :class:`~app.request_guard.RequestGuard` first, and a refused request is
  answered here with a plain 4xx (Bokeh never sees it);
- the request's :class:`~tornado.httputil.HTTPConnection`: every response but a websocket's
  101 gets the guard's ``Content-Security-Policy``, and the end of a page's response
  (Bokeh has built its session and written the HTML) is reported to ``on_page_done``.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tornado import httputil
from tornado.httpserver import HTTPServer

from app.request_guard import Refusal, RequestGuard, is_page_request

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
        app_paths: Sequence[str] = ("/", "/main"),
        **kwargs: Any,
    ) -> None:
        """HTTPServer's initialize, plus the guard, the key this process signs session ids
        with (websockets' tokens are checked against it), the page hook and the app's
        paths."""
        super().initialize(*args, **kwargs)
        self.guard = guard
        self.session_key = session_key
        self.on_page_done = on_page_done
        self.app_paths = tuple(app_paths)
        self._had_requests: weakref.WeakSet[object] = weakref.WeakSet()
        """Connections that have had a request: the next one is not their first."""

    def start_request(
        self, server_conn: object, request_conn: httputil.HTTPConnection
    ) -> httputil.HTTPMessageDelegate:
        """The application's delegate for this request, behind the guard's."""
        first = server_conn not in self._had_requests
        self._had_requests.add(server_conn)
        connection = _WatchedConnection(request_conn, self)
        inner = super().start_request(server_conn, connection)
        return _GuardedRequest(inner, connection, self, first)


class _WatchedConnection(httputil.HTTPConnection):
    """The request's connection as the application sees it: the same, plus the security
    header on responses and a report when a watched page's response is finished."""

    def __init__(self, connection: httputil.HTTPConnection, server: GuardedHTTPServer) -> None:
        self._connection = connection
        self._server = server
        self.watched = False
        """Whether this request is a page whose end is reported (see :meth:`done`)."""
        self.started = 0.0
        """When its head was read (``time.monotonic``)."""
        self._reported = False

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
        return self._connection.write_headers(start_line, headers, chunk)

    def write(self, chunk: bytes) -> Awaitable[None]:
        """Write part of the body."""
        return self._connection.write(chunk)

    def finish(self) -> None:
        """Finish the response; report it if it ends a watched page."""
        self._connection.finish()
        self.done()

    def done(self) -> None:
        """Report the watched page as done, once."""
        if self.watched and not self._reported:
            self._reported = True
            if self._server.on_page_done is not None:
                self._server.on_page_done(time.monotonic() - self.started)

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
        server: GuardedHTTPServer,
        first: bool,
    ) -> None:
        self._inner: httputil.HTTPMessageDelegate | None = inner
        self._connection = connection
        self._server = server
        self._first = first

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Awaitable[None] | None:
        """Check the request; answer it here if refused, else pass it on."""
        assert isinstance(start_line, httputil.RequestStartLine)
        # Only a connection's first request can have been counted by the front as a page.
        self._connection.watched = self._first and is_page_request(
            start_line.method, start_line.path, self._server.app_paths
        )
        self._connection.started = time.monotonic()
        guard = self._server.guard
        refusal = None
        if guard is not None:
            refusal = guard.check(start_line, headers, self._server.session_key)
        if refusal is not None:
            self._inner = None
            self._refuse(refusal)
            return None
        assert self._inner is not None
        return self._inner.headers_received(start_line, headers)

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
        self._connection.write_headers(start_line, headers, body)
        self._connection.finish()
