"""The throwaway control of tests/new_control_support.py on the served page: one spec entry,
served through :func:`app.main.serve_page` (tests/browser/new_control_app.py), gives the page
its slider under "More controls", its place in the URL and in the recompute graph."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from browser_support import AppServer, start_server, stop_server
from new_control_support import GAIN

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

WEIGHTS_FRAME_SINCE_JS = """(since) => {
  const log = sdpaFrames();
  return log.frames.slice(since).some((frame) => frame.parts.includes(log.parts.weights));
}"""
"""True once a frame that came after the first ``since`` carries the weights."""


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """``panel serve tests/browser/new_control_app.py``: the app with the throwaway control."""
    log_path = tmp_path_factory.mktemp("new-control") / "server.log"
    try:
        server = start_server(log_path, script="tests/browser/new_control_app.py")
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    stop_server(server)


def test_the_served_page_draws_moves_and_writes_the_new_control(app_page: AppPage) -> None:
    app_page.open("?gain=0.75", lesson=False)
    app_page.open_more()
    page = app_page.page
    slider = page.get_by_role("slider", name=GAIN.label, exact=True)
    assert slider.get_attribute("aria-valuetext") == "0.75"
    app_page.wait_url(gain="0.75")
    since = page.evaluate("() => sdpaFrames().frames.length")
    app_page.press(GAIN.label, "ArrowRight")
    # The session recomputes what the control feeds and sends it; the URL follows.
    page.wait_for_function(WEIGHTS_FRAME_SINCE_JS, arg=since)
    app_page.wait_url(gain="1")
    assert slider.get_attribute("aria-valuetext") == "1"


def test_a_link_past_the_new_controls_bounds_gets_the_usual_notice(app_page: AppPage) -> None:
    app_page.open("?gain=9", lesson=False)
    notice = app_page.page.locator(".query-notice")
    notice.get_by_text("gain = 9 is above the largest value 2; using 2.").wait_for()
    app_page.wait_url(gain="2")
