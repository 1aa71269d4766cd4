"""The switches, the view selector, the exact d_k box and Resample change what is drawn."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

FIELD_IS_JS = """(field) => sdpaHeatmap().column === field"""
"""True once the heatmap's image glyph draws the view's column ``field``."""


def test_causal_mask_masks_the_upper_triangle(app_page: AppPage) -> None:
    """With the causal mask on, every cell j > i is NaN (drawn in the mask colour)."""
    app_page.open()
    app_page.mark("weight")
    switch = app_page.page.get_by_role("switch", name="causal mask")
    expect(switch).not_to_be_checked()

    switch.focus()
    switch.press("Space")
    app_page.wait_changed("weight")
    app_page.wait_url(causal="true")
    expect(switch).to_be_checked()

    masked_cells = 32 * 31 // 2
    weights = app_page.heatmap()
    assert weights["nanUpper"] == masked_cells
    assert weights["nanLowerOrDiagonal"] == 0
    assert weights["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)
    # Query 0 sees only key 0, so its whole weight is on the diagonal.
    assert weights["rowSums"][0] == pytest.approx(1.0, abs=1e-6)
    for column in ("raw", "scaled"):
        scores = app_page.heatmap(column)
        assert scores["nanUpper"] == masked_cells, f"{column} scores are not masked"
        assert scores["nanLowerOrDiagonal"] == 0

    switch.press("Space")
    app_page.wait_url(causal="false")
    app_page.page.wait_for_function("() => !sdpaHeatmap().data.weight[0].some(Number.isNaN)")
    assert app_page.heatmap()["nanUpper"] == 0


def test_scale_switch_off_at_large_d_k_collapses_the_softmax(app_page: AppPage) -> None:
    """At d_k = 1024, switching the 1/√d_k scale off turns the rows one-hot."""
    app_page.open("?d_k=1024")
    expect(app_page.page.get_by_test_id("verdict")).to_contain_text("useful range")
    app_page.mark("weight")
    switch = app_page.page.get_by_role("switch", name="scale by 1/√d_k")
    expect(switch).to_be_checked()

    switch.focus()
    switch.press("Space")
    app_page.wait_changed("weight")
    app_page.wait_url(scaled="false", d_k="1024")

    expect(app_page.page.get_by_test_id("verdict")).to_contain_text("one-hot")
    assert float(app_page.readout("max-weight")) > 0.9
    assert float(app_page.readout("entropy")) < 0.5
    weights = app_page.heatmap()
    assert weights["max"] == pytest.approx(1.0, abs=1e-3)
    assert weights["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)


def test_view_selector_switches_the_drawn_column_without_new_data(app_page: AppPage) -> None:
    """The view buttons change the glyph's column and colour bar, and send no new images."""
    app_page.open()
    for column in ("weight", "raw", "scaled"):
        app_page.mark(column)
    weights = app_page.heatmap()
    group = app_page.page.get_by_role("group", name="heatmap view")

    group.get_by_role("button", name="raw").click()
    app_page.page.wait_for_function(FIELD_IS_JS, arg="raw")
    app_page.wait_url(view="raw")
    raw = app_page.heatmap()
    expect(group.get_by_role("button", name="raw")).to_have_attribute("aria-pressed", "true")
    assert "raw" in raw["title"].lower()
    # Scores use a diverging palette symmetric around 0, unlike the weights' [0, 1].
    assert raw["mapperLow"] == -raw["mapperHigh"] and raw["mapperHigh"] > 1
    assert raw["paletteFirst"] != weights["paletteFirst"]

    group.get_by_role("button", name="scaled").click()
    app_page.page.wait_for_function(FIELD_IS_JS, arg="scaled")
    app_page.wait_url(view="scaled")
    scaled = app_page.heatmap()
    # Scaling by 1/√64 shrinks the largest |score|, and so the colour bar, eightfold.
    assert raw["mapperHigh"] / scaled["mapperHigh"] == pytest.approx(math.sqrt(64), rel=1e-4)

    group.get_by_role("button", name="weights").click()
    app_page.page.wait_for_function(FIELD_IS_JS, arg="weight")
    app_page.wait_url(view="weights")
    assert (app_page.heatmap()["mapperLow"], app_page.heatmap()["mapperHigh"]) == (0, 1)
    for column in ("weight", "raw", "scaled"):
        assert app_page.is_marked(column), f"changing the view resent the {column} image"


def test_exact_d_k_box_and_resample_button(app_page: AppPage) -> None:
    """Typing a d_k off the slider's grid and pressing Resample both redraw the page."""
    app_page.open()
    box = app_page.page.get_by_role("spinbutton", name="exact d_k")
    box.fill("100")
    box.press("Enter")
    app_page.wait_histograms(100)
    app_page.wait_url(d_k="100")
    expect(app_page.page.get_by_test_id("std-raw")).to_contain_text("√d_k = 10.0")

    app_page.mark("raw")
    app_page.page.get_by_role("button", name="Resample").click()
    app_page.wait_changed("raw")
    app_page.wait_url(seed="1", d_k="100")
    expect(app_page.page.get_by_role("spinbutton", name="seed")).to_have_value("1")
    assert app_page.heatmap()["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)
