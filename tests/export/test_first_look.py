"""Issue 49 on the offline file, as a new student sees it at 1280, in an 800×600 iframe and at
400 px, light and dark: the heatmap's cells are square, the lesson starts under the text
above it, the heatmap's toolbar is its save button alone, and the file's head names it and
asks for no icon (tests/browser/test_first_look.py checks the served page alike)."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
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

from app.page.head import ICON

from .conftest import READY, OfflinePage


def open_at(open_export: Any, size: str, scheme: str, extra: str = "") -> OfflinePage:
    viewport, query = SIZES[size]
    joined = f"{query}&{extra}" if query and extra else query or (f"?{extra}" if extra else "")
    return open_export(joined, viewport["width"], viewport["height"], scheme)


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_heatmap_cells_are_square(open_export: Any, size: str, scheme: str) -> None:
    opened = open_at(open_export, size, scheme)
    assert_square_and_in_view(heatmap(opened.page), size, first_screen=True)


@pytest.mark.browser
@pytest.mark.parametrize("query", ["n=128&causal=true", "n=32&causal=true&view=raw"])
@pytest.mark.parametrize("size", ["1280", "400"])
def test_a_large_or_masked_matrix_is_square_too(open_export: Any, size: str, query: str) -> None:
    opened = open_at(open_export, size, "light", query)
    shown = heatmap(opened.page)
    assert shown["n"] == int(re.search(r"n=(\d+)", query).group(1))  # type: ignore[union-attr]
    assert_square_and_in_view(shown, size, first_screen=False)


@pytest.mark.browser
def test_the_frame_follows_the_window(open_export: Any) -> None:
    opened = open_at(open_export, "1280", "light")
    wide = heatmap(opened.page)
    opened.page.set_viewport_size(SIZES["400"][0])
    narrow = heatmap(opened.page)
    assert_square_and_in_view(narrow, "400 after 1280", first_screen=False)
    assert narrow["frame"]["width"] < wide["frame"]["width"]
    opened.page.set_viewport_size(SIZES["1280"][0])
    again = heatmap(opened.page)
    assert_square_and_in_view(again, "1280 again", first_screen=False)
    assert abs(again["frame"]["width"] - wide["frame"]["width"]) <= 2


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_lesson_starts_under_the_text_above_it(
    open_export: Any, size: str, scheme: str
) -> None:
    """The intro and the lesson follow the plots in their column: no empty band beside the
    opened "More controls" (1280); beside the plots the controls stay in view as the lesson
    scrolls by, no taller than the window."""
    opened = open_at(open_export, size, scheme)
    page = opened.page
    assert_lesson_follows(page.evaluate(LESSON_GAP_JS))
    if size == "1280":
        assert page.get_by_role("button", name="More controls").get_attribute("aria-expanded") == (
            "true"
        )
        heading = page.get_by_text("Why it matters", exact=False).first
        heading.evaluate("(element) => element.scrollIntoView({block: 'start'})")
        scrolled = page.evaluate(LESSON_GAP_JS)
        card, viewport = scrolled["panel"], scrolled["viewport"]
        assert scrolled["first"]["top"] < 0, "the page has scrolled into the lesson"
        assert card["top"] >= 0 and card["bottom"] <= viewport["height"], card
        assert card["right"] <= scrolled["first"]["left"], "the card is beside the lesson"


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_heatmap_toolbar_is_its_save_button(open_export: Any, size: str, scheme: str) -> None:
    opened = open_at(open_export, size, scheme)
    assert_one_save_button(heatmap(opened.page), size)


def test_the_head_names_the_file(html: str) -> None:
    """The served page's words (app/page/head.py) and an inline icon."""
    head = assert_head_markup(html)
    assert head.links == [{"rel": "icon", "href": ICON}]
    assert ICON.startswith("data:image/svg+xml,") and "<" not in ICON and '"' not in ICON
    assert unquote(ICON).startswith("data:image/svg+xml,<svg ")


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_the_head_holds_in_the_browser(open_export: Any, size: str, scheme: str) -> None:
    opened = open_at(open_export, size, scheme)
    assert assert_head(opened.page)["icon"] == ICON


@pytest.fixture
def served_folder(exported_file: Path) -> Iterator[tuple[str, list[str]]]:
    """The exported file's folder on a loopback HTTP server (a course site): its address
    and the paths asked for."""
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            asked.append(self.path)

    handler = functools.partial(Handler, directory=str(exported_file.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/{exported_file.name}", asked
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.mark.browser
def test_the_file_on_a_site_asks_for_nothing_else(
    chromium: Any, served_folder: tuple[str, list[str]]
) -> None:
    """Uploaded to a course site, the file asks its server for itself alone: no
    /favicon.ico (the browser asked for it, four times, each a 404 in the console)."""
    address, asked = served_folder
    context = chromium.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    page.goto(address)
    page.wait_for_function(READY)
    # The browser asks for an icon once the page has loaded: give it the time to.
    page.wait_for_timeout(1000)
    context.close()
    assert asked == [f"/{address.rsplit('/', 1)[1]}"], asked
    assert errors == []
