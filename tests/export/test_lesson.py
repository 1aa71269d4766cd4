"""The lesson below the offline page's first screen, against the served page's views.

Each section is compared value for value with the served view for the same state, in
Chromium from file:// with the network blocked, after moving the controls with the
keyboard; and the lesson's pure functions (lesson.js) under Node.js.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from app.page.lesson import collapse_spec, collapse_table
from app.page.views.collapse import (
    COLLAPSE_D_VALUES,
    METRICS,
    curve_data,
    curves,
    marker_caption,
    marker_data,
)
from app.page.views.heatmap import row_outline
from app.page.views.row_compare import BAR_OFFSET, LEGEND, TITLE
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROLS, SEED_BOUNDS, TEMPERATURE_GRID
from app.simulation.state import SimulationState

from .conftest import OfflinePage
from .js_harness import Runner

LABEL = {control.name: control.label for control in CONTROLS}
TOLERANCE = 1e-6


def test_the_collapse_table_holds_the_served_curves() -> None:
    table = collapse_table(TEMPERATURE_GRID)
    for t in (0, 16, len(TEMPERATURE_GRID) - 1):
        served = curves(TEMPERATURE_GRID[t])
        for s, scaled in enumerate((True, False)):
            for m, metric in enumerate(METRICS):
                band = getattr(served[scaled], metric.name)
                np.testing.assert_array_equal(table[t, s, m], [band.mean, band.low, band.high])


@pytest.mark.parametrize("d_k", [1, 3, 64, 100, 512, 1024])
@pytest.mark.parametrize("scaled", [True, False])
def test_the_marker_and_caption_match_the_served_ones(node: Runner, d_k: int, scaled: bool) -> None:
    spec = collapse_spec()
    t = 7
    temperature = TEMPERATURE_GRID[t]
    table = collapse_table(TEMPERATURE_GRID).ravel()
    marker, caption = node(
        [
            ("lesson", "collapseMarker", [spec, table, t, d_k, scaled]),
            ("lesson", "collapseCaption", [spec, d_k, scaled, temperature]),
        ]
    )
    expected = marker_data(curves(temperature)[scaled], d_k, scaled)
    assert marker["d"] == expected["d"] and marker["colour"] == expected["colour"]
    for metric in METRICS:
        assert marker[metric.name] == pytest.approx(expected[metric.name], abs=TOLERANCE)
    assert caption == re.sub(r"<[^>]+>", "", marker_caption(d_k, scaled, temperature))


def source_data(opened: OfflinePage, name: str) -> dict[str, Any]:
    """A lesson source's columns as lists (Bokeh's typed arrays too)."""
    return opened.page.evaluate(
        """(name) => {
            const source = SdpaExport.page.models[name];
            return Object.fromEntries(
                Object.entries(source.data).map(([key, value]) => [key, Array.from(value)]),
            );
        }""",
        name,
    )


def press(opened: OfflinePage, role: str, name: str, key: str) -> None:
    """Press ``key`` on a control; wait for the first screen and then the lesson."""
    count = opened.updates()
    lesson = opened.snapshot()["lesson_updates"]
    opened.page.get_by_role(role, name=name, exact=True).press(key)
    opened.wait_for_update_after(count)
    opened.wait_for_lesson_after(lesson)


def assert_collapse_matches_served(opened: OfflinePage) -> None:
    state = opened.snapshot()["state"]
    served = curves(state["temperature"])
    for name, scaled, label in (
        ("collapse_scaled", True, "scaled"),
        ("collapse_unscaled", False, "unscaled"),
    ):
        shown = source_data(opened, name)
        expected = curve_data(served[scaled], label)
        assert set(shown) == set(expected)
        assert shown["curve"] == list(expected["curve"])
        for column, values in expected.items():
            if column != "curve":
                np.testing.assert_allclose(shown[column], values, rtol=0, atol=TOLERANCE)
    marker = source_data(opened, "collapse_marker")
    expected = marker_data(served[state["scaled"]], state["d_k"], state["scaled"])
    assert marker["colour"] == expected["colour"]
    for column in ("d", *(metric.name for metric in METRICS)):
        np.testing.assert_allclose(marker[column], expected[column], rtol=0, atol=TOLERANCE)
    caption = opened.page.get_by_test_id("collapse-caption").inner_text()
    served_caption = marker_caption(state["d_k"], state["scaled"], state["temperature"])
    assert caption == re.sub(r"<[^>]+>", "", served_caption)


@pytest.mark.browser
def test_the_collapse_curves_follow_the_controls_as_the_served_ones_do(open_export) -> None:
    opened = open_export()
    assert_collapse_matches_served(opened)
    press(opened, "slider", LABEL["temperature"], "Home")
    assert_collapse_matches_served(opened)
    press(opened, "switch", LABEL["scaled"], "Space")
    press(opened, "slider", LABEL["d_k"], "ArrowLeft")
    assert_collapse_matches_served(opened)
    press(opened, "slider", LABEL["temperature"], "End")
    press(opened, "slider", LABEL["d_k"], "End")
    state = opened.snapshot()["state"]
    assert (state["temperature"], state["d_k"], state["scaled"]) == (20, 512, False)
    assert_collapse_matches_served(opened)
    # The three figures are drawn, each with its curves, bands, references and marker.
    names = [f"collapse_{metric.name}" for metric in METRICS]
    for name in names:
        assert opened.model(name, "m.renderers.length") >= 8
    assert len(COLLAPSE_D_VALUES) == len(source_data(opened, "collapse_scaled")["d"])


@pytest.mark.browser
def test_a_link_temperature_off_the_slider_uses_the_nearest_curves(open_export) -> None:
    opened = open_export("?temperature=0.33&scaled=false&d_k=256")
    state = opened.snapshot()["state"]
    assert state["temperature"] == 0.33
    shown = source_data(opened, "collapse_unscaled")
    expected = curve_data(curves(0.3)[False], "unscaled")
    np.testing.assert_allclose(shown["entropy"], expected["entropy"], rtol=0, atol=TOLERANCE)
    caption = opened.page.get_by_test_id("collapse-caption").inner_text()
    assert caption == re.sub(r"<[^>]+>", "", marker_caption(256, False, 0.3))


def served_model(state: dict[str, Any]) -> SimulationModel:
    """The served page's model for an offline page's state (seed 0, as exported)."""
    assert state["seed"] == SEED_BOUNDS[0]
    return SimulationModel(SimulationState(**state))


def assert_row_and_output_match_served(opened: OfflinePage) -> dict[str, Any]:
    state = opened.snapshot()["state"]
    model = served_model(state)
    row = model.row
    for name, weights, offset in (
        ("row_scaled", row.scaled, -BAR_OFFSET),
        ("row_unscaled", row.unscaled, BAR_OFFSET),
    ):
        shown = source_data(opened, name)
        np.testing.assert_allclose(shown["x"], row.keys + offset, rtol=0, atol=1e-12)
        np.testing.assert_allclose(shown["weight"], weights, rtol=0, atol=1e-5)
    assert opened.model("row_comparison", "m.title.text") == TITLE.format(
        row=row.row, keys=row.keys.size
    )
    labels = opened.page.evaluate(
        "() => ['row_scaled_item', 'row_unscaled_item']"
        ".map((name) => SdpaExport.page.models[name].label.value)"
    )
    assert labels == [
        LEGEND[True].format(entropy=f"{row.scaled_entropy:.2f}"),
        LEGEND[False].format(entropy=f"{row.unscaled_entropy:.2f}"),
    ]
    outline = source_data(opened, "row_outline")
    assert outline == row_outline(state["n"], row.row)
    output = model.output
    shown = opened.page.evaluate(
        """() => {
            const data = SdpaExport.page.models.output_source.data;
            return [data.values[0].shape, Array.from(data.values[0]),
                    Array.from(data.output[0]), data.n[0]];
        }"""
    )
    shape, values, result, n = shown
    assert shape == list(output.values_image.shape) and n == state["n"]
    np.testing.assert_array_equal(np.reshape(values, shape), output.values_image)
    np.testing.assert_allclose(np.reshape(result, shape), output.output_image, atol=1e-5)
    mapper = opened.page.evaluate(
        "() => { const m = SdpaExport.page.models.output_mapper; return [m.low, m.high]; }"
    )
    assert mapper == pytest.approx([-output.limit, output.limit], rel=1e-12)
    assert opened.model("output_heatmap", "[m.y_range.start, m.y_range.end]") == [n, 0]
    return state


@pytest.mark.browser
def test_one_query_and_the_output_follow_the_controls_as_the_served_ones_do(
    open_export,
) -> None:
    opened = open_export("?row=5&d_k=256")
    assert assert_row_and_output_match_served(opened)["row"] == 5
    press(opened, "switch", LABEL["scaled"], "Space")
    press(opened, "slider", LABEL["temperature"], "ArrowLeft")
    assert_row_and_output_match_served(opened)
    press(opened, "switch", LABEL["causal"], "Space")
    assert_row_and_output_match_served(opened)
    press(opened, "slider", LABEL["n"], "End")
    assert assert_row_and_output_match_served(opened)["n"] == 128


@pytest.mark.browser
def test_a_query_is_picked_by_typing_it_or_clicking_the_heatmap(open_export) -> None:
    opened = open_export("?n=16")
    page = opened.page
    box = page.get_by_role("textbox", name=LABEL["row"])
    lesson = opened.snapshot()["lesson_updates"]
    box.fill("9")
    box.press("Enter")
    opened.wait_for_lesson_after(lesson)
    assert assert_row_and_output_match_served(opened)["row"] == 9
    page.wait_for_function("() => location.search.includes('row=9')")
    # A click on the heatmap's row 3 (of 16) picks query 3; the box follows.
    page.locator(".sdpa-heatmap").scroll_into_view_if_needed()
    frame = opened.page.evaluate(
        """() => {
            const view = Bokeh.index.find_one(SdpaExport.page.models.heatmap);
            const box = view.frame.bbox;
            const rect = view.canvas_view.el.getBoundingClientRect();
            return [rect.left + box.left, rect.top + box.top, box.width, box.height];
        }"""
    )
    left, top, width, height = frame
    lesson = opened.snapshot()["lesson_updates"]
    page.mouse.click(left + width / 2, top + height * 3.5 / 16)
    opened.wait_for_lesson_after(lesson)
    assert assert_row_and_output_match_served(opened)["row"] == 3
    assert box.input_value() == "3"


def visible_text(html: str) -> str:
    """The words of served markup, spaces collapsed (as a page's innerText reads them)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.browser
def test_the_faq_and_the_worked_example_show_the_served_texts(open_export) -> None:
    from app.page.kernel_data import D_MAX_DEFAULT
    from app.page.lesson import note_beyond_reach
    from app.page.lesson_text import FAQ
    from app.page.views.worked_example import SWITCH_LABEL, worked_example, worked_example_html

    opened = open_export()
    page = opened.page
    faq = " ".join(page.get_by_test_id("faq").inner_text().split())
    for text in FAQ:
        # The served words, with a note after each d_k the file's slider cannot reach.
        noted = note_beyond_reach(text.replace("**", ""), D_MAX_DEFAULT)
        assert " ".join(noted.split()) in faq
    section = page.get_by_test_id("worked-example")
    examples = {scaled: worked_example(scaled) for scaled in (True, False)}

    def shown() -> str:
        visible = section.locator("#sdpa-worked-scaled, #sdpa-worked-unscaled").filter(
            has_not=page.locator("[hidden]")
        )
        texts = [block.inner_text() for block in visible.all() if block.is_visible()]
        assert len(texts) == 1
        return " ".join(texts[0].split())

    def served(scaled: bool) -> str:
        html = worked_example_html(examples[scaled], examples[not scaled])
        return visible_text(note_beyond_reach(html, D_MAX_DEFAULT))

    assert shown().replace(" ", "") == served(True).replace(" ", "")
    switch = page.get_by_role("switch", name=SWITCH_LABEL)
    switch.press("Space")
    assert switch.is_checked()
    assert shown().replace(" ", "") == served(False).replace(" ", "")
    unscaled = note_beyond_reach(
        worked_example_html(examples[False], examples[True]), D_MAX_DEFAULT
    )
    (sentence,) = re.findall(r'data-testid="worked-result">(.*?)</p>', unscaled)
    assert page.get_by_test_id("worked-result").filter(visible=True).inner_text() == sentence
    switch.press("Space")
    assert shown().replace(" ", "") == served(True).replace(" ", "")


@pytest.mark.browser
def test_the_preset_selector_applies_a_scene_as_the_served_one_does(open_export) -> None:
    from app.simulation.presets import PRESETS
    from app.simulation.spec import NO_PRESET_LABEL, PRESET_LABEL

    from .test_browser import assert_weights_match_core

    opened = open_export("?preset=lesson", width=1280, height=800)
    page = opened.page
    scenes = page.get_by_role("group", name=PRESET_LABEL)

    def pressed() -> list[str]:
        """The scene buttons shown pressed (one at a time)."""
        return scenes.locator("button[aria-pressed=true]").all_inner_texts()

    # The scenes as the file words them (within its d_k), by key.
    labels = dict(opened.page.evaluate("SdpaExport.config.widgets.preset.choices"))
    assert pressed() == [labels["lesson"]]
    count = opened.updates()
    scenes.get_by_role("button", name=labels["causal"], exact=True).click()
    opened.wait_for_update_after(count)
    snapshot = opened.snapshot()
    causal = PRESETS["causal"]
    assert snapshot["preset"] == "causal"
    state = snapshot["state"]
    for name, value in causal.values.items():
        if name in state:
            assert state[name] == value, name
    assert_weights_match_core(opened)
    assert opened.model("scene", "m.text") == (
        f"Preset scene: {causal.label}. {causal.description}"
    )
    page.wait_for_function("() => location.search.startsWith('?preset=causal&')")
    assert pressed() == [labels["causal"]]
    # A control moved away from the scene leaves it; the scenes' buttons say so.
    press(opened, "slider", LABEL["temperature"], "ArrowRight")
    assert opened.snapshot()["preset"] == ""
    assert pressed() == [NO_PRESET_LABEL]
    assert opened.model("scene", "m.visible") is False


QUIZ_ANSWERS = [
    "",
    "   ",
    "8",
    " 8.0 ",
    "８",
    "8e0",
    "1_0",
    "nan",
    "inf",
    "64",
    "sqrt",
    "np.sqrt",
    "NP.SQRT()",
    "numpy.sqrt",
    "np.sqrt(d_k)",
    "math.sqrt",
    "\u2003np.sqrt\u00a0",
    "x" * 33,
    " " * 40,
    "8" + " " * 40,
    "<script>",
]
"""Answers for both graders: right, wrong, blank, spaced, too long, Unicode digits."""


def test_the_quiz_grades_as_the_served_one(node: Runner) -> None:
    from dataclasses import asdict

    from app.page.lesson import quiz_spec
    from app.page.views import quiz
    from app.simulation.query import query_spec

    spec, rules = quiz_spec(), query_spec()
    calls = [
        ("lesson", "answerFeedback", [question, answer, spec, rules])
        for question in ("divisor", "sqrt")
        for answer in QUIZ_ANSWERS
    ]
    keys = [item.key for item in quiz.MATCH_ITEMS]
    choices = ["", *quiz.MATCH_CHOICES]
    matchings = [
        dict(zip(keys, (choices[(i + j * seed) % len(choices)] for j in range(4)), strict=True))
        for seed in range(5)
        for i in range(5)
    ]
    matchings.append({item.key: item.answer for item in quiz.MATCH_ITEMS})
    calls += [("lesson", "matchingFeedback", [answers, spec]) for answers in matchings]
    results = node(calls)
    expected = [
        grader(answer)
        for grader in (quiz.divisor_feedback, quiz.sqrt_blank_feedback)
        for answer in QUIZ_ANSWERS
    ]
    expected += [quiz.matching_feedback(answers) for answers in matchings]
    for call, result, served in zip(calls, results, expected, strict=True):
        shown = {key: result[key] for key in ("correct", "title", "message")}
        assert shown == asdict(served), call[2][:2]
        assert result["severity"] == served.severity
        if call[1] == "matchingFeedback":
            assert result["results"] == quiz.check_matching(call[2][0])


@pytest.mark.browser
def test_the_quiz_gives_its_feedback_in_the_page(open_export) -> None:
    from app.page.views import quiz

    page = open_export().page

    def feedback(number: int) -> str:
        box = page.locator(f".quiz-feedback-{number}")
        assert box.is_visible()
        return " ".join(box.inner_text().split())

    def served(result: quiz.Feedback) -> str:
        return f"{result.title} {result.message}"

    answer = page.get_by_role("textbox", name=quiz.DIVISOR_LABEL)
    answer.fill(" 8.0 ")
    answer.press("Enter")
    assert feedback(1) == served(quiz.divisor_feedback(" 8.0 "))
    answer.fill("64")
    page.get_by_role("button", name=quiz.CHECK_LABEL.format(number=1)).press("Enter")
    assert feedback(1) == served(quiz.divisor_feedback("64"))
    blank = page.get_by_role("textbox", name=quiz.SQRT_LABEL)
    blank.fill("np.sqrt")
    page.get_by_role("button", name=quiz.CHECK_LABEL.format(number=2)).click()
    assert feedback(2) == served(quiz.sqrt_blank_feedback("np.sqrt"))
    answers = {"d16": "sqrt4", "d64": "one_hot"}
    for item in quiz.MATCH_ITEMS:
        if item.key in answers:
            page.get_by_role("combobox", name=item.label).select_option(answers[item.key])
    page.get_by_role("button", name=quiz.CHECK_LABEL.format(number=3)).click()
    assert feedback(3) == served(quiz.matching_feedback(answers))
    results = quiz.check_matching(answers)
    for item in quiz.MATCH_ITEMS:
        marked = page.get_by_role("combobox", name=item.label).get_attribute("aria-invalid")
        assert marked == ("false" if results[item.key] else "true"), item.key


FOCUSED = """() => {
    let element = document.activeElement;
    while (element?.shadowRoot?.activeElement) {
        element = element.shadowRoot.activeElement;
    }
    if (!element || element === document.body) {
        return "";
    }
    const label = element.labels?.[0] ?? element.closest("label");
    return (
        element.getAttribute("aria-label") ||
        (label ? label.textContent : "") ||
        element.getAttribute("placeholder") ||
        element.textContent ||
        ""
    ).replace(/\\s+/g, " ").trim();
}"""
"""The accessible words of the element that has the keyboard focus (inside shadow roots)."""


@pytest.mark.browser
def test_the_keyboard_reaches_every_control_of_the_page_and_the_lesson(open_export) -> None:
    from app.page.views import quiz
    from app.page.views.training_grid import TRAINING_TITLE
    from app.page.views.worked_example import SWITCH_LABEL
    from app.simulation.spec import NO_PRESET_LABEL, VIEWS

    page = open_export(width=1280, height=800).page
    reached = []
    for _ in range(80):
        page.keyboard.press("Tab")
        reached.append(page.evaluate(FOCUSED))
    text = "\n".join(reached)
    expected = [
        LABEL["d_k"],
        LABEL["temperature"],
        LABEL["n"],
        LABEL["scaled"],
        "More controls",
        NO_PRESET_LABEL,  # the preset scenes' first button
        VIEWS["weights"],
        LABEL["causal"],
        TRAINING_TITLE,
        LABEL["row"],
        SWITCH_LABEL,
        quiz.DIVISOR_LABEL,
        quiz.CHECK_LABEL.format(number=1),
        quiz.SQRT_LABEL,
        quiz.CHECK_LABEL.format(number=2),
        *(item.label for item in quiz.MATCH_ITEMS),
        quiz.CHECK_LABEL.format(number=3),
    ]
    missing = [words for words in expected if words not in text]
    assert missing == [], reached


SPAN_JS = """([control, target]) => {
  const a = control.getBoundingClientRect(), b = target.getBoundingClientRect();
  return Math.max(a.bottom, b.bottom) - Math.min(a.top, b.top);
}"""
"""The height of the smallest strip of the page that holds both elements whole."""

FIGURE_JS = """(name) => {
  const model = Bokeh.documents.map((d) => d.get_model_by_name(name)).find((m) => m);
  const view = model && Bokeh.index.find_one(model);
  return view && view.el.getBoundingClientRect().height > 0 ? view.el : null;
}"""
"""The element Bokeh draws the figure ``name`` in, once it is drawn and shown."""


@pytest.mark.browser
@pytest.mark.parametrize("size", [(1280, 800), (400, 700)])
def test_every_lesson_control_shares_a_screen_with_what_it_changes(
    open_export, size: tuple[int, int]
) -> None:
    """As on the served page: each control of the lesson and the figure or readout it
    changes fit in one viewport together (issue 26)."""
    from app.page.assumptions import SECTION_GROUPS
    from app.page.views.worked_example import SWITCH_LABEL

    width, height = size
    opened = open_export(width=width, height=height)
    opened.open_sections()
    page = opened.page
    histogram = page.wait_for_function(FIGURE_JS, arg="assumptions_histogram").as_element()
    overflow = page.locator("#sdpa-assumptions-precision-readouts").element_handle()
    pairs = {
        name: (page.get_by_role("slider", name=LABEL[name]), histogram)
        for name in SECTION_GROUPS["law"]
    }
    pairs["precision"] = (page.get_by_role("button", name="float16", exact=True), overflow)
    pairs["subtract_max"] = (page.get_by_role("switch", name=LABEL["subtract_max"]), overflow)
    pairs["worked example"] = (
        page.get_by_role("switch", name=SWITCH_LABEL),
        page.locator("#sdpa-worked-scaled").element_handle(),
    )
    pairs["query i"] = (
        page.get_by_role("textbox", name=LABEL["row"]),
        page.wait_for_function(FIGURE_JS, arg="row_comparison").as_element(),
    )
    spans = {
        label: page.evaluate(SPAN_JS, [control.element_handle(), target])
        for label, (control, target) in pairs.items()
    }
    too_far = {label: span for label, span in spans.items() if span > height}
    assert not too_far, f"farther apart than one {height} px screen: {too_far}"
