"""One worker process of ``sdpa-sim --num-procs N``: ``panel serve app/main.py`` that also
serves the connections the front hands it.

The front (:mod:`app.server.front`) starts it as ``python -m app.server.worker --control-fd FD --
<panel serve arguments>``. FD is this process's end of a Unix ``SOCK_SEQPACKET`` socket
pair: the front sends each client connection routed here as a file descriptor
(``SCM_RIGHTS``) and the worker serves it as if its own listening socket had accepted it
(Tornado's public ``HTTPServer.handle_stream``); the worker sends back how many sessions
it holds. The connection's bytes never pass through the front.

The server is built by ``panel serve`` itself, with the options ``sdpa-sim`` gives it.
Tornado's ``HTTPServer`` is a ``Configurable``: :func:`main` configures the subclass below
before Bokeh creates its server, which is how the worker reaches the server's
``HTTPServer`` without private attributes. It is :mod:`app.server.guarded_http`'s server: every
request passes the same guard as in one process, and when a connection the front handed as
a page is over (its page written, or refused, or the client gone, or its head unreadable),
the worker tells the front, which hands it the next page then (see :mod:`app.server.front`).
When the front goes away (its end of the socket pair closes), the worker stops as it would
on SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import sys
from dataclasses import replace
from typing import Any

from tornado import gen
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop
from tornado.iostream import IOStream

from app.server.guarded_http import GuardedHTTPServer
from app.server.message_log import quiet_client_messages
from app.server.request_guard import RequestGuard

log = logging.getLogger(__name__)

HANDOFF = b"c"
"""The message the front sends with each handed connection's file descriptor."""

HANDOFF_PAGE = b"p"
"""The message the front sends instead with a connection it counts as a page: the worker
reports :data:`PAGE_DONE` for it once, however it ends (see
:meth:`app.server.guarded_http.GuardedHTTPServer.handle_stream`), so the front and the worker
never disagree on what a page is."""

SESSIONS = b"sessions"
"""Prefix of the worker's report: ``sessions <live> <created>`` (ASCII)."""

PAGE_DONE = b"page-done"
"""The worker's report that the page a handed connection asked for is finished.

Bokeh's and Panel's session-created callbacks cannot tell: they run before the session's
document is built (``ApplicationContext.create_session_if_needed``), not after."""

PAGE_PAUSE = float(os.environ.get("SDPA_SIM_PAGE_PAUSE", "0"))
"""After a page, the worker can wait this fraction of the time it took before it reports it
done (and the front hands it the next). A page build holds the event loop at a stretch, and
a working student's move needs the loop several times before its heatmap is sent, so while
a class arrives those moves wait. A pause lets moves through between pages but makes the
last documents arrive later; off by default, the variable trades one for the other
(benchmarks/bench_class.py measures both; docs/performance.md has the figures)."""

MAX_FDS_PER_MESSAGE = 1
"""The front hands one connection per message."""


class HandOffHTTPServer(GuardedHTTPServer):
    """The guarded HTTPServer, also serving connections received on the control socket.

    Each received socket is wrapped and served as :class:`tornado.tcpserver.TCPServer`
    serves an accepted one (same buffer limits, same :meth:`handle_stream`).
    """

    def initialize(self, *args: Any, control: socket.socket, **kwargs: Any) -> None:
        """The guarded server's initialize, plus the control socket (set by ``configure``);
        finished pages are reported on it."""
        super().initialize(*args, on_page_done=self.page_done, **kwargs)
        self._control = control
        self._receiving = False

    def page_done(self, took: float) -> None:
        """Report the finished page after a pause of :data:`PAGE_PAUSE` times ``took``."""
        if PAGE_PAUSE > 0:
            IOLoop.current().call_later(PAGE_PAUSE * took, self._report_page_done)
        else:
            self._report_page_done()

    def _report_page_done(self) -> None:
        # A full queue means the front is far behind; it also forgets a page after a while.
        with contextlib.suppress(OSError):
            self._control.send(PAGE_DONE, socket.MSG_DONTWAIT)

    def add_sockets(self, sockets: Any) -> None:
        """Listen on ``sockets`` and, from now on, on the control socket too.

        Bokeh calls this once its application is ready, on the loop the server runs on.
        """
        super().add_sockets(sockets)
        if not self._receiving:
            self._receiving = True
            self._control.setblocking(False)
            IOLoop.current().add_handler(self._control.fileno(), self._on_control, IOLoop.READ)

    def _on_control(self, fd: int, events: int) -> None:
        """Serve every connection waiting on the control socket; stop if the front is gone."""
        while True:
            try:
                data, fds, _flags, _address = socket.recv_fds(
                    self._control, 64, MAX_FDS_PER_MESSAGE
                )
            except BlockingIOError:
                return
            except OSError as error:
                log.error("sdpa-sim worker: control socket failed (%s); stopping", error)
                self._front_gone()
                return
            if not data and not fds:
                self._front_gone()
                return
            for handed in fds:
                self._serve(handed, page=data == HANDOFF_PAGE)

    def _serve(self, fd: int, *, page: bool = False) -> None:
        """Serve the connection whose file descriptor the front handed over (``page``: as
        a page it counts, until :data:`PAGE_DONE`)."""
        connection = socket.socket(fileno=fd)
        try:
            connection.setblocking(False)
            # The front checks its own connections with a Unix socket pair: no peer address.
            is_inet = connection.family in (socket.AF_INET, socket.AF_INET6)
            address = connection.getpeername() if is_inet else ("", 0)
        except OSError:
            # The client left while the connection was on its way here.
            connection.close()
            if page:
                self.page_done(0.0)
            return
        stream = IOStream(
            connection, max_buffer_size=self.max_buffer_size, read_chunk_size=self.read_chunk_size
        )
        future = self.handle_stream(stream, address, page=page)
        if future is not None:
            IOLoop.current().add_future(gen.convert_yielded(future), lambda done: done.result())

    def _front_gone(self) -> None:
        """Stop serving as Bokeh does on SIGTERM: the front closed its end, so nothing more
        arrives and nobody would stop this process otherwise."""
        IOLoop.current().remove_handler(self._control.fileno())
        IOLoop.current().stop()


class SessionReporter:
    """Sends the front this process's session counts whenever they change."""

    def __init__(self, control: socket.socket) -> None:
        self._control = control
        self.live = 0
        self.created = 0

    def created_session(self, session_context: Any) -> None:
        """Panel's session-created callback."""
        self.live += 1
        self.created += 1
        self._report()

    def destroyed_session(self, session_context: Any) -> None:
        """Panel's session-destroyed callback."""
        self.live -= 1
        self._report()

    def _report(self) -> None:
        message = b"%s %d %d" % (SESSIONS, self.live, self.created)
        # A full queue means the front is behind: the next report carries the totals. A
        # closed one means it is gone, which the control handler acts on.
        with contextlib.suppress(OSError):
            self._control.send(message, socket.MSG_DONTWAIT)


def parse_arguments(argv: list[str]) -> tuple[int, RequestGuard | None, list[str]]:
    """The control socket's file descriptor, the request guard and the ``panel serve``
    arguments."""
    parser = argparse.ArgumentParser(prog="python -m app.server.worker")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--guard", help="the request guard, as RequestGuard.to_json writes it")
    parser.add_argument("serve", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    serve = options.serve[1:] if options.serve[:1] == ["--"] else options.serve
    guard = RequestGuard.from_json(options.guard) if options.guard else None
    return options.control_fd, guard, serve


def main(argv: list[str] | None = None) -> None:
    """Run ``panel serve`` with the given arguments, serving handed connections too."""
    control_fd, guard, serve = parse_arguments(sys.argv[1:] if argv is None else argv)
    control = socket.socket(fileno=control_fd)
    # The front gives each worker its own key, which signs its sessions.
    key = os.environ.get("BOKEH_SECRET_KEY", "").encode("utf-8") or None
    # Imported here, in the worker: it loads Panel and the app's views, which the front
    # (importing this module to start workers) never needs.
    from app.served.component_routes import served_component_files
    from app.served.warmup import warm_page

    if guard is not None:
        # Only this process, which loads the app, knows its components: the front has no Panel.
        guard = replace(guard, component_files=served_component_files())
    HTTPServer.configure(
        HandOffHTTPServer, control=control, guard=guard, session_key=key, before_page=warm_page
    )
    quiet_client_messages()

    import panel as pn
    from panel.command import main as panel_main

    # What app/main.py imports, imported before the first request: Bokeh serves an
    # extension's scripts (/static/extensions/panel-material-ui/...) only once its module
    # is imported, which a single process does while building its first page. Here a page
    # built by one worker may have its scripts fetched from another that has built none.
    # (The first page of each worker is quicker too.)
    import app.served.session  # noqa: F401
    from app.compat import warn_about_changed_internals

    warn_about_changed_internals()

    reporter = SessionReporter(control)
    # Registered outside any session, as a --setup script would: they apply to every one.
    pn.state.on_session_created(reporter.created_session)
    pn.state.on_session_destroyed(reporter.destroyed_session)

    sys.argv = ["panel", *serve]
    panel_main()


if __name__ == "__main__":
    main()
