"""The throwaway control of tests/new_control_support.py in an exported page: one spec entry
gives the offline file its slider under "More controls", its place in the URL and in the
page's recompute graph (tests/model/test_new_control.py checks the data)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from new_control_support import GAIN, SPEC_WITH_GAIN

from app.export import export_html

from .conftest import OfflinePage

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def gain_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported page of the app's controls and the throwaway one (small limits)."""
    path = tmp_path_factory.mktemp("export-gain") / "gain.html"
    export_html(path, n_max=32, d_max=64, spec=SPEC_WITH_GAIN)
    return path


def test_the_new_control_is_drawn_moved_and_written_into_the_url(
    open_export: Callable[..., OfflinePage], gain_file: Path
) -> None:
    opened = open_export("?gain=0.75", path=gain_file)
    page = opened.page
    slider = page.locator("#sdpa-more").get_by_role("slider", name=GAIN.label, exact=True)
    slider.wait_for(state="visible")
    assert slider.get_attribute("aria-valuetext") == "0.75"
    assert opened.snapshot()["state"]["gain"] == 0.75
    before = opened.updates()
    slider.focus()
    slider.press("ArrowRight")
    # The page recomputes what the control feeds (the weights) and writes it into its URL.
    opened.wait_for_update_after(before)
    page.wait_for_function("() => new URLSearchParams(location.search).get('gain') === '1'")
    assert opened.snapshot()["state"]["gain"] == 1
    assert slider.get_attribute("aria-valuetext") == "1"


def test_a_link_past_the_new_controls_bounds_gets_the_usual_notice(
    open_export: Callable[..., OfflinePage], gain_file: Path
) -> None:
    opened = open_export("?gain=9", path=gain_file)
    assert opened.snapshot()["state"]["gain"] == 2
    text = opened.page.evaluate(
        """() => {
            const model = Bokeh.documents[0].get_model_by_name("notice");
            return Bokeh.index.find_one(model).shadow_el.textContent;
        }"""
    )
    assert "gain = 9 is above the largest value 2; using 2." in text
