"""The lesson views in a real browser: they render, react, grade answers and set scenes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from conftest import LESSON_JS
from playwright.sync_api import expect

from app.views.lesson_gate import GATE_LABEL

if TYPE_CHECKING:
    from conftest import AppPage

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
    result = app_page.page.get_by_test_id("worked-output")
    expect(result).to_contain_text("1.956")
    expect(result).to_contain_text("8.044")


def test_worked_example_switches_to_unscaled_steps(app_page: AppPage) -> None:
    app_page.open()
    app_page.page.get_by_role("switch", name="show the steps unscaled").click()
    expect(app_page.page.get_by_test_id("worked-output")).to_contain_text("8.808")


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

    blank = page.get_by_label("Missing function in np.____(d_k)")
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
    page.get_by_label("preset scene").click()
    page.locator("li", has_text="Unscaled collapse").click()
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


def test_the_lesson_is_built_when_the_student_scrolls_to_it(app_page: AppPage) -> None:
    """A session sends the first screen only; scrolling near the lesson's button brings it."""
    app_page.open(lesson=False)
    page = app_page.page
    gate = page.get_by_role("button", name=GATE_LABEL)
    expect(gate).to_be_visible()
    assert page.evaluate("() => sdpaFigure('row_comparison')") is None
    page.mouse.move(640, 400)
    page.mouse.wheel(0, 400)
    page.wait_for_function(LESSON_JS)
    page.wait_for_function(FIGURES_HAVE_DATA_JS, arg=LESSON_FIGURES)
    expect(gate).to_have_count(0)


def test_the_lesson_button_opens_the_lesson_from_the_keyboard(app_page: AppPage) -> None:
    app_page.open(lesson=False)
    gate = app_page.page.get_by_role("button", name=GATE_LABEL)
    gate.focus()
    app_page.page.keyboard.press("Enter")
    app_page.page.wait_for_function(LESSON_JS)
    expect(gate).to_have_count(0)
