"""The served page's moves and frames on the session's own channel (app/served/channel.py), and on
Bokeh's websocket when the channel is refused: the same page either way."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from app.simulation.spec import D_K_GRID

if TYPE_CHECKING:
    from conftest import AppPage
    from playwright.sync_api import WebSocketRoute

pytestmark = pytest.mark.browser

CHANNEL_STATUS_JS = """() => {
  const record = window.SdpaDrawnFigures && window.SdpaDrawnFigures[0];
  return record ? SdpaChannel.status(record.channel) : null;
}"""
"""The page's channel: its state ("connecting", "open", "closed") and the frames it
received, or None when the page has no channel."""

LESSON_FRAMES_JS = """() => (window.SdpaDrawnLessons || []).map((record) =>
  [record.views, record.frames])"""
"""For each drawn lesson component: the collapse views and the row/output frames drawn."""

CHANNEL_ADDRESS = re.compile(r"/channel\?key=")


def _status(app_page: AppPage) -> dict[str, Any] | None:
    return app_page.page.evaluate(CHANNEL_STATUS_JS)


def _wait_lesson_moved(app_page: AppPage, before: list[list[int]]) -> None:
    """Wait until the lesson's collapse marker and row comparison have drawn again."""
    app_page.page.wait_for_function(
        """(before) => {
          const now = (window.SdpaDrawnLessons || []).map((r) => [r.views, r.frames]);
          const sum = (rows, i) => rows.reduce((total, row) => total + row[i], 0);
          return sum(now, 0) > sum(before, 0) && sum(now, 1) > sum(before, 1);
        }""",
        arg=before,
    )


def test_moves_and_frames_travel_on_the_channel(app_page: AppPage) -> None:
    """The page opens its session's channel; a move's numbers come back on it, the first
    screen's and the lesson's, and the URL follows."""
    app_page.open("?n=16")
    app_page.page.wait_for_function(f"() => ({CHANNEL_STATUS_JS})()?.state === 'open'")
    before = _status(app_page)
    lesson_before = app_page.page.evaluate(LESSON_FRAMES_JS)

    app_page.step_d_k(2)
    _wait_lesson_moved(app_page, lesson_before)

    after = _status(app_page)
    assert after is not None and after["state"] == "open"
    assert after["frames"] > before["frames"], "the move's frames should come on the channel"


def test_a_refused_channel_leaves_the_page_on_bokehs_websocket(app_page: AppPage) -> None:
    """Where the channel cannot be opened (a proxy that refuses it), moves and frames go
    over Bokeh's websocket: the page works the same."""

    def refuse(route: WebSocketRoute) -> None:
        route.close(code=1011, reason="refused by the test")

    app_page.page.route_web_socket(CHANNEL_ADDRESS, refuse)
    app_page.open("?n=16")
    app_page.page.wait_for_function(f"() => ({CHANNEL_STATUS_JS})()?.state === 'closed'")
    lesson_before = app_page.page.evaluate(LESSON_FRAMES_JS)

    app_page.step_d_k(2)
    _wait_lesson_moved(app_page, lesson_before)

    status = _status(app_page)
    assert status == {"state": "closed", "frames": 0}


def test_a_channel_that_closes_mid_session_hands_over_to_bokehs_websocket(
    app_page: AppPage,
) -> None:
    """A channel that opens and later closes (a proxy's idle timeout): the next moves'
    numbers come over Bokeh's websocket."""
    routes: list[WebSocketRoute] = []

    def relay(route: WebSocketRoute) -> None:
        route.connect_to_server()
        routes.append(route)

    app_page.page.route_web_socket(CHANNEL_ADDRESS, relay)
    app_page.open("?n=16")
    app_page.page.wait_for_function(f"() => ({CHANNEL_STATUS_JS})()?.state === 'open'")
    app_page.step_d_k()
    frames_on_channel = _status(app_page)["frames"]
    assert frames_on_channel > 0

    routes[0].close(code=1001, reason="closed by the test")
    app_page.page.wait_for_function(f"() => ({CHANNEL_STATUS_JS})()?.state === 'closed'")
    lesson_before = app_page.page.evaluate(LESSON_FRAMES_JS)
    app_page.step_d_k(start=D_K_GRID[D_K_GRID.index(64) + 1])
    _wait_lesson_moved(app_page, lesson_before)
    assert _status(app_page)["frames"] == frames_on_channel
