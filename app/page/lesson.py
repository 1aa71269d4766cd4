"""The lesson below an exported page's first screen, from the served page's own sources.

The collapse curves are the served view's figures (app/page/views/collapse.py), their numbers
precomputed by :mod:`sdpa_core` at export time for every temperature the slider offers;
the texts are the served page's constants, rendered from their Markdown here. The page's
lesson.js redraws the figures from this data as the controls move.
"""

from __future__ import annotations

import base64
import html as html_text
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from bokeh.layouts import column, row
from bokeh.models import CustomJS, Model, NumericInput
from markdown_it import MarkdownIt

import sdpa_core
from app.page import ASSETS
from app.page.kernel_data import ExportData
from app.page.lesson_text import COLLAPSE_CURVES, FAQ, QUIZ, WORKED_EXAMPLE
from app.page.views import output as output_view
from app.page.views import quiz, row_compare
from app.page.views import worked_example as worked
from app.page.views.collapse import (
    CAPTION_CSS,
    COLLAPSE_D_VALUES,
    COLLAPSE_HEADING,
    COLLAPSE_N,
    COLLAPSE_TRIALS,
    MARKER_CAPTION,
    MARKER_CURVES,
    METRICS,
    SCALED_COLOUR,
    UNSCALED_COLOUR,
    CollapseView,
    curves,
    references_caption,
    uniform_references,
)
from app.simulation.model import SimulationModel
from app.simulation.parts import OUTPUT_DIM
from app.simulation.spec import CONTROL_BY_NAME, ROW_BOUNDS

BAND_PARTS = ("mean", "low", "high")
"""What each metric of a curve carries, in the order the page's data holds them."""


BEYOND_REACH = " [on the served page: this file's d_k stops at {d_max}]"
"""The note after a value of d_k the lesson's words cite and this page's slider cannot reach
(``str.format``: ``d_max``, the page's largest d_k). Square brackets, an editor's note: the
served sentence may already be in parentheses."""

_D_K_CITED = re.compile(r"\bd_k = (\d+)\b")


def note_beyond_reach(text: str, d_max: int) -> str:
    """The lesson's HTML ``text`` with each "d_k = N" past ``d_max`` followed by
    :data:`BEYOND_REACH`: the served lesson's words stay as written, and say when they cite
    a d_k this page does not have."""
    note = BEYOND_REACH.format(d_max=d_max)
    return _D_K_CITED.sub(
        lambda cited: cited.group(0) + (note if int(cited.group(1)) > d_max else ""), text
    )


def markdown_html(text: str) -> str:
    """Trusted Markdown (the lesson's constants) as HTML, as the served Markdown pane shows it."""
    return MarkdownIt("commonmark").render(text)


def encode_float64(array: np.ndarray) -> str:
    """Base64 of the little-endian float64 bytes of ``array`` (what lesson.js decodes)."""
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f8").tobytes()).decode("ascii")


def collapse_table(temperatures: tuple[float, ...]) -> np.ndarray:
    """The served curves at each temperature: shape (temperature, scaled then unscaled,
    metric, mean/low/high, d_k point), float64, exactly as sdpa_core has them."""
    table = np.empty((len(temperatures), 2, len(METRICS), len(BAND_PARTS), len(COLLAPSE_D_VALUES)))
    for t, temperature in enumerate(temperatures):
        pair = curves(temperature)
        for s, scaled in enumerate((True, False)):
            for m, metric in enumerate(METRICS):
                band = getattr(pair[scaled], metric.name)
                for b, part in enumerate(BAND_PARTS):
                    table[t, s, m, b] = getattr(band, part)
    return table


def collapse_spec() -> dict:
    """What lesson.js draws the collapse curves from: the slider's temperatures, the curves'
    d_k points and table (:func:`collapse_table`), the metrics' names, the words and
    colours of the two curves and the marker's caption with its numbers to fill in
    (``{0}`` d_k, ``{1}`` which curves, ``{2}`` the temperature)."""
    temperatures = tuple(CONTROL_BY_NAME["temperature"].grid)
    return {
        "temperatures": list(temperatures),
        "d_values": list(COLLAPSE_D_VALUES),
        "metrics": [metric.name for metric in METRICS],
        "labels": ["scaled", "unscaled"],
        "colours": [SCALED_COLOUR, UNSCALED_COLOUR],
        "which": [MARKER_CURVES[True], MARKER_CURVES[False]],
        "caption": MARKER_CAPTION.format(
            d_k="{0}", which="{1}", temperature="{2}", n=COLLAPSE_N, trials=COLLAPSE_TRIALS
        ),
        "table": encode_float64(collapse_table(temperatures)),
    }


ROW = CONTROL_BY_NAME["row"]
"""The query the row comparison shows: a control of the state that only the lesson sets
(its box, or a click on the heatmap)."""

LESSON_CONTROLS = (ROW.name,)
"""Controls of the state the lesson sets (no widget of the spec's): the page reads them from
a link and writes them into its URL, as the served page does."""


def row_spec() -> dict:
    """What lesson.js needs for the row comparison: the state's name for the query, its
    bounds, the bars' offset and the served figure's title and legend words (``{row}``,
    ``{keys}`` and ``{entropy}`` to fill in)."""
    return {
        "name": ROW.name,
        "bounds": list(ROW_BOUNDS),
        "default": ROW.default,
        "offset": row_compare.BAR_OFFSET,
        "title": row_compare.TITLE,
        "legend": [row_compare.LEGEND[True], row_compare.LEGEND[False]],
    }


def output_spec(data: ExportData) -> dict:
    """The values V the output view multiplies the weights with: the first n_max rows of
    ``sdpa_core.sample_values`` (nested, so every n is a top block), float64 in base64."""
    values = sdpa_core.sample_values(data.n_max, OUTPUT_DIM, data.seed)
    return {"dim": OUTPUT_DIM, "values": encode_float64(values)}


OFFLINE_ROW_INPUT = "SdpaExport.onRowInput(cb_obj);"
"""What the file's row box calls with itself when its value changes (controller.js)."""


ROW_INPUT_CSS = """
:host {
  --color: var(--sdpa-text, #18191d);
  --background-color: var(--sdpa-paper, #fff);
  --border-color: var(--sdpa-border, #bbbbbd);
  --placeholder-color: var(--sdpa-muted-text, #9a9b9d);
  color: var(--sdpa-text, #18191d);
}
"""
"""The query box's colours: BokehJS's own, or the dark theme's custom properties
(app/page/theme.py) wherever a page sets them (the file's system scheme, the served
page's toggle)."""


def _row_input(state_row: int, n: int, on_change: str) -> NumericInput:
    """The box that picks the query, labelled as the served one; ``on_change`` is the
    JavaScript that hears its value (``cb_obj``)."""
    box = NumericInput(
        title=ROW.label,
        mode="int",
        low=ROW_BOUNDS[0],
        high=n - 1,
        value=state_row,
        width=140,
        name="row_input",
        stylesheets=[ROW_INPUT_CSS],
    )
    box.js_on_change("value", CustomJS(code=on_change))
    return box


def row_views(model: SimulationModel, on_change: str) -> tuple[Model, dict[str, Model]]:
    """The row comparison's root (the query's box above the figure) and the models
    lesson_drawing.js's RowDrawing draws into, by its names; ``on_change`` hears the box."""
    rows = row_compare.RowCompareView(model)
    row_input = _row_input(model.state.row, model.state.n, on_change)
    root = column(row_input, rows.figure, sizing_mode="stretch_width", name="row_panel")
    legend = rows.figure.legend[0].items
    return root, {
        "row_figure": rows.figure,
        "row_scaled": rows.scaled,
        "row_unscaled": rows.unscaled,
        "row_scaled_item": legend[0],
        "row_unscaled_item": legend[1],
        "row_input": row_input,
    }


def output_views(model: SimulationModel) -> tuple[Model, dict[str, Model]]:
    """The output's root (V beside weights·V) and the models lesson_drawing.js's
    OutputDrawing draws into, by its names."""
    output = output_view.OutputView(model)
    root = row(
        output.values_figure, output.output_figure, sizing_mode="stretch_width", name="output_panel"
    )
    return root, {
        "output_source": output.source,
        "output_mapper": output.mapper,
        "values_figure": output.values_figure,
        "output_figure": output.output_figure,
    }


def why_html() -> dict[str, str]:
    """The row comparison's and the output's words as HTML, by template variable."""
    return {
        "row_intro": markdown_html(row_compare.EXPLANATION),
        "output_intro": markdown_html(output_view.EXPLANATION),
    }


@dataclass
class LessonViews:
    """The lesson's Bokeh roots (for the template, by name), the models lesson.js updates
    (by the names it uses) and its fixed HTML (by template variable)."""

    roots: dict[str, Model]
    models: dict[str, Model]
    html: dict[str, str]
    collapse_figures: list[str]
    """The collapse figures' root names, left to right."""
    faq: list[str]
    """The FAQ's answers as HTML, in reading order."""


def build_lesson(model: SimulationModel, heatmap_figure: Model) -> LessonViews:
    """The lesson's views for the model's state; a tap on ``heatmap_figure`` picks the
    query of the row comparison."""
    collapse = CollapseView(model)
    roots: dict[str, Model] = {fig.name: fig for fig in collapse.figures}
    models: dict[str, Model] = collapse_models(collapse)
    roots["row_panel"], row_models = row_views(model, OFFLINE_ROW_INPUT)
    models.update(row_models)
    heatmap_figure.js_on_event("tap", CustomJS(code="SdpaExport.onHeatmapTap(cb_obj.y);"))
    roots["output_panel"], output_models = output_views(model)
    models.update(output_models)
    html = {
        **collapse_html(collapse),
        **why_html(),
        **worked_example_html(),
        "quiz": quiz_html(),
    }
    figures = [fig.name for fig in collapse.figures]
    return LessonViews(
        roots=roots, models=models, html=html, collapse_figures=figures, faq=faq_html()
    )


def collapse_html(collapse: CollapseView) -> dict[str, str]:
    """The collapse section's words as HTML, by template variable: its heading and
    intro, the marker's caption (for the view's state) and the reference values' note."""
    return {
        "collapse_intro": markdown_html(f"{COLLAPSE_HEADING}\n\n{COLLAPSE_CURVES}"),
        "collapse_caption": collapse.caption,
        "collapse_references": references_caption(uniform_references()),
    }


def collapse_models(collapse: CollapseView) -> dict[str, Model]:
    """The models lesson_drawing.js's CollapseDrawing draws into, by its names."""
    return {
        "collapse_scaled": collapse.scaled_source,
        "collapse_unscaled": collapse.unscaled_source,
        "collapse_marker": collapse.marker_source,
    }


def faq_html() -> list[str]:
    """The FAQ's answers (app.served.sections.FAQ), in reading order, as HTML."""
    return [markdown_html(text) for text in FAQ]


def worked_example_html() -> dict[str, str]:
    """The worked example's heading and words, its switch's label, and its steps scaled and
    unscaled (the served view's HTML, computed by sdpa_core), by template variable."""
    examples = {scaled: worked.worked_example(scaled) for scaled in (True, False)}
    return {
        "worked_intro": markdown_html(f"{worked.HEADING}\n\n{WORKED_EXAMPLE}"),
        "worked_switch": worked.SWITCH_LABEL,
        "worked_scaled": worked.worked_example_html(examples[True], examples[False]),
        "worked_unscaled": worked.worked_example_html(examples[False], examples[True]),
    }


def quiz_spec() -> dict:
    """What lesson.js grades the quiz with, from app/page/views/quiz.py: the longest answer read,
    the divisor question 1 wants (found with the served grader), question 2's pattern, the
    matching items and their answers, and each question's feedback (None/True/False as
    "none"/"right"/"wrong")."""
    divisor = next(number for number in range(1, 1025) if quiz.check_divisor(str(number)))
    names = {None: "none", True: "right", False: "wrong"}
    return {
        "max_length": quiz.MAX_ANSWER_LENGTH,
        "divisor": divisor,
        "sqrt_pattern": quiz._SQRT_ANSWER.pattern,
        "items": [asdict(item) for item in quiz.MATCH_ITEMS],
        "feedback": {
            question: {names[key]: asdict(feedback) for key, feedback in table.items()}
            for question, table in (
                ("divisor", quiz.DIVISOR_FEEDBACK),
                ("sqrt", quiz.SQRT_BLANK_FEEDBACK),
                ("matching", quiz.MATCHING_FEEDBACK),
            )
        },
    }


def _feedback_box(number: int) -> str:
    return (
        f'<div class="quiz-feedback quiz-feedback-{number}" role="status" hidden>'
        '<strong class="quiz-title"></strong> <span class="quiz-message"></span></div>'
    )


def _answer_box(question: str, number: int, label: str, placeholder: str) -> str:
    escape = html_text.escape
    check = quiz.CHECK_LABEL.format(number=number)
    return (
        f'<div class="quiz-row"><label class="quiz-label">{escape(label)}'
        f'<input type="text" data-question="{question}" maxlength="{quiz.MAX_ANSWER_LENGTH}" '
        f'placeholder="{escape(placeholder)}" autocomplete="off" spellcheck="false"></label>'
        f'<button type="button" data-check="{question}">{escape(check)}</button></div>'
    )


def quiz_html() -> str:
    """The quiz as plain HTML from the served view's words: each question, its answer box or
    lists, its Check button and a hidden box for the feedback (lesson.js grades)."""
    escape = html_text.escape
    options = "".join(
        f'<option value="{escape(key)}">{escape(label)}</option>'
        for key, label in quiz.MATCH_CHOICES.items()
    )
    selects = "".join(
        f'<label class="quiz-label">{escape(item.label)}<select data-item="{escape(item.key)}">'
        f'<option value="">{escape(quiz.CHOOSE_LABEL)}</option>{options}</select></label>'
        for item in quiz.MATCH_ITEMS
    )
    check = escape(quiz.CHECK_LABEL.format(number=3))
    questions = [
        markdown_html(quiz.PROMPTS[0])
        + _answer_box("divisor", 1, quiz.DIVISOR_LABEL, quiz.DIVISOR_PLACEHOLDER)
        + _feedback_box(1),
        markdown_html(quiz.PROMPTS[1])
        + _answer_box("sqrt", 2, quiz.SQRT_LABEL, quiz.SQRT_PLACEHOLDER)
        + _feedback_box(2),
        markdown_html(quiz.PROMPTS[2])
        + f'<div class="quiz-row quiz-selects">{selects}</div>'
        + '<div class="quiz-row">'
        + f'<button type="button" data-check="matching">{check}</button></div>'
        + _feedback_box(3),
    ]
    return markdown_html(f"{quiz.HEADING}\n\n{QUIZ}") + "".join(
        f'<div class="quiz-question">{question}</div>' for question in questions
    )


LESSON_CSS = ASSETS / "lesson.css"
"""The stylesheet of the sections both pages draw alike (FAQ, collapse, worked, quiz)."""

FIGURES_SLOT = "<!-- sdpa-collapse-figures -->"
"""Where :func:`collapse_section` puts the collapse figures: each page fills it with its
own (the file's embedded roots, the served page's drawn figures)."""


def lesson_css() -> str:
    """The stylesheet of the lesson's sections both pages draw alike: lesson.css, the
    worked example's steps, the collapse caption and the quiz's code."""
    css = LESSON_CSS.read_text(encoding="utf-8")
    return css + worked.WORKED_CSS + CAPTION_CSS + quiz.CODE_CSS


def faq_section(answers: Sequence[str]) -> str:
    """The FAQ's section: its answers (HTML), side by side as the width allows."""
    cells = "".join(f"<div>{answer}</div>" for answer in answers)
    return f'<section class="sdpa-section sdpa-faq" data-testid="faq">{cells}</section>'


def collapse_section(html: Mapping[str, str]) -> str:
    """The collapse curves' section from :func:`build_lesson`'s HTML, its figures at
    :data:`FIGURES_SLOT` in a grid of as many columns as fit."""
    return (
        '<section class="sdpa-section" id="sdpa-collapse" data-testid="collapse">'
        f"{html['collapse_intro']}"
        f'<div class="sdpa-figure-grid">{FIGURES_SLOT}</div>'
        f'<div id="sdpa-collapse-caption">{html["collapse_caption"]}</div>'
        f"{html['collapse_references']}</section>"
    )


ROW_SLOT = "<!-- sdpa-row-panel -->"
OUTPUT_SLOT = "<!-- sdpa-output-panel -->"
"""Where :func:`why_section` puts the row comparison's and the output's figures."""


def why_section(html: Mapping[str, str]) -> str:
    """The row comparison beside the output, from :func:`why_html`, their figures at
    :data:`ROW_SLOT` and :data:`OUTPUT_SLOT`."""
    return (
        '<div class="sdpa-why">'
        '<section class="sdpa-section" id="sdpa-row" data-testid="row-compare">'
        f"{html['row_intro']}{ROW_SLOT}</section>"
        '<section class="sdpa-section" id="sdpa-output" data-testid="output">'
        f"{html['output_intro']}{OUTPUT_SLOT}</section></div>"
    )


def worked_section(html: Mapping[str, str]) -> str:
    """The worked example's section from :func:`worked_example_html`'s HTML: its words, the
    switch to the unscaled steps (lesson_drawing.js) and both sets of steps."""
    switch = html_text.escape(html["worked_switch"])
    return (
        '<section class="sdpa-section" id="sdpa-worked" data-testid="worked-example">'
        f"{html['worked_intro']}"
        '<label class="sdpa-switch"><input type="checkbox" role="switch" id="sdpa-worked-switch">'
        f" {switch}</label>"
        f'<div id="sdpa-worked-scaled">{html["worked_scaled"]}</div>'
        f'<div id="sdpa-worked-unscaled" hidden>{html["worked_unscaled"]}</div></section>'
    )


def quiz_section(html: Mapping[str, str]) -> str:
    """The quiz's section from :func:`quiz_html` (graded by lesson_drawing.js)."""
    return (
        '<section class="sdpa-section sdpa-quiz" id="sdpa-quiz" data-testid="quiz">'
        f"{html['quiz']}</section>"
    )


def lesson_config() -> dict:
    """The lesson's data for lesson.js and controller.js, by section (the output's values V
    go to the number source: :func:`output_spec`, app.export.page.source_config)."""
    return {
        "collapse": collapse_spec(),
        "row": row_spec(),
        "quiz": quiz_spec(),
    }
