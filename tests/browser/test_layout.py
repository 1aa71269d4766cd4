"""Accessible names, a 400-px-wide page (a course iframe) and the light/dark theme toggle."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Locator, Page, expect

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

NARROW = {"width": 400, "height": 800}

FIGURES = ("heatmap", "raw_histogram", "scaled_histogram")

COLLAPSE_METRICS = ("entropy", "max_weight", "jacobian_norm")
"""The collapse figures are named ``collapse_<metric>`` (app/page/views/collapse.py)."""

EXTENT_JS = """(name) => {
  const figure = sdpaFigure(name);
  const view = Bokeh.index.find_one(figure);
  view.el.scrollIntoView({block: 'center'});
  const box = view.el.getBoundingClientRect();
  const place = (b) => ({left: box.left + b.left, right: box.left + b.right,
                         top: box.top + b.top, bottom: box.top + b.bottom});
  const parts = {
    figure: {left: box.left, right: box.right, top: box.top, bottom: box.bottom},
    frame: place(view.frame.bbox),
    title: place(Bokeh.index.find_one(figure.title).bbox),
  };
  // The heatmap's title is a text box above it (its own title is empty): it wraps.
  const headline = name === 'heatmap' ? sdpaFigure('heatmap_title') : null;
  if (headline) {
    const rect = Bokeh.index.find_one(headline).el.getBoundingClientRect();
    parts.headline = {left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom};
  }
  const bar = figure.right.find((model) => model.type === 'ColorBar');
  if (bar) parts.colourBar = place(Bokeh.index.find_one(bar).bbox);
  return parts;
}"""
"""Scroll figure ``name`` into view; return where it, its frame, title (and the heatmap's
text title above it) and colour bar are."""

THEME_JS = """() => ({
  background: getComputedStyle(document.body).backgroundColor,
  text: getComputedStyle(document.body).color,
  figure: sdpaFigure('heatmap').background_fill_color,
})"""


def _controls(page: Page) -> dict[str, Locator]:
    """Every control of the simulation, found by its role and accessible name only."""
    return {
        "d_k slider": page.get_by_role("slider", name="d_k (key dimension)", exact=True),
        "temperature slider": page.get_by_role("slider", name="temperature", exact=True),
        "n slider": page.get_by_role("slider", name="sequence length n", exact=True),
        "scale switch": page.get_by_role("switch", name="scale by 1/√d_k"),
        "causal switch": page.get_by_role("switch", name="causal mask"),
        "view selector": page.get_by_role("group", name="heatmap view", exact=True),
        "exact d_k box": page.get_by_role("spinbutton", name="exact d_k"),
        "seed box": page.get_by_role("spinbutton", name="seed", exact=True),
        "resample button": page.get_by_role("button", name="Resample"),
    }


def _luminance(css_colour: str) -> float:
    """Relative brightness 0–1 of an ``rgb()``/``rgba()`` or ``#rgb``/``#rrggbb`` colour."""
    if css_colour.startswith("#"):
        digits = css_colour[1:]
        if len(digits) in (3, 4):
            digits = "".join(2 * digit for digit in digits[:3])
        red, green, blue = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    else:
        red, green, blue = (float(part) for part in re.findall(r"[\d.]+", css_colour)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def _inside(part: dict[str, float], width: int) -> bool:
    return part["left"] >= -1 and part["right"] <= width + 1


def test_every_control_has_an_accessible_name(app_page: AppPage) -> None:
    """Each control is found by role and name, once, and the sliders announce their value."""
    app_page.open()
    page = app_page.page
    for label, control in _controls(page).items():
        expect(control, f"{label} by role and name").to_have_count(1)
        expect(control).to_be_visible()
    for name in ("weights", "scaled", "raw"):
        button = _controls(page)["view selector"].get_by_role("button", name=name)
        expect(button).to_have_count(1)
    defaults = {"d_k (key dimension)": "64", "temperature": "1", "sequence length n": "32"}
    for name, value in defaults.items():
        slider = page.get_by_role("slider", name=name, exact=True)
        expect(slider).to_have_attribute("aria-valuetext", value)
    expect(page.get_by_role("button", name="Toggle theme")).to_have_count(1)


@pytest.mark.parametrize("query", ["", "?embed=true"], ids=["page", "embed"])
def test_narrow_viewport_shows_every_plot_and_control(app_page: AppPage, query: str) -> None:
    """At 400×800 (a course-page iframe) nothing is wider than the viewport.

    Each figure, its plotting frame, title and colour bar lie within the 400 px, and every
    control can be scrolled to and is visible, without a horizontal scroll bar.
    """
    page = app_page.page
    page.set_viewport_size(NARROW)
    app_page.open(query)
    # A drawer-style sidebar would hide the controls behind the header's menu button.
    menu = page.get_by_role("button", name="Open drawer")
    if menu.count():
        menu.click()
    app_page.open_more()

    for label, control in _controls(page).items():
        control.scroll_into_view_if_needed()
        expect(control, label).to_be_visible()
        box = control.bounding_box()
        assert box is not None, f"{label} has no box"
        # Material switches hang their invisible input a little left of the track, so
        # check the centre is on screen and the far edge is not cut off.
        assert 0 <= box["x"] + box["width"] / 2 <= NARROW["width"], f"{label} is off screen"
        assert box["x"] + box["width"] <= NARROW["width"] + 1, f"{label} is cut off: {box}"

    for name in FIGURES:
        extent: dict[str, Any] = page.evaluate(EXTENT_JS, name)
        for part, place in extent.items():
            assert _inside(place, NARROW["width"]), f"{name} {part} overflows 400 px: {place}"
        assert extent["frame"]["right"] - extent["frame"]["left"] >= 200, f"{name} is squeezed"
    assert app_page.centre_pixel("heatmap") != [255, 255, 255, 255]
    scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll_width <= NARROW["width"], "the page scrolls sideways at 400 px"


@pytest.mark.parametrize("width", [400, 700, 1280])
def test_header_does_not_cover_the_controls(app_page: AppPage, width: int) -> None:
    """The fixed header stays above the first control's label, also where its title wraps."""
    page = app_page.page
    page.set_viewport_size({"width": width, "height": 800})
    app_page.open()
    header = page.locator("header").first.bounding_box()
    label = page.get_by_text("d_k (key dimension)", exact=False).first.bounding_box()
    assert header is not None and label is not None
    assert label["y"] >= header["y"] + header["height"], f"header {header} covers {label}"


LEFT_JS = """(name) => {
  const view = Bokeh.index.find_one(sdpaFigure(name));
  const box = view.el.getBoundingClientRect();
  return {left: box.left, right: box.right, top: box.top};
}"""
"""Where figure ``name`` is on the page now, without scrolling."""


@pytest.mark.parametrize("width", [1280, 1920])
def test_wide_viewport_puts_controls_plots_and_curves_side_by_side(
    app_page: AppPage, width: int
) -> None:
    """On a laptop or a projector the controls sit left of the heatmap, the histograms right
    of it, all in the first screen, and the three collapse curves share one row."""
    page = app_page.page
    page.set_viewport_size({"width": width, "height": 800})
    app_page.open()
    slider = page.get_by_role("slider", name="d_k (key dimension)", exact=True).bounding_box()
    heatmap = page.evaluate(LEFT_JS, "heatmap")
    histogram = page.evaluate(LEFT_JS, "raw_histogram")
    assert slider is not None and slider["x"] + slider["width"] <= heatmap["left"]
    assert histogram["left"] >= heatmap["right"] - 1, "the histograms should be beside it"
    assert 0 <= heatmap["top"] < 400 and 0 <= histogram["top"] < 400
    curves = [page.evaluate(LEFT_JS, f"collapse_{name}") for name in COLLAPSE_METRICS]
    assert len({round(curve["top"]) for curve in curves}) == 1, f"not one row: {curves}"
    assert curves[0]["right"] <= curves[1]["left"] + 1 <= curves[2]["left"] + 1


def test_theme_toggle_switches_between_light_and_dark(app_page: AppPage) -> None:
    """The header's toggle darkens the page and the plots, and a second press restores them."""
    app_page.open()
    page = app_page.page
    light = page.evaluate(THEME_JS)
    assert _luminance(light["background"]) > 0.8 or light["background"] == "rgba(0, 0, 0, 0)"
    assert _luminance(light["figure"]) > 0.8

    toggle = page.get_by_role("button", name="Toggle theme")
    toggle.click()
    page.wait_for_function(
        "(before) => getComputedStyle(document.body).backgroundColor !== before",
        arg=light["background"],
    )
    page.wait_for_function(
        "(before) => sdpaFigure('heatmap').background_fill_color !== before",
        arg=light["figure"],
    )
    dark = page.evaluate(THEME_JS)
    assert _luminance(dark["background"]) < 0.2
    assert _luminance(dark["text"]) > 0.8, "text should turn light on the dark background"
    assert _luminance(dark["figure"]) < 0.2, "the plots should follow the dark theme"

    # Keyboard, the second time: the toggle is a real button.
    toggle.focus()
    toggle.press("Enter")
    page.wait_for_function(
        "(before) => getComputedStyle(document.body).backgroundColor !== before",
        arg=dark["background"],
    )
    page.wait_for_function(
        "(before) => sdpaFigure('heatmap').background_fill_color !== before",
        arg=dark["figure"],
    )
    restored = page.evaluate(THEME_JS)
    assert _luminance(restored["background"]) > 0.8
    assert _luminance(restored["figure"]) > 0.8
