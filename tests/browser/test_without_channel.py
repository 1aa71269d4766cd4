"""The served page where the channel is not mounted (plain ``panel serve app/main.py``, as a
notebook or a course's own Panel server runs it): moves and frames over Bokeh's websocket."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from browser_support import AppServer, start_server, stop_server

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """``panel serve app/main.py`` without ``--plugins app.channel``, for this module."""
    log_path = tmp_path_factory.mktemp("plain-serve") / "server.log"
    try:
        server = start_server(log_path, channel=False)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    stop_server(server)


def test_a_page_without_a_channel_moves_over_bokehs_websocket(app_page: AppPage) -> None:
    """The page gets no channel key and opens none; a move still redraws the heatmap, the
    histograms and the lesson's row comparison, and the URL follows at once."""
    app_page.open("?n=16")
    record = app_page.page.evaluate("() => ({...window.SdpaDrawnFigures[0], models: null})")
    assert record["channel"] == ""
    lesson_before = app_page.page.evaluate(
        "() => window.SdpaDrawnLessons.reduce((sum, r) => sum + r.frames, 0)"
    )

    app_page.step_d_k()
    app_page.page.wait_for_function(
        "(before) => window.SdpaDrawnLessons.reduce((sum, r) => sum + r.frames, 0) > before",
        arg=lesson_before,
    )
    assert app_page.page.evaluate("() => window.SdpaChannel.status('')") is None
