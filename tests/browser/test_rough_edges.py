"""Issue 26's rough edges on the served page: sliders that stay where they are while they
move (points 2 and 3), a row outline that leaves the row's cells in view (point 4), a preset
menu whose choices are not cut, and download buttons that look like buttons (point 7).

A slider's label shows its value: at d_k = 1024 a longer value used to wrap the label onto a
second line and push its slider down under the student's hand. Each slider is stepped by
keyboard and dragged by mouse across its whole range, embedded at 800×600 and on a page 400
px wide, and no slider's box may move. The lesson's Material UI sliders show no value
tooltip over their labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from browser_support import ROW_CELL_PIXELS_JS, assert_bright_cell_in_full_view
from playwright.sync_api import expect
from test_training import GRID_DRAWN_JS, GRID_TIMEOUT_MS, RUN_LENGTH_JS, WATCH_RUN_JS

from app.page.controls import control_spec
from app.page.views.assumptions import ASSUMPTIONS_TITLE
from app.page.views.heatmap import ROW_OUTLINE_COLOUR
from app.page.views.training_grid import TRAINING_TITLE
from app.served.components.training_session import TRAIN_LABEL
from app.simulation.csv_files import HISTOGRAM_LABEL, MATRIX_LABEL
from app.simulation.presets import preset_options
from app.simulation.spec import (
    ASSUMPTION_CONTROLS,
    CONTROL_BY_NAME,
    CONTROLS,
    NO_PRESET_LABEL,
    PRESET_LABEL,
)

if TYPE_CHECKING:
    from conftest import AppPage
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

SLIDERS = [control for control in CONTROLS if control.first_screen and control.widget == "slider"]
"""The first screen's sliders, drawn in the browser."""

ASSUMPTION_SLIDERS = [
    name for name in ASSUMPTION_CONTROLS if CONTROL_BY_NAME[name].widget == "slider"
]
"""The lesson's Material UI sliders ("When the assumptions break")."""

BOXES_JS = """(inputs) => inputs.map((input) => {
  const box = input.getBoundingClientRect();
  return [box.x, box.y, box.width, box.height];
})"""
"""Where every slider of the first screen is (x, y, width, height)."""


def boxes(page: Page) -> list[list[float]]:
    """Every first-screen slider's box, in spec order."""
    return page.locator("input[type=range][data-control]").evaluate_all(BOXES_JS)


EVERY_POSITION_JS = """([inputs, name]) => {
  // Each position in turn, as a move shows it at once (its label's value), measured in the
  // same task: no answer from the server can come between a move and its measure.
  const slider = inputs.find((input) => input.dataset.control === name);
  const measure = () => inputs.map((input) => {
    const box = input.getBoundingClientRect();
    return [box.x, box.y, box.width, box.height];
  });
  const seen = [];
  for (let index = Number(slider.min); index <= Number(slider.max); index++) {
    slider.value = String(index);
    slider.dispatchEvent(new Event("input", {bubbles: true}));
    seen.push([slider.getAttribute("aria-valuetext"), measure()]);
  }
  return seen;
}"""
"""Every position of slider ``name``: the text its label shows there and every box."""


@pytest.mark.parametrize(
    ("size", "query"),
    [({"width": 800, "height": 600}, "?embed=true"), ({"width": 400, "height": 700}, "")],
    ids=["embedded-800x600", "400-wide"],
)
def test_first_screen_sliders_do_not_move_across_their_range(
    app_page: AppPage, size: dict[str, int], query: str
) -> None:
    """Every position of every slider, then a drag across it and back: every slider's box
    stays exactly where it was on load, whatever value any label shows."""
    page = app_page.page
    page.set_viewport_size(size)
    app_page.open(query, lesson=False)
    still = boxes(page)
    assert len(still) == len(SLIDERS)
    inputs = page.locator("input[type=range][data-control]")
    for control in SLIDERS:
        seen = page.evaluate(EVERY_POSITION_JS, [inputs.element_handles(), control.name])
        assert [text for text, _ in seen] == control_spec(control)["positions"]
        moved = [text for text, shown in seen if shown != still]
        assert moved == [], f"{control.name}: the sliders moved at {moved}"
        slider = page.get_by_role("slider", name=control.label, exact=True)
        box = slider.bounding_box()
        assert box is not None
        middle = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + 4, middle)
        page.mouse.down()
        for step in range(41):
            page.mouse.move(box["x"] + box["width"] * (1 - abs(1 - step / 20)), middle)
            assert boxes(page) == still, f"{control.name} dragged, step {step}"
        page.mouse.up()
    app_page.wait_ready()
    assert boxes(page) == still


def test_lesson_sliders_show_no_value_tooltip_over_their_labels(app_page: AppPage) -> None:
    """The assumptions section's sliders say their value in their label; pressed and
    moved, they show no Material value tooltip (which covered the label)."""
    page = app_page.page
    app_page.open()
    app_page.open_section(ASSUMPTIONS_TITLE)
    for name in ASSUMPTION_SLIDERS:
        slider = page.get_by_role("slider", name=CONTROL_BY_NAME[name].label, exact=True)
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        assert box is not None
        before = slider.get_attribute("aria-valuetext")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 + 30, box["y"] + box["height"] / 2, steps=4)
        expect(slider).not_to_have_attribute("aria-valuetext", before or "")
        # Material draws the tooltip as a value label beside the thumb (none when off).
        expect(page.locator(".MuiSlider-valueLabel")).to_have_count(0)
        page.mouse.up()


SIZES = {
    "1280-wide": ({"width": 1280, "height": 800}, ""),
    "embedded-800x600": ({"width": 800, "height": 600}, "&embed=true"),
    "400-wide": ({"width": 400, "height": 700}, ""),
}
"""The page as a class meets it: a wide window, a course page's frame, a phone."""


@pytest.mark.parametrize(("size", "query"), list(SIZES.values()), ids=list(SIZES))
def test_the_row_outline_leaves_a_one_hot_rows_bright_cell_in_view(
    app_page: AppPage, size: dict[str, int], query: str
) -> None:
    """d_k = 1024 without the scale, n = 32 (the collapse preset): row 0 is one-hot, and
    every pixel of its bright cell on screen is the cell's colour, none the outline's dash."""
    page = app_page.page
    page.set_viewport_size(size)
    app_page.open(f"?preset=collapse{query}", lesson=False)
    cell = page.evaluate(ROW_CELL_PIXELS_JS, [page.evaluate_handle("sdpaFigure('heatmap')"), 0])
    assert cell["weight"] > 0.99, cell["weight"]
    assert_bright_cell_in_full_view(cell, ROW_OUTLINE_COLOUR)


LONGEST_PRESET = max(preset_options(), key=len)
"""The preset scene whose label is the longest (41 characters)."""


WORDS_CUT_JS = """(button) => button.scrollWidth > button.clientWidth
  || button.scrollHeight > button.clientHeight"""
"""Whether a button's words are wider or taller than its box (cut, or ended with an
ellipsis)."""


@pytest.mark.parametrize(("size", "query"), list(SIZES.values()), ids=list(SIZES))
def test_the_preset_scenes_are_not_cut(app_page: AppPage, size: dict[str, int], query: str) -> None:
    """Every preset scene's button shows its words whole, the longest (41 characters)
    included, at every width a class meets the page; choosing one presses it."""
    page = app_page.page
    page.set_viewport_size(size)
    app_page.open(f"?{query.lstrip('&')}", lesson=False)
    app_page.open_more()
    scenes = page.get_by_role("group", name=PRESET_LABEL)
    for label in (NO_PRESET_LABEL, *preset_options()):
        button = scenes.get_by_role("button", name=label, exact=True)
        expect(button).to_be_visible()
        assert button.evaluate(WORDS_CUT_JS) is False, label
    expect(scenes.get_by_role("button", name=NO_PRESET_LABEL)).to_have_attribute(
        "aria-pressed", "true"
    )
    longest = scenes.get_by_role("button", name=LONGEST_PRESET, exact=True)
    longest.click()
    app_page.wait_url(preset=preset_options()[LONGEST_PRESET])
    expect(longest).to_have_attribute("aria-pressed", "true")


BUTTON_LOOK_JS = """(button) => {
  const style = getComputedStyle(button);
  return {border: parseFloat(style.borderTopWidth), colour: style.borderTopColor,
          padding: parseFloat(style.paddingLeft), text: style.color};
}"""


def test_the_download_buttons_look_like_the_pages_other_buttons(app_page: AppPage) -> None:
    """Bordered in the primary colour, with room around their words, as Copy link is."""
    page = app_page.page
    app_page.open()
    app_page.open_section(ASSUMPTIONS_TITLE)
    for label in (MATRIX_LABEL, HISTOGRAM_LABEL):
        look = page.get_by_role("button", name=label).evaluate(BUTTON_LOOK_JS)
        assert look["border"] >= 1 and look["padding"] >= 8, look
        assert look["colour"] not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), look
        assert look["text"] != "rgba(0, 0, 0, 0.87)", look


RUN_PIXELS_JS = """async () => {
  // Only the run's renderers painted, then how many of the loss frame's pixels stand out
  // from its background (its top-left pixel, now empty) by 3:1 or more.
  const figure = sdpaFigure('training_loss');
  const view = Bokeh.index.find_one(figure);
  const others = [...figure.renderers.filter((r) => !('step' in r.data_source.data)
    || 'loss_low' in r.data_source.data), ...figure.center];
  const shown = others.map((model) => model.visible);
  others.forEach((model) => { model.visible = false; });
  // Two animation frames: BokehJS repaints on the first after the change.
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const ratio = view.canvas_view.pixel_ratio;
  const {x, y, width, height} = view.frame.bbox;
  const canvas = view.canvas_view.compose().canvas;
  const data = canvas.getContext('2d').getImageData(
    Math.ceil(x * ratio) + 2, Math.ceil(y * ratio) + 2,
    Math.floor(width * ratio) - 4, Math.floor(height * ratio) - 4).data;
  others.forEach((model, i) => { model.visible = shown[i]; });
  const luminance = (i) => [0, 1, 2].map((c) => {
    const v = data[i + c] / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, v, c) => sum + v * [0.2126, 0.7152, 0.0722][c], 0);
  const background = luminance(0);
  let standing = 0;
  for (let i = 0; i < data.length; i += 4) {
    const l = luminance(i);
    if ((Math.max(l, background) + 0.05) / (Math.min(l, background) + 0.05) >= 3) standing++;
  }
  return {background: Array.from(data.slice(0, 3)), standing};
}"""
"""Of the training loss figure's frame with only the student's run drawn: its background
colour, and how many pixels contrast with it by at least 3:1 (WCAG's for graphics)."""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_training_runs_line_stands_out_in_both_themes(app_page: AppPage, scheme: str) -> None:
    """After Train, the run's line ("your run") paints a curve's worth of pixels that
    contrast with the figure's background, on the dark theme's as on the light one."""
    page = app_page.page
    page.emulate_media(color_scheme=scheme)
    app_page.open("?d_k=1024&scaled=false", lesson=True)
    app_page.open_section(TRAINING_TITLE)
    page.wait_for_function(GRID_DRAWN_JS, timeout=GRID_TIMEOUT_MS)
    page.evaluate(WATCH_RUN_JS)
    page.get_by_role("button", name=TRAIN_LABEL, exact=True).click()
    page.wait_for_function(RUN_LENGTH_JS, arg=200)
    expect(page.get_by_test_id("training-status")).to_contain_text("Done")
    page.get_by_test_id("training-status").scroll_into_view_if_needed()
    measured = page.evaluate(RUN_PIXELS_JS)
    dark = sum(measured["background"]) < 3 * 128
    assert dark == (scheme == "dark"), measured
    # A line across the frame's ~400 px: far more than its legend key's few pixels.
    assert measured["standing"] >= 300, measured
