"""Embedding: the compact iframe layout, share links, and the example course page."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import PAGE_TIMEOUT_MS
from playwright.sync_api import expect

from app.served.share import SHARE_TEXTS

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

IFRAME_READY_JS = """(frame) => {
  const inner = frame.contentWindow;
  const doc = inner.Bokeh && inner.Bokeh.documents[0];
  if (!doc || !doc.is_idle || !inner.sdpaDrawn() || !(inner.sdpaDrawn().frames > 0)) return false;
  const {data} = inner.sdpaHeatmap();
  return data.weight[0].length > 0;
}"""


def test_embed_layout_has_no_header_and_keeps_the_url_state(app_page: AppPage) -> None:
    """``?embed=true`` drops the template header; other parameters still apply."""
    page = app_page.page
    page.set_viewport_size({"width": 800, "height": 600})
    app_page.open("?embed=true&d_k=1024&scaled=false")
    # The title is left to assistive technology: a visually hidden h1, no header.
    title = page.get_by_text("Scaled Dot-Product Attention: Score Matrix")
    expect(title).to_have_count(1)
    expect(page.get_by_role("heading", level=1)).to_have_text(title.inner_text())
    box = title.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    expect(page.get_by_role("button", name="Toggle theme")).to_have_count(0)
    expect(page.get_by_role("slider", name="d_k (key dimension)", exact=True)).to_have_attribute(
        "aria-valuetext", "1024"
    )
    expect(page.get_by_test_id("verdict")).to_contain_text("one-hot")
    # The controls come first and the heatmap starts within the 600-px-high frame.
    heatmap_top = page.evaluate(
        "() => Bokeh.index.find_one(sdpaFigure('heatmap')).el.getBoundingClientRect().top"
    )
    assert heatmap_top < 600


COPIED, BY_HAND = SHARE_TEXTS["copied"], SHARE_TEXTS["by_hand"]
"""What the share part says once the page has tried the clipboard."""


def test_copy_link_and_embed_code(app_page: AppPage) -> None:
    """The share box receives a link to the current scene and an iframe snippet."""
    app_page.open("?d_k=256&temperature=2")
    page = app_page.page
    box = page.get_by_label("link or embed code")
    page.get_by_role("button", name="Copy link").click()
    expect(box).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/main\?"))
    # The page says whether the clipboard took it (headless Chromium may refuse it).
    said = page.get_by_role("status").filter(has_text=re.compile("clipboard"))
    expect(said).to_have_text(re.compile(f"^({re.escape(COPIED)}|{re.escape(BY_HAND)})$"))
    query = parse_qs(urlsplit(box.input_value()).query)
    assert query["d_k"] == ["256"] and query["temperature"] == ["2"]
    assert "embed" not in query

    page.get_by_role("button", name="Copy embed code").click()
    expect(box).to_have_value(re.compile(r"^<iframe src="))
    snippet = box.input_value()
    assert snippet.startswith('<iframe src="') and snippet.endswith("</iframe>")
    src = html.unescape(snippet.split('"')[1])
    assert parse_qs(urlsplit(src).query)["embed"] == ["true"]
    assert parse_qs(urlsplit(src).query)["d_k"] == ["256"]


FIRST_SCREEN_IN_FRAME_JS = """() => {
  const doc = window.Bokeh && Bokeh.documents[0];
  if (!doc || !doc.is_idle || !sdpaDrawn() || !(sdpaDrawn().frames > 0)) return null;
  const box = (name) => {
    const view = Bokeh.index.find_one(sdpaFigure(name));
    const rect = view && view.canvas_view.el.getBoundingClientRect();
    return rect && {left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom};
  };
  const scrolled = [document.scrollingElement, ...document.querySelectorAll('*')]
    .some((element) => element && element.scrollTop > 0);
  return {heatmap: box('heatmap'), raw: box('raw_histogram'), scrolled,
          width: window.innerWidth, height: window.innerHeight};
}"""
"""Inside an iframe: where the heatmap and the raw histogram are drawn, and the frame's size."""


def test_copied_embed_code_shows_the_experiment_first(app_page: AppPage) -> None:
    """The snippet **Copy embed code** writes, pasted into a course page, frames a first
    screen that is the experiment: the sliders, the heatmap and the raw histogram."""
    app_page.open("?d_k=256", lesson=False)
    page = app_page.page
    app_page.open_more()
    page.get_by_role("button", name="Copy embed code").click()
    box = page.get_by_label("link or embed code")
    expect(box).to_have_value(re.compile(r"^<iframe src="))
    snippet = box.input_value()
    assert 'width="800" height="600"' in snippet, snippet

    page.set_content(f"<!doctype html><html><body style='margin:0'>{snippet}</body></html>")
    frame = page.frame_locator("iframe")
    slider = frame.get_by_role("slider", name="d_k (key dimension)", exact=True)
    # A whole page loads in the frame first: on a loaded machine that takes longer than
    # expect's own 5 s.
    expect(slider).to_have_attribute("aria-valuetext", "256", timeout=PAGE_TIMEOUT_MS)
    inner = next(f for f in page.frames if f is not page.main_frame)
    inner.wait_for_function(FIRST_SCREEN_IN_FRAME_JS)
    layout = inner.evaluate(FIRST_SCREEN_IN_FRAME_JS)
    assert (layout["width"], layout["height"]) == (800, 600)
    assert not layout["scrolled"]
    for name in ("heatmap", "raw"):
        drawn = layout[name]
        assert drawn["top"] >= 0 and drawn["bottom"] <= 601, f"{name} outside 800×600: {drawn}"
        assert drawn["left"] >= 0 and drawn["right"] <= 801, f"{name} outside 800×600: {drawn}"
    handle = slider.bounding_box()
    assert handle is not None and handle["y"] + handle["height"] <= 600


def test_course_page_embeds_the_app_at_a_preset_scene(app_page: AppPage) -> None:
    """static/course-page.html, served by the app's server, shows the app in an iframe."""
    page = app_page.page
    response = page.goto(app_page.server.base_url + "/assets/course-page.html")
    assert response is not None and response.status == 200
    frame = page.locator("iframe.simulation")
    expect(frame).to_be_visible()
    page.wait_for_function(IFRAME_READY_JS, arg=frame.element_handle())
    inner = page.frame_locator("iframe.simulation")
    expect(inner.get_by_test_id("verdict")).to_contain_text("one-hot")


PARAGRAPH_LINES_JS = """() => {
  const lines = [];
  const visit = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim() || !node.parentElement.closest('p')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const box of range.getClientRects()) {
        if (box.width > 0 && box.height > 0) {
          const text = node.textContent.trim().slice(0, 40);
          lines.push({top: box.top, bottom: box.bottom, text});
        }
      }
    }
    for (const element of root.querySelectorAll('*')) {
      if (element.shadowRoot) visit(element.shadowRoot);
    }
  };
  visit(document.body);
  return {height: window.innerHeight, lines};
}"""
"""Inside a frame: every line of paragraph text (shadow roots too) and the frame's height."""


@pytest.mark.parametrize("width", [1280, 820, 400])
def test_the_course_page_frame_ends_between_lines(app_page: AppPage, width: int) -> None:
    """The example course page's iframe does not end through a line of a paragraph inside
    the app: it cuts below the first screen's last sentence (or through figures)."""
    page = app_page.page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(app_page.server.base_url + "/assets/course-page.html")
    frame = page.locator("iframe.simulation")
    page.wait_for_function(IFRAME_READY_JS, arg=frame.element_handle())
    inner = next(f for f in page.frames if f is not page.main_frame)
    inner.wait_for_function("() => document.fonts.status === 'loaded'")
    shown = inner.evaluate(PARAGRAPH_LINES_JS)
    height = shown["height"]
    assert shown["lines"], "the app's paragraphs are in the frame"
    cut = [line for line in shown["lines"] if line["top"] < height < line["bottom"]]
    assert cut == [], f"the frame ({height} px high) ends through {cut}"
