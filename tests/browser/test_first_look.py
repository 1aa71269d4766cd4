"""Issue 49 on the served page, as a new student sees it at 1280, in an 800×600 iframe and at
400 px, light and dark: the heatmap's cells are square, the lesson starts under its button,
the heatmap's toolbar is its save button alone, and the page's head names it
(tests/export/test_first_look.py checks the offline file alike)."""

from __future__ import annotations

import re
import urllib.request
from typing import TYPE_CHECKING

import pytest
from conftest import LESSON_JS
from first_look_support import (
    LESSON_GAP_JS,
    SCHEMES,
    SIZES,
    assert_head,
    assert_head_markup,
    assert_lesson_follows,
    assert_one_save_button,
    assert_square_and_in_view,
    heatmap,
)

from app.served.components.first_screen import GATE_LABEL

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser


def open_at(app_page: AppPage, size: str, scheme: str, extra: str = "") -> None:
    viewport, query = SIZES[size]
    app_page.page.set_viewport_size(viewport)
    app_page.page.emulate_media(color_scheme=scheme)
    joined = f"{query}&{extra}" if query and extra else query or (f"?{extra}" if extra else "")
    app_page.open(joined, lesson=False)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_heatmap_cells_are_square(app_page: AppPage, size: str, scheme: str) -> None:
    """The plotting frame is square and the figure fits the window; where the plots are
    stacked or the window is short, the heatmap and the raw histogram share the first
    screen."""
    open_at(app_page, size, scheme)
    assert_square_and_in_view(heatmap(app_page.page), size, first_screen=True)


@pytest.mark.parametrize("query", ["n=128&causal=true", "n=32&causal=true&view=raw"])
@pytest.mark.parametrize("size", ["1280", "400"])
def test_a_large_or_masked_matrix_is_square_too(app_page: AppPage, size: str, query: str) -> None:
    """n = 128 and the causal mask: the frame stays square, so the mask's edge is the
    matrix's diagonal."""
    open_at(app_page, size, "light", query)
    shown = heatmap(app_page.page)
    assert shown["n"] == int(re.search(r"n=(\d+)", query).group(1))  # type: ignore[union-attr]
    assert_square_and_in_view(shown, size, first_screen=False)


def test_the_frame_follows_the_window(app_page: AppPage) -> None:
    """Narrowed to 400 px and widened again, the frame is square and fits at each width."""
    open_at(app_page, "1280", "light")
    wide = heatmap(app_page.page)
    app_page.page.set_viewport_size(SIZES["400"][0])
    narrow = heatmap(app_page.page)
    assert_square_and_in_view(narrow, "400 after 1280", first_screen=False)
    assert narrow["frame"]["width"] < wide["frame"]["width"]
    app_page.page.set_viewport_size(SIZES["1280"][0])
    again = heatmap(app_page.page)
    assert_square_and_in_view(again, "1280 again", first_screen=False)
    assert abs(again["frame"]["width"] - wide["frame"]["width"]) <= 2


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_lesson_starts_under_its_button(app_page: AppPage, size: str, scheme: str) -> None:
    """Pressed, the lesson's button gives way to the lesson right there, not below the
    controls' card (at 1280, More controls open, that card ran ~500 px further down); beside
    the plots the card stays in view as the lesson scrolls by, no taller than the page's
    visible part."""
    open_at(app_page, size, scheme)
    page = app_page.page
    page.get_by_role("button", name=GATE_LABEL).click()
    page.wait_for_function(LESSON_JS)
    assert_lesson_follows(page.evaluate(LESSON_GAP_JS))
    if size == "1280":
        more = page.get_by_role("button", name="More controls")
        assert more.get_attribute("aria-expanded") == "true"
        heading = page.get_by_text("Why it matters", exact=False).first
        heading.evaluate("(element) => element.scrollIntoView({block: 'start'})")
        scrolled = page.evaluate(LESSON_GAP_JS)
        card, viewport = scrolled["panel"], scrolled["viewport"]
        assert scrolled["first"]["top"] < 0, "the page has scrolled into the lesson"
        assert card["top"] >= 0 and card["bottom"] <= viewport["height"], card
        assert card["right"] <= scrolled["first"]["left"], "the card is beside the lesson"


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_heatmap_toolbar_is_its_save_button(app_page: AppPage, size: str, scheme: str) -> None:
    """Save alone, no logo, right of the colour bar: nothing over the title at 400 px, one
    Tab stop; hovering a cell still shows its numbers."""
    open_at(app_page, size, scheme)
    assert_one_save_button(heatmap(app_page.page), size)
    hover = app_page.page.evaluate(
        "() => sdpaFigure('heatmap').toolbar.tools.some((tool) => tool.type === 'HoverTool')"
    )
    assert hover


@pytest.mark.parametrize("query", ["", "?embed=true"], ids=["page", "embed"])
def test_the_head_names_the_page(app_page: AppPage, query: str) -> None:
    """The served HTML's title, description and viewport are the offline file's
    (app/page/head.py), embedded too (it was "Panel Application", without a viewport)."""
    with urllib.request.urlopen(app_page.server.url + query, timeout=30) as response:
        assert_head_markup(response.read().decode("utf-8"))


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_head_holds_in_the_browser(app_page: AppPage, size: str, scheme: str) -> None:
    """As the page runs, its head still says what app/page/head.py says."""
    open_at(app_page, size, scheme)
    assert_head(app_page.page)
