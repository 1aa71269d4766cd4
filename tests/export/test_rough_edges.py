"""Issue 26 on the offline page: sliders that stay put, a row outline that leaves the row's
cells in view, embed without the header, presets that fit the file, and lesson words that
say when they cite a d_k the file lacks."""

from __future__ import annotations

import re

import pytest
from browser_support import ROW_CELL_PIXELS_JS, assert_bright_cell_in_full_view

from app.page.lesson import BEYOND_REACH, note_beyond_reach
from app.page.views.heatmap import ROW_OUTLINE_COLOUR
from app.simulation.spec import CONTROLS, PRESET_LABEL, TITLE

from .conftest import OfflinePage

LABEL = {control.name: control.label for control in CONTROLS}
FIRST_SLIDERS = [
    control.name
    for control in CONTROLS
    if control.offline and control.first_screen and control.widget == "slider"
]
"""The file's first-screen sliders."""

BOXES_JS = """() => [...document.querySelectorAll('#sdpa-first > [data-widget]')].map((cell) => {
  const bar = cell.querySelector('input[type=range]');
  const box = (bar || cell).getBoundingClientRect();
  return [cell.dataset.widget, box.x, box.y, box.width, box.height];
})"""
"""Each first-screen control's bar (a slider's track, else its cell): x, y, width, height."""


def boxes(opened: OfflinePage) -> list[list]:
    return opened.page.evaluate(BOXES_JS)


@pytest.mark.browser
@pytest.mark.parametrize(("query", "width", "height"), [("?embed=true", 800, 600), ("", 400, 700)])
def test_first_screen_sliders_do_not_move_across_their_range(
    open_export, query: str, width: int, height: int
) -> None:
    """Every position of every first-screen slider, by keyboard: no slider's bar moves (the
    label above it keeps its width whatever value it shows)."""
    opened = open_export(query, width=width, height=height)
    page = opened.page
    still = boxes(opened)
    assert [row[0] for row in still][: len(FIRST_SLIDERS)] == FIRST_SLIDERS
    for name in FIRST_SLIDERS:
        slider = page.get_by_role("slider", name=LABEL[name], exact=True)
        positions = int(slider.get_attribute("max"))
        count = opened.updates()
        slider.press("Home")
        opened.wait_for_update_after(count)
        assert boxes(opened) == still, name
        for _ in range(positions):
            count = opened.updates()
            slider.press("ArrowRight")
            opened.wait_for_update_after(count)
            assert boxes(opened) == still, (name, opened.snapshot()["state"][name])
        assert int(slider.input_value()) == positions


PAINTED_JS = "(figure) => Bokeh.index.find_one(figure).has_finished()"


@pytest.mark.browser
@pytest.mark.parametrize(
    ("query", "width", "height"),
    [("", 1280, 800), ("&embed=true", 800, 600), ("", 400, 700)],
    ids=["1280-wide", "embedded-800x600", "400-wide"],
)
def test_the_row_outline_leaves_a_one_hot_rows_bright_cell_in_view(
    open_export, query: str, width: int, height: int
) -> None:
    """The scale off at the file's largest d_k, n = 32 (the collapse preset): row 0 is
    one-hot, and every pixel of its bright cell on screen is the cell's colour, none the
    outline's dash (the same figures.js draws it as on the served page)."""
    opened = open_export(f"?preset=collapse{query}", width=width, height=height)
    page = opened.page
    heatmap = page.evaluate_handle("SdpaExport.page.models.heatmap")
    page.wait_for_function(PAINTED_JS, arg=heatmap)
    cell = page.evaluate(ROW_CELL_PIXELS_JS, [heatmap, 0])
    assert cell["weight"] > 0.99, cell["weight"]
    assert_bright_cell_in_full_view(cell, ROW_OUTLINE_COLOUR)


@pytest.mark.browser
def test_embedded_the_file_drops_its_header_as_the_served_page_does(open_export) -> None:
    full = open_export("", width=800, height=600)
    assert full.page.get_by_role("heading", name=TITLE, exact=True).is_visible()
    embedded = open_export("?embed=true", width=800, height=600)
    # Left to assistive technology, as on the served page: a visually hidden h1.
    heading = embedded.page.get_by_role("heading", name=TITLE, exact=True, level=1)
    assert heading.count() == 1
    box = heading.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    # The controls come first.
    top = embedded.page.evaluate(
        "document.querySelector('.sdpa-control-panel').getBoundingClientRect().top"
    )
    assert top < 20


@pytest.mark.browser
def test_the_collapse_preset_fits_the_file_without_a_notice(open_export) -> None:
    opened = open_export("?preset=collapse", width=1280, height=800)
    snapshot = opened.snapshot()
    assert (snapshot["preset"], snapshot["state"]["d_k"], snapshot["state"]["scaled"]) == (
        "collapse",
        512,
        False,
    )
    assert opened.model("notice", "m.visible") is False
    scene = opened.model("scene", "m.text")
    assert "d_k = 512" in scene and "1024" not in scene, scene
    scenes = opened.page.get_by_role("group", name=PRESET_LABEL)
    options = scenes.get_by_role("button").all_inner_texts()
    assert "Unscaled collapse (d_k = 512, scale off)" in options
    assert not any("1024" in option for option in options), options


def test_lesson_words_say_when_they_cite_a_d_k_past_the_file(html: str) -> None:
    """The served lesson cites d_k = 1024; the file, whose d_k stops at 512, says so each
    time, and cites no other d_k past 512 unmarked."""
    note = BEYOND_REACH.format(d_max=512)
    shown = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    cited = re.findall(rf"d_k = (\d+)(.{{0,{len(note)}}})", shown)
    beyond = [(value, after) for value, after in cited if int(value) > 512]
    assert beyond, "the lesson cites d_k = 1024 somewhere"
    assert all(after == note for _, after in beyond), beyond


def test_the_note_marks_only_values_past_the_page() -> None:
    text = "At d_k = 2 small; at d_k = 1024 one-hot (32 at d_k = 1024). d_k = 512."
    assert note_beyond_reach(text, 512) == (
        "At d_k = 2 small; at d_k = 1024"
        + BEYOND_REACH.format(d_max=512)
        + " one-hot (32 at d_k = 1024"
        + BEYOND_REACH.format(d_max=512)
        + "). d_k = 512."
    )
    assert note_beyond_reach(text, 1024) == text


WIDGET_COLOURS_JS = """() => {
  // Each part of each drawn widget the student reads or presses: its text colour and the
  // colour painted behind it (the nearest opaque background, across shadow roots).
  const parts = 'label, button, .sdpa-buttons-caption, .value, .sdpa-help';
  const parse = (colour) => (colour.match(/[\\d.]+/g) || []).map(Number);
  const behind = (element) => {
    for (let node = element; node; node = node.parentElement || node.getRootNode().host) {
      const colour = parse(getComputedStyle(node).backgroundColor);
      if (colour.length === 3 || colour[3] > 0.5) return colour.slice(0, 3);
    }
    return parse(getComputedStyle(document.body).backgroundColor).slice(0, 3);
  };
  const seen = [];
  for (const widget of document.querySelectorAll('[data-widget]')) {
    for (const element of widget.querySelectorAll(parts)) {
      if (element.getClientRects().length === 0) continue;
      const text = parse(getComputedStyle(element).color).slice(0, 3);
      seen.push({widget: widget.dataset.widget, part: element.className || element.tagName,
                 text, background: behind(element)});
    }
  }
  for (const name of ['scene', 'notice']) {
    const box = Bokeh.documents[0].get_model_by_name(name);
    const view = Bokeh.index.find_one(box);
    if (box.visible && view) {
      seen.push({widget: name, part: 'box', text: parse(getComputedStyle(view.el).color),
                 background: behind(view.el)});
    }
  }
  return seen;
}"""
"""Every visible part of the file's drawn widgets (and its scene and notice boxes): the
widget's name, the part, its text colour and the colour behind it, as RGB."""


def luminance(rgb: list[float]) -> float:
    """WCAG's relative luminance of an sRGB colour (0–255 channels)."""
    linear = [
        c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG's contrast ratio of two colours."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.browser
def test_the_widgets_follow_the_dark_theme_with_the_rest_of_the_file(open_export) -> None:
    """When the system prefers dark, every widget of the first screen, "More controls" and
    the lesson's sections (and the scene's box) is dark behind light words, as the page is."""
    opened = open_export("?preset=collapse", width=1280, height=800, color_scheme="dark")
    more = opened.page.get_by_role("button", name="More controls")
    if more.get_attribute("aria-expanded") != "true":
        more.click()
    opened.open_sections()
    parts = opened.page.evaluate(WIDGET_COLOURS_JS)
    widgets = {part["widget"] for part in parts}
    assert {"d_k", "scaled", "view", "preset", "scene"} <= widgets, widgets
    light = [part for part in parts if luminance(part["background"]) > 0.2]
    assert light == [], light
    unreadable = [part for part in parts if contrast(part["text"], part["background"]) < 4.5]
    assert unreadable == [], unreadable


GRIDS_JS = """() => [...document.querySelectorAll('.sdpa-lesson .sdpa-figure-grid, .sdpa-lesson '
    + '.sdpa-why, .sdpa-lesson .sdpa-faq')].map((grid) => {
  const box = grid.getBoundingClientRect();
  const items = [...grid.children].map((child) => child.getBoundingClientRect());
  return {grid: grid.className, width: box.width, items: items.length,
          right: box.right - Math.max(...items.map((item) => item.right))};
})"""
"""Each of the lesson's grids: its width, how many items it holds, and how far its right
edge lies past its rightmost item's."""


@pytest.mark.browser
@pytest.mark.parametrize(("query", "width", "height"), [("", 1280, 800), ("?embed=true", 800, 600)])
def test_the_lessons_grids_fill_their_width(
    open_export, query: str, width: int, height: int
) -> None:
    """Every section open: no grid of the lesson leaves an empty column at its right (its
    three figures shared four columns at 1280 px)."""
    opened = open_export(query, width=width, height=height)
    opened.open_sections()
    grids = opened.page.evaluate(GRIDS_JS)
    assert len(grids) >= 3, grids
    empty = [grid for grid in grids if grid["right"] > 1]
    assert empty == [], empty
