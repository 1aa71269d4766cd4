"""The served lesson's sections drawn in the browser: the FAQ, the collapse curves, the row
comparison beside the output, the worked example and the quiz.

They are the offline page's (app/page/lesson.py builds their figures and markup,
lesson_drawing.js draws and grades them): built and serialised once per process, so a
session holds one Bokeh model per component for them instead of ~330 (docs/performance.md,
"The served lesson"). A move sends what changed: the state the collapse curves' marker
shows (``view``, three values) and the row comparison's and output's numbers (``frame``,
the first screen's frame format, binary); the quiz is graded on the page, as in the file.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import panel as pn
import param

from app.compat import CheckedPageChanges
from app.page.bundle import BundledComponent
from app.page.figures import DARK_FIGURE_THEME
from app.page.lesson import (
    FIGURES_SLOT,
    OUTPUT_SLOT,
    ROW_SLOT,
    collapse_html,
    collapse_models,
    collapse_section,
    collapse_spec,
    faq_html,
    faq_section,
    lesson_css,
    output_views,
    quiz_html,
    quiz_section,
    quiz_spec,
    row_spec,
    row_views,
    why_html,
    why_section,
    worked_example_html,
    worked_section,
)
from app.page.views.collapse import METRICS, CollapseView
from app.page.views.disclosure import boxed_disclosure_css
from app.page.views.training_grid import CSS as TRAINING_CSS
from app.served.components.assumptions import (
    assumptions_config,
    assumptions_markup,
    section_stylesheets,
)
from app.served.components.class_bar import CLASS_CHART_CSS
from app.served.components.figures import embeddable_item
from app.served.components.framed import (
    FramedComponent,
    channel_address_parameter,
    finite_number,
)
from app.served.components.lazy_section import LazySection, lazy_markup
from app.served.components.training import BUTTONS_CSS, training_markup
from app.served.page_data import SharedData, canonical_ids
from app.served.ticks import once_page_loaded
from app.simulation.model import HISTOGRAMS, SimulationModel
from app.simulation.parts import OUTPUT_DIM
from app.simulation.query import query_spec
from app.simulation.spec import OUTPUT, ROW, ROW_BOUNDS
from app.simulation.state import SimulationState

Section = Literal["faq", "collapse", "why", "worked", "quiz"]
"""The sections a component can draw: the FAQ, the collapse curves, the row comparison
beside the output ("why"), the worked example and the quiz."""

LAZY_SECTIONS: dict[str, Callable[[], str]] = {
    "training": training_markup,
    "assumptions": assumptions_markup,
}
"""The lazy sections a lesson component can hold, by name: what gives their markup (built
once per process), which their box holds from the start."""

VIEW_CONTROLS = ("d_k", "scaled", "temperature")
"""The controls the collapse curves show (the marker's d_k and curve, the temperature's
curves): a move sends their values, nothing else."""

LESSON_FONT_CSS = """
:host { width: 100%; }
.sdpa-drawn-lesson {
  margin: 0 10px;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87));
}
.sdpa-drawn-lesson > .sdpa-disclosure { margin: 20px -10px 10px; }
.sdpa-drawn-lesson > .sdpa-lazy { margin: 0 -10px; }
"""
"""The served page's text look for the component's markup (Material UI's font and
colour), around lesson.css's rules; a lazy section's button and box span the lesson's
whole width, the button 20 px below the section above it and 10 px above the next."""


def view_of(state: SimulationState) -> dict[str, Any]:
    """What the collapse curves show of ``state``: :data:`VIEW_CONTROLS` by name."""
    return {name: getattr(state, name) for name in VIEW_CONTROLS}


CELL = '<div class="sdpa-figure-cell"></div>'
"""An empty cell the page embeds one figure item in (the items in document order)."""

ROW_INPUT_HOOK = "SdpaServedRowInput"
"""The page-wide function the row box's callback calls with the box: each page's
component registers its own box with it."""

NUMBER_PARTS = frozenset({ROW, OUTPUT})
"""The model parts whose numbers a session sends the lesson: the row comparison's and the
output's (the other sections draw from data built once and the state)."""


@dataclass(frozen=True)
class SectionFigures:
    """A section's figures as Bokeh JSON items (each its own document, embedded in the
    section's cells in order) and the ids of the models its drawing code draws, by name (a
    list of ids where each item holds its own copy)."""

    items: tuple[dict, ...]
    models: dict[str, str | list[str]]


@functools.cache
def _collapse_figures() -> SectionFigures:
    model = SimulationModel(SimulationState())
    # One item per figure, so the grid places them as the width allows. A document holds
    # its figure's sources alone: each figure comes from a view of its own (the three of
    # one view share theirs, which one document cannot hand out).
    views = [CollapseView(model) for _ in METRICS]
    items = tuple(embeddable_item(view.figures[i]) for i, view in enumerate(views))
    names = collapse_models(views[0])
    ids = {name: [collapse_models(view)[name].id for view in views] for name in names}
    return SectionFigures(items, ids)


@functools.cache
def _why_figures() -> SectionFigures:
    model = SimulationModel(SimulationState())
    on_change = f"globalThis.{ROW_INPUT_HOOK}?.(cb_obj);"
    row_root, row_models = row_views(model, on_change)
    output_root, output_models = output_views(model)
    models = {name: one.id for name, one in {**row_models, **output_models}.items()}
    return SectionFigures((embeddable_item(row_root), embeddable_item(output_root)), models)


FIGURES: dict[str, Callable[[], SectionFigures]] = {
    "collapse": _collapse_figures,
    "why": _why_figures,
}
"""The sections with figures, by name: what builds (once) their items."""


@functools.cache
def figure_items(sections: tuple[Section, ...]) -> dict[str, Any] | None:
    """The figures of ``sections`` for the page: their items in the order of the cells
    :func:`markup` gives them, and the ids of every model the page draws, by name; None when
    the sections have no figures."""
    built = [FIGURES[name]() for name in sections if name in FIGURES]
    if not built:
        return None
    items = [item for figures in built for item in figures.items]
    models = {name: one for figures in built for name, one in figures.models.items()}
    return {"items": items, "models": models}


def lesson_payload(
    sections: tuple[Section, ...],
    placed: tuple[tuple[str, str, str], ...],
    assumptions: bool,
) -> dict[str, Any]:
    """What a page's lesson of ``sections`` is drawn from, the same for every student
    (:class:`app.served.page_data.SharedData`): its markup with the lazy sections ``placed``,
    its figures (:func:`figure_items`) and the drawing config (the assumptions section's
    too when it has one), their model ids the same in every process."""
    config = lesson_config(sections)
    if assumptions:
        config = {**config, "assumptions": assumptions_config()}
    payload = {
        "html": lesson_markup(sections, placed),
        "figures": figure_items(sections),
        "config": config,
    }
    return canonical_ids(payload, "sdpa-lesson-")


def lesson_data(
    sections: tuple[Section, ...],
    placed: tuple[tuple[str, str, str], ...],
    assumptions: bool,
) -> tuple[Hashable, Callable[[], dict[str, Any]]]:
    """The page-data key of a lesson of ``sections`` (see :func:`lesson_payload`) and what
    builds its payload: for :meth:`SharedData.share` and :func:`app.served.page_data.register`."""
    key = ("lesson", sections, placed, assumptions)
    return key, functools.partial(lesson_payload, sections, placed, assumptions)


@functools.cache
def markup(sections: tuple[Section, ...]) -> str:
    """The HTML of ``sections``, in order, as the offline page has them; each figure's
    slot holds an empty cell (:data:`CELL`) for the page to embed it in."""
    model = SimulationModel(SimulationState())
    html = {
        **collapse_html(CollapseView(model)),
        **why_html(),
        **worked_example_html(),
        "quiz": quiz_html(),
    }
    build = {
        "faq": lambda: faq_section(faq_html()),
        "collapse": lambda: collapse_section(html).replace(FIGURES_SLOT, CELL * len(METRICS)),
        "why": lambda: why_section(html).replace(ROW_SLOT, CELL).replace(OUTPUT_SLOT, CELL),
        "worked": lambda: worked_section(html),
        "quiz": lambda: quiz_section(html),
    }
    return "".join(build[name]() for name in sections)


@functools.cache
def lesson_config(sections: tuple[Section, ...]) -> dict:
    """What lesson_drawing.js reads for ``sections``, and only that: each page receives it
    in every session's document (the collapse table alone is ~40 kB)."""
    config: dict[str, object] = {"dark_theme": DARK_FIGURE_THEME}
    if "collapse" in sections:
        config["collapse"] = collapse_spec()
    if "why" in sections:
        config.update(
            row=row_spec(),
            output={"dim": OUTPUT_DIM},
            parts={"row": ROW, "output": OUTPUT},
            row_input_hook=ROW_INPUT_HOOK,
        )
    if "quiz" in sections:
        config.update(quiz=quiz_spec(), query=query_spec())
    return config


@functools.cache
def lesson_markup(sections: tuple[Section, ...], lazy: tuple[tuple[str, str, str], ...]) -> str:
    """:func:`markup` of ``sections`` with the lazy sections' buttons and boxes: ``lazy``
    holds, for each, the section it follows (after them all when not among ``sections``),
    its name and its title. Built once per process, not once per session."""

    def button_and_box(name: str, title: str) -> str:
        return lazy_markup(name, title, LAZY_SECTIONS[name]())

    after = {name: [button_and_box(n, t) for key, n, t in lazy if key == name] for name in sections}
    last = [button_and_box(n, t) for key, n, t in lazy if key not in sections]
    return "".join(markup((name,)) + "".join(after[name]) for name in sections) + "".join(last)


class DrawnLesson(CheckedPageChanges, SharedData, FramedComponent, BundledComponent):
    """Lesson sections drawn in the browser (app/page/web/served/lesson_component.js), in the
    order given: the FAQ, the collapse curves, the row comparison with the output, the worked
    example, the quiz; between them, the buttons of the sections opened apart
    (:class:`app.served.components.lazy_section.LazySection`: training, assumptions), whose
    markup is in their boxes from the start and whose session side is built when first opened;
    it sends them what they draw (:meth:`show_training`, :meth:`show_assumptions`).

    Only ``opened`` flows from the page (the lazy sections open there, a list of their
    names): the worked example's switch and the quiz's answers stay on the page. The row
    box's value comes as a message and reaches ``on_pick_row`` once checked.
    """

    page_properties = ("opened",)

    view = param.Dict(
        default={},
        doc="The state the collapse curves show: d_k, scaled and temperature (empty when the "
        "sections do not hold the collapse curves).",
    )
    frame = param.Dict(
        default={},
        doc="The newest numbers of the row comparison and the output, when drawn here: a "
        "frame of app.page.frames.numbers_frame (sent packed: packed_frame).",
    )
    dark = param.Boolean(default=False, doc="Whether the figures take the dark theme.")
    opened = param.List(
        default=[],
        item_type=str,
        doc="The lazy sections open on the page, by name (a press on a section's button "
        "opens or closes it there; the session builds its view the first time).",
    )
    training_figures = param.String(
        default="",
        doc="The training section's figures as Bokeh JSON items, the ids of the models drawn "
        "and the grid's bands (app/served/components/training.py), once its grid is ready.",
    )
    training_view = param.Dict(
        default={},
        doc="The training section's state: the bands' grid d_k, its words, its status, its "
        "progress, its buttons (app.served.components.training_session.TrainingSession.view).",
    )
    training_run = param.Dict(
        default={},
        doc="The student's training run as drawn: its steps from index ``from`` (0 here) "
        "with the smoothed loss and accuracy at each.",
    )
    channel_key = param.String(
        default="",
        doc="The key of the session's own websocket (app/served/channel.py), which frames and "
        "views then come on; empty: they come on the frame and view properties only.",
    )
    channel_target = param.String(
        default="",
        doc="The name the session's channel sends this component's frames and views to, and "
        "takes its row box's messages from.",
    )
    class_result = param.Dict(
        default={},
        doc="The class's answers once the presenter shows them to the class (class mode: "
        "app.served.components.class_bar.shown_result), drawn beside each quiz question; "
        "empty while hidden.",
    )
    channel_address = channel_address_parameter()

    bundled_css = (
        LESSON_FONT_CSS,
        lesson_css(),
        boxed_disclosure_css(),
        TRAINING_CSS,
        BUTTONS_CSS,
        CLASS_CHART_CSS,
        *section_stylesheets(),
    )
    # The page puts a lazy section's view in its box when it arrives (drawn_lesson.js): the
    # sections above are not torn down and drawn again (as app/served/components/first_screen.py).
    _render_policy = "manual"

    def __init__(
        self,
        model: SimulationModel,
        sections: tuple[Section, ...],
        lazy: Mapping[Section, LazySection] | None = None,
        **params: Any,
    ) -> None:
        """Draw ``sections`` of ``model`` in order, each lazy section's button after the
        section ``lazy`` gives it (after them all for one not drawn here)."""
        self.on_pick_row: Callable[[int], None] | None = None
        self.on_quiz_answer: Callable[[str, object], None] | None = None
        """Hears each quiz answer the page checked (class mode counts them), untrusted."""
        """Called with the query the row box asks for, within the state's bounds."""
        self._model = model
        self._parts = NUMBER_PARTS if "why" in sections else frozenset()
        self._shows_view = "collapse" in sections
        lazy = dict(lazy or {})
        unknown = [section.name for section in lazy.values() if section.name not in LAZY_SECTIONS]
        if unknown:
            raise ValueError(f"no place on the page for the lazy sections {unknown}")
        self.lazy_sections = tuple(lazy.values())
        """The sections built when first opened, in page order."""
        placed = tuple((key, section.name, section.title) for key, section in lazy.items())
        assumptions = any(section.name == "assumptions" for section in self.lazy_sections)
        super().__init__(
            view=view_of(model.state) if self._shows_view else {},
            frame=self.next_frame(model, self._parts) if self._parts else {},
            **params,
        )
        self.share(*lesson_data(sections, placed, assumptions))
        if self.lazy_sections:
            self.param.watch(self._opened_changed, "opened")

    def accepts_from_page(self, name: str, value: object) -> bool:
        """The page's ``opened`` is a list of distinct names of this lesson's lazy sections."""
        names = {section.name for section in self.lazy_sections}
        return (
            isinstance(value, list)
            and all(isinstance(item, str) and item in names for item in value)
            and len(set(value)) == len(value)
        )

    def open(self, name: str) -> None:
        """Open the lazy section ``name``, as a press on its button does."""
        if name not in self.opened:
            self.opened = [*self.opened, name]

    def close(self, name: str) -> None:
        """Close the lazy section ``name`` (its view, if built, is kept)."""
        self.opened = [opened for opened in self.opened if opened != name]

    def _opened_changed(self, event: object) -> None:
        once_page_loaded(self._build_opened)

    def _build_opened(self) -> None:
        for section in self.lazy_sections:
            if section.name in self.opened and section.view is None:
                with pn.io.hold():
                    section.build_once()
                    if section.name == "assumptions":
                        # Its histogram draws the numbers the lesson's frames carry from now.
                        self._parts = self._parts | {HISTOGRAMS}
                        self.send_frame(self._model, {HISTOGRAMS})

    def show_assumptions(self, changes: dict[str, Any]) -> None:
        """Send the page what changed in the assumptions section (``changes``:
        app.served.components.assumptions.SendAssumptions): on the session's channel while the
        page holds it, else as a message of the component (the section is open on a page
        that has drawn the lesson: nothing needs to wait for a later view)."""
        channel = self.channel
        if channel is not None and channel.send_values(
            {"assumptions": changes}, self.channel_target
        ):
            return
        self._send_msg({"assumptions": changes})

    def show_training(self, changes: dict[str, Any], whole: dict[str, Any]) -> None:
        """Send the page what changed in the training section (``changes``:
        app.served.components.training_session.SendTraining): on the session's channel while the
        page holds it, else as the ``training_*`` properties, each whole (``whole``)."""
        values = {f"training_{key}": value for key, value in whole.items()}
        channel = self.channel
        if channel is not None and channel.send_values({"training": changes}, self.channel_target):
            with param.parameterized.discard_events(self):
                self.param.update(**values)
            return
        self.param.update(**values)

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Send what moved: the state the collapse curves show, the numbers of the row
        comparison and the output among ``parts`` (what the model recomputed)."""
        if self._shows_view:
            view = view_of(model.state)
            if view != self.view:
                self.send_values(view=view)
        drawn = parts & self._parts
        if drawn:
            self.send_frame(model, drawn)

    def take_message(self, msg: Any) -> None:
        """Handle a message from the page (over Bokeh's websocket or the session's own):
        ``{"row_input": value}``, the row box's value; ``{"training": "train"}`` or
        ``{"training": "stop"}``, a press on the training section's button;
        ``{"assumptions": message}``, one for the assumptions section (a control's move, a
        download asked for), once it is built; ``{"quiz": {"question", "answer"}}``, an
        answer the page checked (to ``on_quiz_answer``, untrusted); ``{"page_data": "inline"}``
        (:meth:`SharedData.take_shared_request`)."""
        if self.take_shared_request(msg):
            return
        if isinstance(msg, dict) and "training" in msg:
            self._press_training(msg["training"])
            return
        if isinstance(msg, dict) and "quiz" in msg:
            answer = msg["quiz"]
            if isinstance(answer, dict) and self.on_quiz_answer is not None:
                self.on_quiz_answer(answer.get("question"), answer.get("answer"))
            return
        if isinstance(msg, dict) and "assumptions" in msg:
            view = self._section_view("assumptions")
            if view is None and "assumptions" in self.opened:
                # Open on the page, its session side not built yet (built on the page's
                # load): a move made meanwhile is not lost.
                self._build_opened()
                view = self._section_view("assumptions")
            if view is not None:
                view.take(msg["assumptions"])  # type: ignore[attr-defined]
            return
        # The page's message is untrusted: only a finite number picks a query, rounded and
        # kept within the state's bounds, as the file's box does.
        value = finite_number(msg.get("row_input") if isinstance(msg, dict) else None)
        if value is not None and self.on_pick_row is not None:
            low, high = ROW_BOUNDS
            self.on_pick_row(min(max(round(value), low), high))

    def _press_training(self, button: object) -> None:
        # Untrusted: a press counts only for a built section and a button it has; the
        # session's own rules (one run at a time, none before the grid) decide the rest.
        view = self._section_view("training")
        if view is None or button not in ("train", "stop"):
            return
        if button == "train":
            view.train()  # type: ignore[attr-defined]
        else:
            view.stop()  # type: ignore[attr-defined]

    def _section_view(self, name: str) -> object | None:
        """The view of the lazy section ``name``, once built (None before, or without it)."""
        section = next((one for one in self.lazy_sections if one.name == name), None)
        return section.view if section is not None else None
