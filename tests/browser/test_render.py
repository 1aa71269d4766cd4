"""Both plots render in the browser with the data the lesson is about."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

WHITE = [255, 255, 255, 255]

FIGURE_BOX_JS = """(name) => Bokeh.index.find_one(sdpaFigure(name))
  .el.getBoundingClientRect().toJSON()"""


def test_heatmap_draws_attention_weights_whose_rows_sum_to_one(app_page: AppPage) -> None:
    """The default page paints the 32×32 float32 weights, every row summing to 1."""
    app_page.open()
    heatmap = app_page.heatmap()

    assert heatmap["field"] == "weight"
    # One image glyph draws the "shown" column, which holds the view's own column's image.
    assert heatmap["glyphField"] == "shown"
    assert heatmap["columns"] == ["dh", "dw", "raw", "scaled", "shown", "weight", "x", "y"]
    assert heatmap["float32"], "the image should travel as binary float32"
    assert (heatmap["rows"], heatmap["cols"]) == (32, 32)
    assert heatmap["shapes"] == [[32, 32]] * 3
    assert heatmap["nanUpper"] == heatmap["nanLowerOrDiagonal"] == 0
    assert heatmap["rowSums"] == pytest.approx([1.0] * 32, abs=1e-4)
    # Weights are drawn on a fixed [0, 1] colour bar, whatever their current maximum.
    assert (heatmap["mapperLow"], heatmap["mapperHigh"]) == (0, 1)
    # Query 0 at the top: the y axis runs from n down to 0.
    assert heatmap["yRange"] == [32, 0]
    assert heatmap["xRange"] == [0, 32]

    box = app_page.page.evaluate(FIGURE_BOX_JS, "heatmap")
    assert box["width"] > 280 and box["height"] > 300, f"heatmap is {box}"
    # The centre cell is a Viridis colour, so the canvas was painted, not left blank.
    assert app_page.centre_pixel("heatmap") != WHITE

    assert "Scaled Dot-Product Attention" in app_page.page.title()
    app_page.wait_url(
        d_k="64", temperature="1", n="32", scaled="true", view="weights", causal="false", seed="0"
    )


def test_histograms_and_readouts_match_the_normal_laws(app_page: AppPage) -> None:
    """At d_k = 64 the raw bars have std ≈ √64 = 8 under Normal(0, 64), the scaled ones ≈ 1."""
    app_page.open()
    raw = app_page.histogram("raw_histogram")
    scaled = app_page.histogram("scaled_histogram")

    assert raw["bins"] >= 30
    assert raw["mass"] == pytest.approx(1.0, abs=0.01), "bars should be a density"
    assert raw["std"] == pytest.approx(8.0, rel=0.05)
    assert raw["mean"] == pytest.approx(0.0, abs=0.5)
    assert raw["curvePeak"] == pytest.approx(1 / math.sqrt(2 * math.pi * 64), rel=0.01)
    assert "d_k = 64" in raw["title"]
    assert scaled["mass"] == pytest.approx(1.0, abs=0.01)
    assert scaled["std"] == pytest.approx(1.0, rel=0.05)
    assert scaled["curvePeak"] == pytest.approx(1 / math.sqrt(2 * math.pi), rel=0.01)
    for name in ("raw_histogram", "scaled_histogram"):
        box = app_page.page.evaluate(FIGURE_BOX_JS, name)
        assert box["width"] > 250 and box["height"] > 150, f"{name} is {box}"
        # The centre of each frame holds the tallest bar, at 0, in the bar colour.
        assert app_page.centre_pixel(name) != WHITE, f"{name} looks blank at its centre"

    assert app_page.readout("std-raw") == "8.0"
    assert app_page.readout("std-scaled") == "1.0"
    assert 1 / 32 < float(app_page.readout("max-weight")) < 0.9
    assert 0 < float(app_page.readout("entropy")) < math.log(32)
    assert "useful range" in app_page.readout("verdict")
    expect(app_page.page.get_by_text("Some link values were adjusted")).to_be_hidden()


def test_page_problem_collector_catches_uncaught_errors(app_page: AppPage) -> None:
    """The guard that fails browser tests on page errors does see an uncaught exception."""
    app_page.page.set_content("<p>probe page</p>")
    with app_page.page.expect_event("pageerror") as error:
        app_page.page.evaluate("() => { setTimeout(() => { throw new Error('probe'); }, 0); }")
    assert "probe" in str(error.value)
    seen = [problem for problem in app_page.problems if "probe" in problem]
    assert seen, f"the uncaught error was not recorded: {app_page.problems}"
    # This test provoked the error itself; leave the guard clean for the hook.
    app_page.problems.clear()


def test_served_page_skips_unchanged_bokeh_stylesheet_writes(app_page: AppPage) -> None:
    """app/compat.py's UNCHANGED_STYLESHEETS_JS runs once the session's document is drawn."""
    app_page.open()
    app_page.page.wait_for_function(
        "() => Bokeh.require('core/dom').InlineStyleSheet.prototype._update.skipsUnchanged === true"
    )
    assert app_page.centre_pixel("heatmap") != WHITE
