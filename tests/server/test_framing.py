"""Who may frame the app, checked in Chromium: ``sdpa-sim --allow-embed-from`` names the
sites, ``localhost`` and the app's own origin (the example course page) always may, and a
page on any other origin gets no app in its iframe.

Two loopback origins stand for a course site and a stranger: a test page served on two
ports of 127.0.0.1 (origins differ by port), and the same page as ``localhost``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest
from browser_support import HEATMAP_DRAWN_JS
from procs_support import FrontServer, free_port, running_front, tracebacks

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Frame, Page

TIMEOUT_MS = 60_000


class CoursePage(BaseHTTPRequestHandler):
    """Serves one page with the app in an iframe, whatever the path."""

    app_url = ""

    def do_GET(self) -> None:
        """The page."""
        body = (
            "<!doctype html><title>course</title>"
            f'<iframe id="sim" src="{self.app_url}" width="800" height="600"></iframe>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def _serve_course_page(port: int, app_url: str) -> ThreadingHTTPServer:
    handler = type("Handler", (CoursePage,), {"app_url": app_url})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def course_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FrontServer, int]]:
    """``sdpa-sim`` allowing one course site (127.0.0.1 on a port of its own)."""
    site_port = free_port()
    holder = _serve_course_page(site_port, "about:blank")
    log_path = tmp_path_factory.mktemp("framing") / "sdpa-sim.log"
    try:
        with running_front(
            log_path, 1, ("--allow-embed-from", f"http://127.0.0.1:{site_port}")
        ) as server:
            holder.RequestHandlerClass.app_url = f"{server.url}?embed=true"  # type: ignore[attr-defined]
            yield server, site_port
    finally:
        holder.shutdown()
        holder.server_close()


def _app_frame(page: Page) -> Frame:
    children = page.main_frame.child_frames
    assert children, "the page has no iframe"
    return children[0]


@pytest.mark.browser
def test_framing_is_allowed_to_named_sites_localhost_and_itself_only(
    course_site: tuple[FrontServer, int], chromium: Browser
) -> None:
    server, site_port = course_site
    stranger_port = free_port()
    stranger = _serve_course_page(stranger_port, f"{server.url}?embed=true")
    context = chromium.new_context(viewport={"width": 1000, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        for url in (
            f"http://127.0.0.1:{site_port}/",  # --allow-embed-from
            f"http://localhost:{stranger_port}/",  # localhost, always
            f"{server.base_url}/assets/course-page.html",  # the app's own origin
        ):
            page = context.new_page()
            page.goto(url)
            page.wait_for_function("() => document.querySelector('iframe') !== null")
            _app_frame(page).wait_for_function(HEATMAP_DRAWN_JS)
            page.close()

        page = context.new_page()
        with page.expect_console_message(lambda message: "frame-ancestors" in message.text):
            page.goto(f"http://127.0.0.1:{stranger_port}/")
        frame = _app_frame(page)
        assert not frame.evaluate("() => Boolean(window.Bokeh)"), (
            "the app ran in a stranger's frame"
        )
    finally:
        context.close()
        stranger.shutdown()
        stranger.server_close()
    assert not tracebacks(server.log_text()), tracebacks(server.log_text())
