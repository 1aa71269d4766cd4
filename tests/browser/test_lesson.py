"""The lesson views in a real browser: they render, react, grade answers and set scenes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from conftest import LESSON_JS
from playwright.sync_api import expect

from app.page.views.assumptions import ASSUMPTIONS_TITLE, LAW_CONTROLS
from app.page.views.quiz import DIVISOR_LABEL, SQRT_LABEL
from app.page.views.training_grid import TRAINING_TITLE
from app.served.components.first_screen import GATE_LABEL
from app.simulation.spec import CONTROL_BY_NAME

if TYPE_CHECKING:
    from conftest import AppPage
    from playwright.sync_api import ElementHandle, Locator

pytestmark = pytest.mark.browser

FIGURES_HAVE_DATA_JS = """(names) => names.every((name) => {
  const figure = sdpaFigure(name);
  if (!figure) return false;
  const view = Bokeh.index.find_one(figure);
  return view != null && view.has_finished() && figure.renderers.some((renderer) => {
    const data = renderer.data_source && renderer.data_source.data;
    return data && Object.values(data).some((column) => column && column.length > 0);
  });
})"""

ROW_TITLE_JS = """(row) => sdpaFigure('row_comparison')
  .title.text.startsWith(`Query i = ${row}:`)"""

LESSON_FIGURES = [
    "collapse_entropy",
    "collapse_max_weight",
    "collapse_jacobian_norm",
    "row_comparison",
    "values_heatmap",
    "output_heatmap",
]


def test_every_lesson_view_renders(app_page: AppPage) -> None:
    """Collapse curves, row comparison, output and worked example all draw, error-free."""
    app_page.open()
    app_page.page.wait_for_function(FIGURES_HAVE_DATA_JS, arg=LESSON_FIGURES)
    result = app_page.page.get_by_test_id("worked-output").filter(visible=True)
    expect(result).to_contain_text("1.956")
    expect(result).to_contain_text("8.044")


def test_worked_example_switches_to_unscaled_steps(app_page: AppPage) -> None:
    app_page.open()
    app_page.page.get_by_role("switch", name="show the steps unscaled").click()
    expect(app_page.page.get_by_test_id("worked-output").filter(visible=True)).to_contain_text(
        "8.808"
    )


def test_quiz_gives_right_and_wrong_feedback(app_page: AppPage) -> None:
    """A wrong answer gets 'Not quite' and a hint; the right one gets 'Right: 8'."""
    app_page.open()
    page = app_page.page
    answer = page.get_by_label("Divisor when d_k = 64")
    check = page.get_by_role("button", name="Check answer 1")
    answer.fill("64")
    check.click()
    feedback = page.locator(".quiz-feedback-1")
    expect(feedback).to_contain_text("Not quite")
    answer.fill("8")
    check.click()
    expect(feedback).to_contain_text("Right: 8")

    blank = page.get_by_label(SQRT_LABEL)
    blank.fill("<img src=x onerror=alert(1)>")
    page.get_by_role("button", name="Check answer 2").click()
    expect(page.locator(".quiz-feedback-2")).to_contain_text("Not quite")
    blank.fill("sqrt")
    page.get_by_role("button", name="Check answer 2").click()
    expect(page.locator(".quiz-feedback-2")).to_contain_text("Right: np.sqrt")


def test_preset_sets_the_controls_and_the_url(app_page: AppPage) -> None:
    """Choosing a scene moves every control at once and writes it into the link."""
    app_page.open()
    page = app_page.page
    app_page.open_more()
    scenes = page.get_by_role("group", name="preset scene")
    scenes.get_by_role("button", name="Unscaled collapse", exact=False).click()
    app_page.wait_url(preset="collapse", d_k="1024", scaled="false")
    expect(page.get_by_role("slider", name="d_k (key dimension)", exact=True)).to_have_attribute(
        "aria-valuetext", "1024"
    )
    expect(page.get_by_role("switch", name="scale by 1/√d_k")).not_to_be_checked()
    expect(page.get_by_test_id("verdict")).to_contain_text("one-hot")
    expect(page.locator(".preset-scene")).to_contain_text("Unscaled collapse")
    # The collapse curves' caption (markup the server rewrites) follows the scene too.
    expect(page.get_by_test_id("collapse-caption")).to_contain_text(
        "d_k = 1024 on the unscaled (orange) curves"
    )


def test_preset_link_loads_the_scene(app_page: AppPage) -> None:
    app_page.open("?preset=causal")
    assert app_page.heatmap()["nanUpper"] == 32 * 31 // 2
    expect(app_page.page.get_by_role("switch", name="causal mask")).to_be_checked()


def test_clicking_a_heatmap_row_picks_the_query(app_page: AppPage) -> None:
    """A click on row 10 of the heatmap shows query 10 in the row comparison."""
    app_page.open()
    page = app_page.page
    view = "Bokeh.index.find_one(sdpaFigure('heatmap'))"
    canvas = page.evaluate_handle(f"() => {view}.canvas_view.el")
    # Frame coordinates are relative to the canvas element; Playwright's element click
    # scrolls it into view and waits until it stops moving.
    position = page.evaluate(
        f"""() => {{
          const frame = {view}.frame;
          return {{x: frame.bbox.x + frame.bbox.width / 2, y: frame.y_scale.compute(10.5)}};
        }}"""
    )
    canvas.as_element().click(position=position)
    page.wait_for_function(ROW_TITLE_JS, arg=10)
    app_page.wait_url(row="10")


KEEP_FIRST_FIGURES_JS = """() => {
  window.sdpaFirstHeatmap = SdpaDrawnFigures[0].models.heatmap;
  return SdpaDrawnFigures.length;
}"""
"""Keep the first screen's heatmap model as drawn now; how many figure components drew."""

SAME_FIRST_FIGURES_JS = """() => SdpaDrawnFigures.length === 1
  && SdpaDrawnFigures[0].models.heatmap === window.sdpaFirstHeatmap"""
"""Whether the first screen's figures are still those kept, drawn once (not redrawn)."""


def test_the_lesson_is_built_when_the_student_scrolls_to_it(app_page: AppPage) -> None:
    """A session sends the first screen only; scrolling near the lesson's button brings it,
    and its arrival leaves the figures above it as they were
    (app/served/components/first_screen.py draws each child into its box: nothing else is
    redrawn)."""
    app_page.open(lesson=False)
    page = app_page.page
    gate = page.get_by_role("button", name=GATE_LABEL)
    expect(gate).to_be_visible()
    assert page.evaluate("() => sdpaFigure('row_comparison')") is None
    assert page.evaluate(KEEP_FIRST_FIGURES_JS) == 1
    page.mouse.move(640, 400)
    page.mouse.wheel(0, 400)
    page.wait_for_function(LESSON_JS)
    page.wait_for_function(FIGURES_HAVE_DATA_JS, arg=LESSON_FIGURES)
    expect(gate).to_have_count(0)
    app_page.open_more()
    assert page.evaluate(SAME_FIRST_FIGURES_JS), "the first screen's figures were redrawn"


def test_the_lesson_button_opens_the_lesson_from_the_keyboard(app_page: AppPage) -> None:
    app_page.open(lesson=False)
    gate = app_page.page.get_by_role("button", name=GATE_LABEL)
    gate.focus()
    app_page.page.keyboard.press("Enter")
    app_page.page.wait_for_function(LESSON_JS)
    expect(gate).to_have_count(0)


SPAN_JS = """([control, figure]) => {
  const a = control.getBoundingClientRect(), b = figure.getBoundingClientRect();
  return Math.max(a.bottom, b.bottom) - Math.min(a.top, b.top);
}"""
"""The height of the smallest strip of the page that holds both elements whole."""

FIGURE_DRAWN_JS = """(name) => {
  const figure = sdpaFigure(name);
  const view = figure && Bokeh.index.find_one(figure);
  return view != null && view.has_finished() && view.el.getBoundingClientRect().height > 0;
}"""

FIGURE_ELEMENT_JS = "(name) => Bokeh.index.find_one(sdpaFigure(name)).el"


def figure_element(app_page: AppPage, name: str) -> ElementHandle:
    """The element Bokeh draws figure ``name`` in, once drawn."""
    app_page.page.wait_for_function(FIGURE_DRAWN_JS, arg=name)
    element = app_page.page.evaluate_handle(FIGURE_ELEMENT_JS, name).as_element()
    assert element is not None
    return element


def element(locator: Locator) -> ElementHandle:
    """The one element ``locator`` finds, once it is on the page."""
    handle = locator.element_handle()
    assert handle is not None
    return handle


@pytest.mark.parametrize("size", [{"width": 1280, "height": 800}, {"width": 400, "height": 700}])
def test_every_lesson_control_shares_a_screen_with_what_it_changes(
    app_page: AppPage, size: dict[str, int]
) -> None:
    """Each control of the lesson and the figure or readout it changes fit in one viewport
    together, so a student sees the effect of a move beside it (issue 26)."""
    page = app_page.page
    page.set_viewport_size(size)
    app_page.open()
    app_page.open_section(TRAINING_TITLE)
    app_page.open_section(ASSUMPTIONS_TITLE)
    section_histogram = figure_element(app_page, "assumptions_histogram")
    overflow_tile = element(
        page.locator(".assumptions-readouts [data-testid=precision-non-finite]")
    )
    roles = {"slider": "slider", "switch": "switch"}
    pairs = {
        name: (
            page.get_by_role(roles[CONTROL_BY_NAME[name].widget], name=CONTROL_BY_NAME[name].label),
            section_histogram,
        )
        for name in LAW_CONTROLS
    }
    pairs["precision"] = (page.get_by_role("button", name="float16", exact=True), overflow_tile)
    pairs["subtract_max"] = (
        page.get_by_role("switch", name=CONTROL_BY_NAME["subtract_max"].label),
        overflow_tile,
    )
    pairs["Train"] = (
        page.get_by_role("button", name="Train", exact=True),
        figure_element(app_page, "training_loss"),
    )
    pairs["worked example"] = (
        page.get_by_role("switch", name="show the steps unscaled"),
        element(page.get_by_test_id("worked-output").filter(visible=True)),
    )
    pairs["query i"] = (page.get_by_label("query i"), figure_element(app_page, "row_comparison"))
    spans = {
        label: page.evaluate(SPAN_JS, [element(control), target])
        for label, (control, target) in pairs.items()
    }
    too_far = {label: span for label, span in spans.items() if span > size["height"]}
    assert not too_far, f"farther apart than one {size['height']} px screen: {too_far}"
    # The section's histogram is the scaled one of the first screen, title and all.
    title = "(name) => sdpaFigure(name).title.text"
    assert page.evaluate(title, "assumptions_histogram") == page.evaluate(title, "scaled_histogram")


def test_the_quiz_labels_are_whole(app_page: AppPage) -> None:
    """No answer box's label is cut off with an ellipsis (issue 26)."""
    app_page.open()
    page = app_page.page
    for label in (DIVISOR_LABEL, SQRT_LABEL):
        box = page.get_by_label(label)
        expect(box).to_be_visible()
        cut = box.evaluate(
            """(input) => {
              const label = input.closest('label');
              return label.scrollWidth > label.clientWidth;
            }"""
        )
        assert not cut, f"the label {label!r} is cut off"


LAZY_BOX_JS = """(name) => {
  const lesson = [...Bokeh.documents[0].all_models].find(
    (m) => m.data && Array.isArray(m.data.opened));
  const record = window.SdpaDrawnLessons.find((one) => one[name])[name];
  return {opened: [...lesson.data.opened], readouts: record.readouts};
}"""
"""The lesson's open sections and how many readouts section ``name``'s session has sent
(once per group when it is built)."""

OPEN_COUNT_JS = """(count) => Bokeh.documents[0].is_idle && [...Bokeh.documents[0].all_models]
  .some((m) => m.data && Array.isArray(m.data.opened) && m.data.opened.length === count)"""
"""True once the session is idle and holds ``count`` open lazy sections."""


def test_a_lazy_section_closes_and_opens_again_on_the_page_without_a_second_build(
    app_page: AppPage,
) -> None:
    """The section's button hides its box and shows it again; the session builds the
    section once, and the keyboard works it as the mouse does."""
    app_page.open()
    app_page.open_section(ASSUMPTIONS_TITLE)
    button = app_page.page.get_by_role("button", name=ASSUMPTIONS_TITLE)
    box = app_page.page.locator(f"#{button.get_attribute('aria-controls')}")
    expect(box).to_be_visible()
    built = app_page.page.evaluate(LAZY_BOX_JS, "assumptions")
    assert built == {"opened": ["assumptions"], "readouts": 2}, "each group's, once"

    button.focus()
    button.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(box).to_be_hidden()
    app_page.page.wait_for_function(OPEN_COUNT_JS, arg=0)

    button.press("Space")
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(box).to_be_visible()
    app_page.page.wait_for_function(OPEN_COUNT_JS, arg=1)
    assert app_page.page.evaluate(LAZY_BOX_JS, "assumptions") == built, "built once"
