"""The lesson below the live plots: FAQ, collapse curves, one row, output, worked example, quiz.

It is built apart from the first screen so a served page can add it after the heatmap has
been painted: it holds most of the page's models, and a student looks at the plots first.
"""

from __future__ import annotations

import panel as pn

from app.flow import grid, side_by_side
from app.lesson_text import HISTOGRAM, SAME_D_K, SCALE, TEMPERATURE
from app.model import SimulationModel
from app.views.assumptions import AssumptionsView
from app.views.collapse import CollapseView
from app.views.lazy_section import LazySection, SectionView
from app.views.output import OutputView
from app.views.quiz import QuizView
from app.views.row_compare import RowCompareView
from app.views.training import TrainingView
from app.views.worked_example import WorkedExampleView

TRAINING_TITLE = "Does the scale matter for learning? Train a tiny model, scaled vs unscaled"
"""The training section's button."""

ASSUMPTIONS_TITLE = "When the assumptions break: variance, correlation, precision; CSV data"
"""The assumptions section's button."""

FAQ = (SCALE, TEMPERATURE, HISTOGRAM, SAME_D_K)
"""The answers beside the plots, in reading order."""


class LessonSections:
    """The lesson's views over one session's model, and the page sections that show them."""

    def __init__(self, model: SimulationModel) -> None:
        self.row_compare = RowCompareView(model)
        self.output = OutputView(model)
        self.collapse = CollapseView(model)
        self.training = LazySection(TRAINING_TITLE, lambda: TrainingView(model))
        self.worked_example = WorkedExampleView(model)
        self.quiz = QuizView(model)
        self.assumptions = LazySection(ASSUMPTIONS_TITLE, lambda: AssumptionsView(model))
        self.lazy_sections = (self.training, self.assumptions)
        """The sections built only when a student opens them."""
        self._views = (
            self.row_compare,
            self.output,
            self.collapse,
            self.worked_example,
            self.quiz,
        )

    @property
    def views(self) -> tuple[SectionView, ...]:
        """Every view built so far with an ``update(model, parts)``, in page order."""
        opened = tuple(section.view for section in self.lazy_sections if section.view)
        return (*self._views, *opened)

    def sections(self) -> list[pn.viewable.Viewable]:
        """The page sections, top to bottom, to follow the live plots and readouts."""
        faq = grid(
            [pn.pane.Markdown(text, sizing_mode="stretch_width") for text in FAQ],
            # Four answers in one row across a laptop's full width, two by two in an iframe.
            min_width=290,
            gap=4,
        )
        why = side_by_side([self.row_compare.panel, self.output.panel], basis=[360, 360], gap=16)
        return [
            faq,
            self.collapse.panel,
            self.training.panel,
            why,
            self.worked_example.panel,
            self.quiz.panel,
            self.assumptions.panel,
        ]
