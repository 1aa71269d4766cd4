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
    """``panel serve app/main.py`` without ``--plugins app.served.channel``, for this module."""
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


def test_training_streams_over_bokehs_websocket(app_page: AppPage) -> None:
    """Without the channel the training section comes on the lesson's properties: its
    figures, its state and its run, whole; Train and Stop go as the component's messages."""
    from playwright.sync_api import expect
    from test_training import GRID_DRAWN_JS, GRID_TIMEOUT_MS

    from app.page.views.training_grid import TRAINING_TITLE
    from app.served.components.training_session import TRAIN_LABEL

    app_page.open("?d_k=256", lesson=True)
    app_page.open_section(TRAINING_TITLE)
    page = app_page.page
    page.wait_for_function(GRID_DRAWN_JS, timeout=GRID_TIMEOUT_MS)
    page.get_by_role("button", name=TRAIN_LABEL, exact=True).click()
    expect(page.get_by_test_id("training-status")).to_contain_text("Done: d_k = 256")
    steps = page.evaluate(
        "() => sdpaFigure('training_loss').renderers"
        ".filter((r) => !('loss_low' in r.data_source.data))"
        ".map((r) => r.data_source.data.step.length)"
    )
    assert steps == [200, 200]
    bar = page.locator(".training-progress [role=progressbar]")
    expect(bar).to_have_attribute("aria-valuenow", "100")
