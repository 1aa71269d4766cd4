"""The first screen of an embedded or narrow page is the experiment: sliders and the plots
they move, together, without scrolling; "More controls" and ``?controls=`` (issue 15)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from app.simulation.spec import CONTROL_BY_NAME, D_K_GRID

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

SIZES = [{"width": 800, "height": 600}, {"width": 400, "height": 700}]

CANVAS_JS = """(name) => {
  const view = Bokeh.index.find_one(sdpaFigure(name));
  const box = view.canvas_view.el.getBoundingClientRect();
  return {left: box.left, right: box.right, top: box.top, bottom: box.bottom};
}"""
"""Where figure ``name``'s canvas is in the viewport, as it is (no scrolling)."""

SCROLL_JS = """() => {
  const scrolled = [document.scrollingElement, ...document.querySelectorAll('*')]
    .filter((element) => element && element.scrollTop > 0);
  return scrolled.length;
}"""

D_K = CONTROL_BY_NAME["d_k"].label
TEMPERATURE = CONTROL_BY_NAME["temperature"].label
N = CONTROL_BY_NAME["n"].label
SCALED = CONTROL_BY_NAME["scaled"].label
CAUSAL = CONTROL_BY_NAME["causal"].label


def inside(box: dict[str, float], size: dict[str, int]) -> bool:
    return (
        box["left"] >= -1
        and box["top"] >= -1
        and box["right"] <= size["width"] + 1
        and box["bottom"] <= size["height"] + 1
    )


def assert_experiment_in_first_viewport(app_page: AppPage, size: dict[str, int]) -> None:
    page = app_page.page
    assert page.evaluate(SCROLL_JS) == 0, "nothing may have scrolled"
    for name in ("heatmap", "raw_histogram"):
        box: dict[str, Any] = page.evaluate(CANVAS_JS, name)
        assert inside(box, size), f"{name} is not inside {size}: {box}"
    slider = page.get_by_role("slider", name=D_K, exact=True).bounding_box()
    assert slider is not None
    edges = {
        "left": slider["x"],
        "top": slider["y"],
        "right": slider["x"] + slider["width"],
        "bottom": slider["y"] + slider["height"],
    }
    assert inside(edges, size), f"the d_k slider is not inside {size}: {edges}"


@pytest.mark.parametrize(
    ("query", "size"),
    [("?embed=true", SIZES[0]), ("?embed=true", SIZES[1]), ("", SIZES[1])],
    # A full page 800 px wide or more has the wide layout (test_layout.py).
    ids=["embed-800x600", "embed-400x700", "page-400x700"],
)
def test_slider_and_plots_share_the_first_screen(
    app_page: AppPage, query: str, size: dict[str, int]
) -> None:
    page = app_page.page
    page.set_viewport_size(size)
    app_page.open(query, lesson=False)
    assert_experiment_in_first_viewport(app_page, size)
    more = page.get_by_role("button", name="More controls")
    expect(more).to_have_attribute("aria-expanded", "false")
    for name in (D_K, TEMPERATURE, N):
        expect(page.get_by_role("slider", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("switch", name=SCALED)).to_be_visible()
    expect(page.get_by_role("group", name="preset scene")).to_be_hidden()
    # The d_k slider moves the heatmap, from the keyboard, with both in view.
    app_page.mark("raw")
    app_page.press(D_K, "ArrowRight")
    app_page.wait_changed("raw")
    app_page.wait_histograms(D_K_GRID[D_K_GRID.index(64) + 1])
    assert_experiment_in_first_viewport(app_page, size)


def test_more_controls_open_in_place_and_work(app_page: AppPage) -> None:
    page = app_page.page
    page.set_viewport_size(SIZES[0])
    app_page.open("?embed=true", lesson=False)
    more = page.get_by_role("button", name="More controls")
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    causal = page.get_by_role("switch", name=CAUSAL)
    expect(causal).to_be_visible()
    for label in ("preset scene", "exact d_k", "seed"):
        expect(page.get_by_text(label, exact=True).first).to_be_visible()
    expect(page.get_by_role("button", name="Copy link")).to_be_visible()
    app_page.mark("weight")
    causal.click()
    app_page.wait_changed("weight")
    app_page.wait_url(causal="true")
    assert app_page.heatmap("weight")["nanUpper"] > 0, "the causal mask shows"
    more.click()
    expect(more).to_have_attribute("aria-expanded", "false")
    expect(causal).to_be_hidden()


def test_controls_parameter_shows_exactly_those_controls(app_page: AppPage) -> None:
    page = app_page.page
    page.set_viewport_size(SIZES[0])
    app_page.open("?embed=true&controls=d_k,causal,nonsense&d_k=8", lesson=False)
    expect(page.get_by_role("slider")).to_have_count(1)
    expect(page.get_by_role("slider", name=D_K, exact=True)).to_have_attribute(
        "aria-valuetext", "8"
    )
    expect(page.get_by_role("switch")).to_have_count(1)
    expect(page.get_by_role("switch", name=CAUSAL)).to_be_visible()
    expect(page.get_by_role("button", name="More controls")).to_have_count(0)
    notice = page.locator(".query-notice")
    expect(notice).to_contain_text("nonsense")
    # The controls not shown keep their URL values, and the URL keeps the parameter.
    app_page.wait_url(d_k="8", controls="d_k,causal,nonsense")
    # The notice's close button is named and takes it away.
    page.get_by_role("button", name="Close").click()
    expect(notice).to_be_hidden()
