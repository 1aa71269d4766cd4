"""Each slider, moved with the keyboard alone, changes what the page plots and its URL."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from app.simulation.spec import D_K_GRID, N_GRID, TEMPERATURE_GRID, nearest_on_grid

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

D_K = "d_k (key dimension)"
TEMPERATURE = "temperature"
N = "sequence length n"


def _after(grid: list, value: float) -> float:
    return grid[grid.index(value) + 1]


def test_d_k_slider_moves_the_histograms_and_readouts(app_page: AppPage) -> None:
    """ArrowRight, End and Home on d_k redraw both histograms and the std readouts."""
    app_page.open()
    before = app_page.histogram("raw_histogram")
    slider = app_page.page.get_by_role("slider", name=D_K, exact=True)

    app_page.press(D_K, "ArrowRight")
    d_k = _after(D_K_GRID, 64)
    app_page.wait_histograms(d_k)
    app_page.wait_url(d_k=str(d_k))
    assert f"d_k={d_k}" in app_page.page.url, "Playwright should see the rewritten URL too"
    after = app_page.histogram("raw_histogram")
    assert after["right"] > before["right"], "the raw histogram should widen with d_k"
    assert after["std"] == pytest.approx(math.sqrt(d_k), rel=0.05)
    assert app_page.histogram("scaled_histogram")["std"] == pytest.approx(1.0, rel=0.05)
    expect(app_page.page.get_by_test_id("std-raw")).to_contain_text(f"√d_k = {math.sqrt(d_k):.1f}")
    # Assistive technology reads the value, not the slider's position index.
    expect(slider).to_have_attribute("aria-valuetext", str(d_k))

    app_page.press(D_K, "End")
    app_page.wait_histograms(1024)
    app_page.wait_url(d_k="1024")
    assert app_page.histogram("raw_histogram")["std"] == pytest.approx(32.0, rel=0.05)
    expect(app_page.page.get_by_test_id("std-raw").locator(".value")).to_have_text("32.0")
    expect(app_page.page.get_by_test_id("std-scaled").locator(".value")).to_have_text("1.0")

    app_page.press(D_K, "Home")
    app_page.wait_histograms(1)
    app_page.wait_url(d_k="1")
    # At d_k = 1 a dot product is a product of two normals, heavy-tailed: the bars (±4.5
    # std) leave out enough tail to bias their std, so check the extent and the readout.
    smallest = app_page.histogram("raw_histogram")
    assert (smallest["left"], smallest["right"]) == pytest.approx((-4.5, 4.5))
    expect(app_page.page.get_by_test_id("std-raw").locator(".value")).to_have_text("1.0")
    expect(app_page.page.get_by_test_id("std-raw")).to_contain_text("√d_k = 1.0")


def test_temperature_slider_changes_only_the_weights(app_page: AppPage) -> None:
    """Temperature reshapes the weights (flatter when hotter) and leaves the scores alone."""
    app_page.open()
    before = app_page.heatmap()
    for column in ("weight", "raw", "scaled"):
        app_page.mark(column)

    app_page.press(TEMPERATURE, "ArrowRight")
    app_page.wait_changed("weight")
    app_page.wait_url(temperature=f"{_after(TEMPERATURE_GRID, 1.0):g}")
    warmer = app_page.heatmap()
    assert warmer["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)
    assert warmer["sumSquares"] < before["sumSquares"], "a hotter softmax should be flatter"
    assert warmer["max"] < before["max"]
    # Only the weights depend on temperature: the score images must not be resent.
    assert app_page.is_marked("raw") and app_page.is_marked("scaled")

    app_page.mark("weight")
    app_page.press(TEMPERATURE, "End")
    app_page.wait_changed("weight")
    app_page.wait_url(temperature="20")
    expect(app_page.page.get_by_test_id("verdict")).to_contain_text("nearly uniform")
    hottest = app_page.heatmap()
    assert hottest["max"] < warmer["max"]

    app_page.mark("weight")
    app_page.press(TEMPERATURE, "Home")
    app_page.wait_changed("weight")
    app_page.wait_url(temperature="0.05")
    expect(app_page.page.get_by_test_id("verdict")).to_contain_text("one-hot")
    coldest = app_page.heatmap()
    assert coldest["max"] > 0.99
    assert coldest["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)


def test_sequence_length_slider_changes_the_image_shape(app_page: AppPage) -> None:
    """n resizes all three images, the glyph's extent and the axes together."""
    app_page.open()
    app_page.mark("weight")

    app_page.press(N, "ArrowRight")
    n = _after(N_GRID, 32)
    app_page.wait_changed("weight")
    app_page.wait_url(n=str(n))
    heatmap = app_page.heatmap()
    assert heatmap["shapes"] == [[n, n]] * 3
    assert (heatmap["dw"], heatmap["dh"]) == (n, n)
    assert heatmap["xRange"] == [0, n]
    assert heatmap["yRange"] == [n, 0]
    assert heatmap["rowSums"] == pytest.approx([1.0] * n, abs=1e-4)

    app_page.mark("weight")
    app_page.press(N, "Home")
    app_page.wait_changed("weight")
    app_page.wait_url(n="2")
    heatmap = app_page.heatmap()
    assert heatmap["shapes"] == [[2, 2]] * 3
    assert heatmap["rowSums"] == pytest.approx([1.0, 1.0], abs=1e-6)
    expect(app_page.page.get_by_test_id("entropy")).to_contain_text(f"uniform {math.log(2):.2f}")


ZOOM_JS = """(keys) => {
  const figure = sdpaFigure('heatmap');
  figure.x_range.setv({start: 0, end: keys});
  figure.y_range.setv({start: keys, end: 0});
}"""
"""Zoom the heatmap onto its first ``keys`` keys and queries, as a box zoom would."""


def test_a_zoom_stays_while_d_k_moves_and_resets_with_n(app_page: AppPage) -> None:
    app_page.open()
    app_page.page.evaluate(ZOOM_JS, 8)
    app_page.mark("raw")
    app_page.press(D_K, "ArrowRight")
    d_k = _after(D_K_GRID, 64)
    app_page.wait_changed("raw")
    app_page.wait_histograms(d_k)
    heatmap = app_page.heatmap()
    assert (heatmap["xRange"], heatmap["yRange"]) == ([0, 8], [8, 0])

    app_page.mark("raw")
    app_page.press(N, "ArrowRight")
    n = _after(N_GRID, 32)
    app_page.wait_changed("raw")
    app_page.wait_url(n=str(n))
    heatmap = app_page.heatmap()
    assert (heatmap["xRange"], heatmap["yRange"]) == ([0, n], [n, 0])


def test_the_exact_d_k_box_and_the_d_k_slider_follow_each_other(app_page: AppPage) -> None:
    app_page.open()
    box = app_page.page.get_by_role("spinbutton", name="exact d_k")
    slider = app_page.page.get_by_role("slider", name=D_K, exact=True)
    app_page.press(D_K, "ArrowRight")
    d_k = _after(D_K_GRID, 64)
    app_page.wait_histograms(d_k)
    expect(box).to_have_value(str(d_k))
    app_page.wait_url(d_k=str(d_k))

    box.fill("100")
    box.press("Enter")
    app_page.wait_histograms(100)
    app_page.wait_url(d_k="100")
    # The slider sits at the position nearest 100 and says the exact value it stands for.
    position = D_K_GRID.index(nearest_on_grid(100, D_K_GRID))
    expect(slider).to_have_value(str(position))
    expect(slider).to_have_attribute("aria-valuetext", "100")
    expect(box).to_have_value("100")
