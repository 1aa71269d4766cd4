"""The exported file in Chromium, opened from file:// with every network request blocked.

The ``open_export`` fixture fails a test whose page logs an error or tries to reach the
network. Controls are driven with the keyboard; the numbers are read from the page's Bokeh
models and compared with sdpa_core and app.simulation.parts for the same state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import sdpa_core
from app.page.views.readouts import readouts_html
from app.simulation.model import SimulationModel
from app.simulation.parts import dot_product_histograms
from app.simulation.spec import CONTROL_BY_NAME, CONTROLS, VIEWS
from app.simulation.state import SimulationState

from .conftest import OfflinePage

pytestmark = pytest.mark.browser

SEED = 0
LABEL = {control.name: control.label for control in CONTROLS}
"""Each control's label in app/simulation/spec.py: its widget's accessible name."""
WEIGHTS_TOLERANCE = 1e-5


def page_image(opened: OfflinePage, column: str = "weight") -> np.ndarray:
    """An image column of the heatmap's source, as the page holds it (NaN where masked)."""
    shape, values = opened.page.evaluate(
        """(column) => {
            const model = Bokeh.documents[0].get_model_by_name("heatmap_image");
            const image = model.data_source.data[column][0];
            return [image.shape, Array.from(image, (v) => (Number.isNaN(v) ? null : v))];
        }""",
        column,
    )
    return np.array([np.nan if v is None else v for v in values], dtype=float).reshape(shape)


def core_weights(state: dict[str, Any]) -> np.ndarray:
    """sdpa_core.attention's weights for a page state (the server's float64 samples)."""
    q, k = sdpa_core.sample_qk(state["n"], state["d_k"], SEED)
    _, weights = sdpa_core.attention(
        q,
        k,
        k,
        scale=None if state["scaled"] else 1.0,
        temperature=state["temperature"],
        mask="causal" if state["causal"] else None,
    )
    return weights


def assert_weights_match_core(opened: OfflinePage) -> dict[str, Any]:
    """The heatmap's weights equal the core's within 1e-5; masked cells are NaN (grey)."""
    state = opened.snapshot()["state"]
    shown = page_image(opened)
    expected = core_weights(state)
    assert shown.shape == expected.shape == (state["n"], state["n"])
    hidden = ~sdpa_core.causal_mask(state["n"], state["n"]) if state["causal"] else None
    if hidden is not None:
        assert np.isnan(shown[hidden]).all()
        shown, expected = shown[~hidden], expected[~hidden]
    np.testing.assert_allclose(shown, expected, rtol=0, atol=WEIGHTS_TOLERANCE)
    return state


def server_model(state: dict[str, Any]) -> SimulationModel:
    """The served app's model for a page state."""
    return SimulationModel(SimulationState(**{**state, "seed": SEED}))


def press(opened: OfflinePage, role: str, name: str, key: str) -> None:
    """Press ``key`` on the control with this accessible role and name; wait for the redraw."""
    count = opened.updates()
    opened.page.get_by_role(role, name=name, exact=True).press(key)
    opened.wait_for_update_after(count)


def test_page_opens_offline_with_the_default_state(open_export) -> None:
    opened = open_export()
    state = assert_weights_match_core(opened)
    assert state == {
        "d_k": 64,
        "temperature": 1,
        "n": 32,
        "scaled": True,
        "view": "weights",
        "causal": False,
        "seed": SEED,
        "row": 0,
        "sigma_q": 1,
        "sigma_k": 1,
        "precision": "float64",
        "subtract_max": True,
    }
    assert opened.readouts() == readouts_html(server_model(state))
    assert opened.page.get_by_test_id("offline-note").is_visible()
    assert opened.model("notice", "m.visible") is False


def test_bokeh_skips_only_unchanged_stylesheet_writes(open_export) -> None:
    """app/compat.py's UNCHANGED_STYLESHEETS_JS is in force: an unchanged write leaves the
    <style> element's text node alone, a changed one still lands (a d_k move repaints)."""
    opened = open_export()
    result = opened.page.evaluate(
        """() => {
            const Sheet = Bokeh.require("core/dom").InlineStyleSheet;
            const sheet = new Sheet(":host { width: 1px; }");
            const node = sheet.el.firstChild;
            sheet.replace(":host { width: 1px; }");
            const kept = sheet.el.firstChild === node;
            sheet.replace(":host { width: 2px; }");
            return {
                wrapped: Sheet.prototype._update.skipsUnchanged === true,
                kept,
                changed: sheet.css === ":host { width: 2px; }",
            };
        }"""
    )
    assert result == {"wrapped": True, "kept": True, "changed": True}, (
        "the offline page no longer skips unchanged BokehJS stylesheet writes: see "
        "app/compat.py UNCHANGED_STYLESHEETS_JS"
    )
    press(opened, "slider", CONTROL_BY_NAME["d_k"].label, "ArrowRight")
    assert assert_weights_match_core(opened)["d_k"] != 64


def test_keyboard_moves_every_control_and_the_weights_follow_the_core(open_export) -> None:
    opened = open_export()
    press(opened, "slider", LABEL["d_k"], "End")
    assert assert_weights_match_core(opened)["d_k"] == 512
    press(opened, "switch", LABEL["scaled"], "Space")
    press(opened, "slider", LABEL["temperature"], "Home")
    state = assert_weights_match_core(opened)
    assert (state["scaled"], state["temperature"]) == (False, 0.05)
    press(opened, "slider", LABEL["n"], "End")
    press(opened, "switch", LABEL["causal"], "Space")
    state = assert_weights_match_core(opened)
    assert (state["n"], state["causal"]) == (128, True)
    # The whole 128×128 matrix is in view, query 0 at the top.
    assert opened.model("heatmap", "[m.x_range.start, m.x_range.end]") == [0, 128]
    assert opened.model("heatmap", "[m.y_range.start, m.y_range.end]") == [128, 0]
    for _ in range(3):
        press(opened, "slider", LABEL["temperature"], "ArrowRight")
    press(opened, "slider", LABEL["d_k"], "PageDown")
    state = assert_weights_match_core(opened)
    assert state["temperature"] == 0.08
    assert state["d_k"] < 512
    # The readouts say what the server would say for the same state.
    assert opened.readouts() == readouts_html(server_model(state))


def mapper_range(opened: OfflinePage) -> list[float]:
    """The heatmap colour mapper's [low, high], after checking the colour bar shows the same
    range and palette (it has a mapper of its own, see app/page/figures.py)."""
    image, bar = opened.page.evaluate(
        """() => {
            const models = SdpaExport.page.models;
            const image = Bokeh.documents[0].get_model_by_name("heatmap_image");
            return [image.glyph.color_mapper, models.colour_bar.color_mapper].map(
                (mapper) => [mapper.low, mapper.high, mapper.palette],
            );
        }"""
    )
    assert bar == image
    return image[:2]


def test_heatmap_views_switch_image_and_colour_range(open_export) -> None:
    opened = open_export("?d_k=16&n=8")
    press(opened, "button", VIEWS["raw"], "Enter")
    q, k = sdpa_core.sample_qk(8, 16, SEED)
    raw = sdpa_core.scores_logits(q, k, scale=1.0)
    np.testing.assert_allclose(page_image(opened, "shown"), raw, rtol=1e-5, atol=1e-5)
    low, high = mapper_range(opened)
    assert high == pytest.approx(np.abs(raw).max(), rel=1e-5) and low == -high
    assert opened.model("heatmap_title", "m.text") == "Raw scores q·k"
    press(opened, "button", VIEWS["scaled"], "Enter")
    np.testing.assert_allclose(page_image(opened, "shown"), raw / 4.0, rtol=1e-5, atol=1e-5)
    low, high = mapper_range(opened)
    assert high == pytest.approx(np.abs(raw).max() / 4.0, rel=1e-5) and low == -high
    press(opened, "button", VIEWS["weights"], "Enter")
    np.testing.assert_array_equal(page_image(opened, "shown"), page_image(opened, "weight"))
    assert mapper_range(opened) == [0, 1]


def palette_colours(values: np.ndarray, palette: list[str], low: float, high: float) -> set:
    """The RGB colours BokehJS's LinearColorMapper gives ``values`` (finite ones)."""
    colours = set()
    for value in values[np.isfinite(values)].astype(float):
        if value == high:
            key = len(palette) - 1
        else:
            key = math.floor((value - low) * (1 / (high - low)) / (1 / len(palette)))
        code = palette[min(max(key, 0), len(palette) - 1)]
        colours.add(tuple(int(code[i : i + 2], 16) for i in (1, 3, 5)))
    return colours


def painted_colours(opened: OfflinePage) -> set:
    """The RGB colours in a screenshot of the heatmap."""
    from io import BytesIO

    from PIL import Image

    shot = opened.page.locator(".sdpa-heatmap").screenshot()
    pixels = np.asarray(Image.open(BytesIO(shot)).convert("RGB")).reshape(-1, 3)
    return {tuple(int(channel) for channel in pixel) for pixel in np.unique(pixels, axis=0)}


@pytest.mark.parametrize("view", ["raw", "weights"])
def test_heatmap_paints_the_colours_of_the_view(open_export, view: str) -> None:
    # Starts in the other view, so the colours must follow a switch.
    opened = open_export(f"?d_k=16&n=8&view={'weights' if view == 'raw' else 'raw'}")
    press(opened, "button", VIEWS[view], "Enter")
    palette = opened.model("heatmap_image", "m.glyph.color_mapper.palette")
    low, high = mapper_range(opened)
    expected = palette_colours(page_image(opened, "shown"), palette, low, high)
    painted = painted_colours(opened)
    assert len(expected) > 10
    assert expected <= painted, f"{len(expected - painted)} of {len(expected)} colours missing"


def test_histograms_match_the_servers_for_each_d_k(open_export) -> None:
    opened = open_export("?d_k=4")
    for key in ("ArrowRight", "End"):
        press(opened, "slider", LABEL["d_k"], key)
        snapshot = opened.snapshot()
        d_k = snapshot["state"]["d_k"]
        raw, scaled = dot_product_histograms(d_k, SEED)
        assert snapshot["raw_std"] == pytest.approx(raw.std, rel=1e-12)
        assert snapshot["scaled_std"] == pytest.approx(scaled.std, rel=1e-12)
        for name, frame in (("raw_histogram", raw), ("scaled_histogram", scaled)):
            bars = opened.model(name, "Array.from(m.renderers[0].data_source.data.top)")
            np.testing.assert_array_equal(bars, frame.density)
            curve = opened.model(name, "Array.from(m.renderers[1].data_source.data.y)")
            np.testing.assert_allclose(curve, frame.curve_y, rtol=1e-14)
        title = opened.model("raw_histogram", "m.title.text")
        assert title == f"Raw q·k at d_k = {d_k}: std ≈ √d_k = {math.sqrt(d_k):.3g}"
        shown = opened.page.get_by_test_id("std-raw").locator(".value").inner_text()
        assert shown == f"{raw.std:.1f}"
    assert d_k == 512


def test_histograms_drawn_after_the_heatmap_show_the_last_of_quick_moves(open_export) -> None:
    # The histograms follow a frame after the heatmap; moves in between are drawn with them.
    opened = open_export("?d_k=4")
    slider = opened.page.get_by_role("slider", name=LABEL["d_k"], exact=True)
    count = opened.updates()
    for key in ("ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft"):
        slider.press(key)
    opened.wait_for_update_after(count)
    assert opened.snapshot()["state"]["d_k"] == 6
    raw, _ = dot_product_histograms(6, SEED)
    bars = opened.model("raw_histogram", "Array.from(m.renderers[0].data_source.data.top)")
    np.testing.assert_array_equal(bars, raw.density)
    assert opened.model("raw_histogram", "m.title.text").startswith("Raw q·k at d_k = 6:")
    assert assert_weights_match_core(opened)["d_k"] == 6


def test_url_parameters_set_the_state(open_export) -> None:
    opened = open_export("?d_k=256&temperature=0.33&n=100&scaled=false&view=scaled&causal=true")
    state = assert_weights_match_core(opened)
    assert state == {
        "d_k": 256,
        "temperature": 0.33,
        "n": 100,
        "scaled": False,
        "view": "scaled",
        "causal": True,
        "seed": SEED,
        "row": 0,
        "sigma_q": 1,
        "sigma_k": 1,
        "precision": "float64",
        "subtract_max": True,
    }
    page = opened.page
    assert (
        page.get_by_role("slider", name=LABEL["temperature"]).get_attribute("aria-valuetext")
        == "0.33"
    )
    assert page.get_by_role("slider", name=LABEL["n"]).get_attribute("aria-valuetext") == "100"
    assert page.get_by_role("switch", name=LABEL["scaled"]).is_checked() is False
    assert page.get_by_role("switch", name=LABEL["causal"]).is_checked() is True
    view = page.get_by_role("group", name=LABEL["view"], exact=True)
    assert view.locator("button[aria-pressed=true]").all_inner_texts() == [VIEWS["scaled"]]
    np.testing.assert_array_equal(page_image(opened, "shown"), page_image(opened, "scaled"))
    assert opened.model("heatmap", "[m.x_range.end, m.y_range.start]") == [100, 100]
    assert opened.model("notice", "m.visible") is False
    # The URL keeps the state, as the served app's does, so a copied link shares it.
    assert "d_k=256&temperature=0.33&n=100&scaled=false&view=scaled&causal=true&seed=0" in page.url


def test_bad_url_values_are_fixed_with_a_plain_text_notice(open_export) -> None:
    opened = open_export(
        "?d_k=%3Cscript%3Ealert(1)%3C/script%3E&n=5000&temperature=1e999&causal=maybe&seed=9"
    )
    state = opened.snapshot()["state"]
    assert (state["d_k"], state["n"], state["temperature"], state["causal"], state["seed"]) == (
        64,
        128,
        1,
        False,
        SEED,
    )
    assert opened.model("notice", "m.visible") is True
    shown = opened.page.evaluate(
        """() => {
            const model = Bokeh.documents[0].get_model_by_name("notice");
            const root = Bokeh.index.find_one(model).shadow_el;
            return [root.textContent, root.querySelectorAll("script, img, b").length];
        }"""
    )
    text, elements = shown
    assert elements == 0
    assert "“\\x3cscript\\x3ealert\\x281\\x29\\x3c\\x2fsc…” is not a number" in text
    assert "n = 5000 is above the largest value 1024" in text
    assert "seed = 9: this offline page was exported with seed 0" in text
    assert opened.page.get_by_text("Some link values were adjusted.").is_visible()


@pytest.mark.parametrize("width", [400, 1280])
def test_layout_fits_the_width(open_export, width: int) -> None:
    opened = open_export(width=width)
    boxes = opened.page.evaluate(
        """() => {
            const box = (selector) => document.querySelector(selector).getBoundingClientRect();
            const controls = box(".sdpa-control-panel"), heatmap = box(".sdpa-heatmap");
            return {
                scroll: document.documentElement.scrollWidth,
                controlsRight: controls.right, controlsBottom: controls.bottom,
                heatmapLeft: heatmap.left, heatmapTop: heatmap.top,
            };
        }"""
    )
    assert boxes["scroll"] <= width
    if width < 720:
        assert boxes["controlsBottom"] <= boxes["heatmapTop"]  # controls above the plots
    else:
        assert boxes["controlsRight"] <= boxes["heatmapLeft"]  # controls beside the plots
