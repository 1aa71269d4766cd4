"""The guarded HTTPServer (app/server/guarded_http.py) around a small Tornado app in this process:
refusals answered before the app sees them, the framing header on responses, and the end of
a connection's first page reported once; and the worker's pause before it reports a page.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import ClassVar

import pytest
from procs_support import free_port, run_async
from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.iostream import IOStream
from tornado.web import Application, RequestHandler

from app.server import worker
from app.server.guarded_http import GuardedHTTPServer
from app.server.mounted_routes import handler_name
from app.server.request_guard import RequestGuard


class Page(RequestHandler):
    """Stands for Bokeh's page handler: answers after a moment."""

    seen: ClassVar[list[str]] = []

    async def get(self) -> None:
        """The page."""
        Page.seen.append(self.request.uri or "")
        await asyncio.sleep(0.01)
        self.write("page")


KNOWN = [handler_name(Page)]
"""The test application's one handler, known to the server as Panel's and Bokeh's are."""


async def _served(done: list[float]) -> tuple[GuardedHTTPServer, int]:
    port = free_port()
    app = Application([(r"/main", Page), (r"/static/x", Page), (r"/other/(.*)", Other)])
    guard = RequestGuard.for_server("127.0.0.1", embed_origins=["https://c.example.edu"])
    server = GuardedHTTPServer(app, guard=guard, on_page_done=done.append, known_handlers=KNOWN)
    server.listen(port, "127.0.0.1")
    return server, port


class Other(RequestHandler):
    """A handler the server is not told about: as a route a new Panel release might mount."""

    def get(self, rest: str) -> None:
        """Never reached."""
        raise AssertionError("an unknown route's handler ran")


def test_refusals_framing_and_unknown_routes() -> None:
    async def scenario() -> tuple[list[float], list[object], str]:
        done: list[float] = []
        Page.seen.clear()
        server, port = await _served(done)
        client = AsyncHTTPClient(force_instance=True)
        try:
            page = await client.fetch(f"http://127.0.0.1:{port}/main?d_k=4")
            await client.fetch(f"http://127.0.0.1:{port}/static/x")
            statuses: list[object] = [page.code]
            for url, headers in (
                (f"http://127.0.0.1:{port}/main?bokeh-token=x", {}),
                (f"http://127.0.0.1:{port}/main", {"Host": "evil.example"}),
                (f"http://127.0.0.1:{port}/other/x", {}),
            ):
                try:
                    await client.fetch(url, headers=headers)
                except HTTPClientError as error:
                    statuses.append(error.code)
            return done, statuses, page.headers["Content-Security-Policy"]
        finally:
            client.close()
            server.stop()

    done, statuses, policy = run_async(scenario(), 60)
    assert statuses == [200, 403, 403, 404]
    assert Page.seen.count("/main?d_k=4") == 1 and "/main?bokeh-token=x" not in Page.seen
    assert policy.endswith("https://c.example.edu")
    # Connections this server accepted itself hold no slot of a front's page queue.
    assert done == []


PAGE_HEADS = {
    "a page": b"GET /main HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    "a refused page": b"GET /main?bokeh-token=x HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "an unreadable version": b"GET /main HTTP/2.0\r\nHost: localhost\r\n\r\n",
    "a header name with a space": b"GET /main HTTP/1.1\r\nHost: localhost\r\nA b: c\r\n\r\n",
    "a NUL in a value": b"GET /main HTTP/1.1\r\nHost: localhost\r\nA: b\x00c\r\n\r\n",
    "half a head, then gone": b"GET /main HTTP/1.1\r\nHost: loc",
    "nothing, then gone": b"",
    "two pages on one connection": (b"GET /main HTTP/1.1\r\nHost: localhost\r\n\r\n" * 2),
}
"""Ways a connection the front counted as a page can go: each is reported done once."""


@pytest.mark.parametrize("case", PAGE_HEADS)
def test_a_connection_handed_as_a_page_is_reported_once_however_it_ends(case: str) -> None:
    async def scenario(page: bool) -> list[float]:
        done: list[float] = []
        server, _port = await _served(done)
        ours, theirs = socket.socketpair()
        try:
            theirs.setblocking(False)
            server.handle_stream(IOStream(theirs), ("", 0), page=page)
            ours.sendall(PAGE_HEADS[case])
            ours.shutdown(socket.SHUT_WR)
            loop = asyncio.get_running_loop()
            # Everything the server answers, until it closes: the connection is over then.
            ours.settimeout(30)
            while await loop.run_in_executor(None, ours.recv, 65536):
                pass
            for _ in range(100):
                if done:
                    break
                await asyncio.sleep(0.01)
            return done
        finally:
            ours.close()
            server.stop()

    assert len(run_async(scenario(page=True), 60)) == 1
    # Handed as anything else (a static file, a head the front could not read), never.
    assert run_async(scenario(page=False), 60) == []


def test_a_worker_reports_a_page_after_a_pause_in_proportion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "PAGE_PAUSE", 0.5)

    async def scenario() -> tuple[bool, float]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with ours, theirs:
            server = worker.HandOffHTTPServer(lambda request: None, control=ours)
            theirs.setblocking(False)
            started = time.monotonic()
            server.page_done(0.4)
            at_once = _received(theirs)
            while not _received(theirs):
                await asyncio.sleep(0.01)
            return at_once, time.monotonic() - started

    at_once, waited = run_async(scenario(), 30)
    assert not at_once and waited >= 0.2


def _received(sock: socket.socket) -> bool:
    try:
        return sock.recv(64) == worker.PAGE_DONE
    except BlockingIOError:
        return False


def _raw(port: int, data: bytes) -> bytes:
    """Send ``data`` on a connection of its own; all the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_heads_tornado_refuses_get_the_guards_answer() -> None:
    """An unreadable head: the guard's plain 400 for Tornado's bare one; a head over 64 KiB
    that the server still reads: a plain 431. Both carry frame-ancestors."""

    async def scenario() -> list[bytes]:
        server, port = await _served([])
        host = f"Host: 127.0.0.1:{port}\r\nConnection: close\r\n".encode()
        loop = asyncio.get_running_loop()
        heads = [
            b"GET /main\r\n" + host + b"\r\n",
            b"GET /main HTTP/1.1\r\n" + host + b"X-Long: " + b"a" * 100_000 + b"\r\n\r\n",
            b"GET /static/x HTTP/1.1\r\n" + host + b"\r\n",
        ]
        try:
            return [await loop.run_in_executor(None, _raw, port, head) for head in heads]
        finally:
            server.stop()

    unreadable, too_long, fine = run_async(scenario(), 60)
    assert (
        unreadable.startswith(b"HTTP/1.1 400 Bad Request\r\n")
        and b"could not be read" in unreadable
    )
    assert too_long.startswith(b"HTTP/1.1 431 ") and b"longer than 64 KiB" in too_long
    for answer in (unreadable, too_long):
        assert b"Content-Type: text/plain" in answer and b"frame-ancestors" in answer
    assert fine.startswith(b"HTTP/1.1 200 ") and fine.endswith(b"page")


def test_a_page_request_waits_for_before_page_and_others_do_not() -> None:
    # before_page (sdpa-sim computes a slow page's first numbers there, off the event loop)
    # is handed each page request's target, and the application sees the request only once
    # what it returned is done; a static file and a refused page never reach it.
    calls: list[str] = []
    order: list[str] = []

    async def slow(target: str) -> None:
        await asyncio.sleep(0.05)
        order.append(f"ready {target}")

    def before_page(target: str) -> asyncio.Future | None:
        calls.append(target)
        return asyncio.ensure_future(slow(target)) if "seed" in target else None

    class Recording(Page):
        async def get(self) -> None:
            order.append(f"page {self.request.uri}")
            await super().get()

    async def scenario() -> list[int]:
        port = free_port()
        app = Application([(r"/main", Recording), (r"/static/x", Recording)])
        guard = RequestGuard.for_server("127.0.0.1")
        server = GuardedHTTPServer(
            app, guard=guard, before_page=before_page, known_handlers=[handler_name(Recording)]
        )
        server.listen(port, "127.0.0.1")
        client = AsyncHTTPClient(force_instance=True)
        try:
            codes = []
            for path in ("/main?seed=5", "/main?d_k=4", "/static/x", "/main?bokeh-token=x"):
                try:
                    codes.append((await client.fetch(f"http://127.0.0.1:{port}{path}")).code)
                except HTTPClientError as error:
                    codes.append(error.code)
            return codes
        finally:
            client.close()
            server.stop()

    codes = run_async(scenario(), 60)
    assert codes == [200, 200, 200, 403]
    assert calls == ["/main?seed=5", "/main?d_k=4"]
    assert order == [
        "ready /main?seed=5",
        "page /main?seed=5",
        "page /main?d_k=4",
        "page /static/x",
    ]
