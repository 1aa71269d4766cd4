"""The lesson below the live plots: FAQ, collapse curves, one row, output, worked example, quiz.

It is built apart from the first screen so a served page can add it after the heatmap has
been painted, when the student reaches it. The FAQ, the collapse curves, the row comparison,
the output, the worked example and the quiz are drawn in the browser from data built once
per process (app/views/drawn_lesson.py), the row comparison and the output from the numbers
the session sends; the sections behind their own buttons are still built per session.
"""

from __future__ import annotations

import panel as pn

from app.model import SimulationModel
from app.views.assumptions import AssumptionsView
from app.views.drawn_lesson import DrawnLesson
from app.views.lazy_section import LazySection, SectionView
from app.views.training import TrainingView

TRAINING_TITLE = "Does the scale matter for learning? Train a tiny model, scaled vs unscaled"
"""The training section's button."""

ASSUMPTIONS_TITLE = "When the assumptions break: variance, correlation, precision; CSV data"
"""The assumptions section's button."""


class LessonSections:
    """The lesson's views over one session's model, and the page sections that show them."""

    def __init__(self, model: SimulationModel, *, dark: bool = False) -> None:
        self.faq_and_collapse = DrawnLesson(
            model, ("faq", "collapse"), dark=dark, sizing_mode="stretch_width", name="collapse"
        )
        """The FAQ and the collapse curves, drawn in the browser."""
        self.why = DrawnLesson(model, ("why",), dark=dark, sizing_mode="stretch_width", name="why")
        """The row comparison beside the output, drawn in the browser from the session's
        numbers; its ``on_pick_row`` hears the query box."""
        self.worked_and_quiz = DrawnLesson(
            model, ("worked", "quiz"), dark=dark, sizing_mode="stretch_width", name="quiz"
        )
        """The worked example and the quiz, drawn in the browser."""
        self.drawn = (self.faq_and_collapse, self.why, self.worked_and_quiz)
        """The sections drawn in the browser (they follow the page's theme)."""
        self.training = LazySection(TRAINING_TITLE, lambda: TrainingView(model))
        self.assumptions = LazySection(ASSUMPTIONS_TITLE, lambda: AssumptionsView(model))
        self.lazy_sections = (self.training, self.assumptions)
        """The sections built only when a student opens them."""
        self._views = (self.faq_and_collapse, self.why)

    @property
    def views(self) -> tuple[SectionView, ...]:
        """Every view built so far with an ``update(model, parts)``, in page order."""
        opened = tuple(section.view for section in self.lazy_sections if section.view)
        return (*self._views, *opened)

    def sections(self) -> list[pn.viewable.Viewable]:
        """The page sections, top to bottom, to follow the live plots and readouts."""
        return [
            self.faq_and_collapse,
            self.training.panel,
            self.why,
            self.worked_and_quiz,
            self.assumptions.panel,
        ]
