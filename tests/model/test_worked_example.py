"""The lesson's 2×2 worked example: its numbers, its HTML tables and its switch."""

from __future__ import annotations

import math
from html import escape
from html.parser import HTMLParser

import numpy as np
import pytest

from app.page import lesson as page_lesson
from app.page import lesson_text
from app.page.views.worked_example import (
    SWITCH_LABEL,
    Q,
    V,
    format_number,
    matrix_table,
    worked_example,
    worked_example_html,
)


class StepTables(HTMLParser):
    """Collects, per ``data-testid`` step, the text of every table cell, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: dict[str, list[list[str]]] = {}
        self.tables = 0
        self._step: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        test_id = dict(attrs).get("data-testid")
        if tag == "div" and test_id and test_id.startswith("worked-"):
            self._step = test_id
            self.steps[test_id] = []
        elif tag == "table":
            self.tables += 1
        elif tag == "tr" and self._step:
            self.steps[self._step].append([])
        elif tag == "td":
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._step:
            self.steps[self._step][-1].append("".join(self._cell))
            self._cell = None


def parse(html: str) -> StepTables:
    parser = StepTables()
    parser.feed(html)
    return parser


SCALED_HTML = worked_example_html(worked_example(True), worked_example(False))
UNSCALED_HTML = worked_example_html(worked_example(False), worked_example(True))


def test_scaled_steps_match_the_lesson() -> None:
    example = worked_example(True)
    np.testing.assert_array_equal(example.scores, [[1, 1], [0, 2]])
    np.testing.assert_allclose(example.logits, example.scores / math.sqrt(2))
    assert example.divisor == pytest.approx(math.sqrt(2))
    np.testing.assert_allclose(example.weights.sum(axis=1), [1, 1])
    np.testing.assert_allclose(example.output, example.weights @ np.asarray(V))
    np.testing.assert_array_equal(np.round(example.output, 3), [[5, 5], [1.956, 8.044]])


def test_unscaled_steps_skip_the_division_and_end_elsewhere() -> None:
    scaled, unscaled = worked_example(True), worked_example(False)
    np.testing.assert_array_equal(unscaled.logits, unscaled.scores)
    assert unscaled.divisor == 1.0
    np.testing.assert_array_equal(np.round(unscaled.output, 3), [[5, 5], [1.192, 8.808]])
    # Row 1 scores both keys equally either way; only row 2 changes, and gets sharper.
    np.testing.assert_array_equal(unscaled.output[0], scaled.output[0])
    assert unscaled.weights[1, 1] > scaled.weights[1, 1]


def test_scaled_html_shows_every_step_as_numbers() -> None:
    steps = parse(SCALED_HTML).steps
    assert steps["worked-scores"] == [["1", "1"], ["0", "2"]]
    assert steps["worked-scale"] == [["0.707", "0.707"], ["0", "1.414"]]
    assert steps["worked-weights"] == [["0.5", "0.5"], ["0.196", "0.804"]]
    assert steps["worked-output"] == [["5", "5"], ["1.956", "8.044"]]
    # Q, K and V, one table after the other, in the first step.
    q, k, v = (["1", "1"], ["0", "2"]), (["1", "0"], ["0", "1"]), (["10", "0"], ["0", "10"])
    assert steps["worked-given"] == [*q, *k, *v]
    assert "√2 ≈ 1.414" in SCALED_HTML


def test_unscaled_html_ends_at_a_different_output() -> None:
    steps = parse(UNSCALED_HTML).steps
    assert steps["worked-scale"] == [["1", "1"], ["0", "2"]]
    assert steps["worked-output"] == [["5", "5"], ["1.192", "8.808"]]
    assert steps["worked-output"] != parse(SCALED_HTML).steps["worked-output"]
    assert "Skip the scale" in UNSCALED_HTML
    assert "instead of [1.956, 8.044]" in UNSCALED_HTML


def test_html_has_one_table_per_matrix_and_only_fixed_text() -> None:
    for html in (SCALED_HTML, UNSCALED_HTML):
        assert parse(html).tables == 7  # Q, K, V, S, scaled S, A, O
        assert "<script" not in html
        assert html.count("<table") == html.count("</table>")


@pytest.mark.parametrize(
    ("value", "text"),
    [(5.0, "5"), (1.95570317, "1.956"), (0.70710678, "0.707"), (10.0, "10"), (-0.0, "0"),
     (-0.0001, "0"), (0.5, "0.5"), (8.04429683, "8.044")],
)  # fmt: skip
def test_format_number_rounds_to_three_decimals_without_trailing_zeros(
    value: float, text: str
) -> None:
    assert format_number(value) == text


def test_matrix_table_rows_and_caption() -> None:
    html = matrix_table("Q", np.asarray(Q))
    assert html.startswith('<table class="matrix"><caption>Q</caption>')
    assert html.count("<tr>") == 2 and html.count("<td>") == 4


def test_the_section_holds_both_sets_of_steps_and_a_named_switch() -> None:
    """The page's section (both pages draw it) shows the scaled steps and hides the
    unscaled ones until its switch, a named ``role="switch"``, is turned."""
    section = page_lesson.worked_section(page_lesson.worked_example_html())
    assert lesson_text.WORKED_EXAMPLE in section
    assert '<input type="checkbox" role="switch" id="sdpa-worked-switch">' in section
    assert f" {escape(SWITCH_LABEL)}</label>" in section
    scaled = section.split('id="sdpa-worked-scaled">')[1].split('<div id="sdpa-worked-unscaled"')[0]
    assert parse(scaled).steps["worked-output"][1] == ["1.956", "8.044"]
    unscaled = section.split('<div id="sdpa-worked-unscaled" hidden>')[1]
    assert parse(unscaled).steps["worked-output"][1] == ["1.192", "8.808"]
