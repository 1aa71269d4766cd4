"""The server accepts the page's websocket only from the origins it was told to allow."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

if TYPE_CHECKING:
    from conftest import AppServer

pytestmark = pytest.mark.browser

TOKEN = re.compile(r'"token":\s*"([^"]+)"')


def _session_token(server: AppServer) -> str:
    """A fresh session token, read from the page the server sends a browser."""
    with urllib.request.urlopen(server.url, timeout=10) as response:
        page = response.read().decode("utf-8")
    match = TOKEN.search(page)
    assert match, "the page carries no session token"
    return match.group(1)


def _connect(server: AppServer, origin: str) -> int:
    """Open the app's websocket with ``origin``; return 101 on success, else the HTTP code."""
    request = HTTPRequest(
        f"ws://127.0.0.1:{server.port}/main/ws",
        headers={"Origin": origin},
        request_timeout=10,
        connect_timeout=10,
    )

    async def attempt() -> int:
        try:
            connection = await websocket_connect(
                request, subprotocols=["bokeh", _session_token(server)]
            )
        except HTTPClientError as error:
            return error.code
        connection.close()
        return 101

    # In a thread of its own: Playwright's sync API keeps an event loop in the test thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(asyncio.wait_for(attempt(), 30))).result()


def test_websocket_from_an_allowed_origin_opens(app_server: AppServer) -> None:
    assert _connect(app_server, f"http://127.0.0.1:{app_server.port}") == 101


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://127.0.0.1:1", "https://course.example.edu"]
)
def test_websocket_from_another_origin_is_refused(app_server: AppServer, origin: str) -> None:
    """A page on a site that is not listed cannot drive the app (Bokeh answers 403)."""
    assert _connect(app_server, origin) == 403


def test_sdpa_sim_passes_the_allowed_origins_through() -> None:
    from app.server.cli import build_parser, serve_arguments

    options = build_parser().parse_args(
        ["--allow-websocket-origin", "course.example.edu", "--allow-websocket-origin", "b:8080"]
    )
    arguments = serve_arguments(options)
    assert json.dumps(arguments).count("--allow-websocket-origin") == 2
    assert "course.example.edu" in arguments and "b:8080" in arguments
