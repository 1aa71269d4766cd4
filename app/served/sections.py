"""The lesson below the live plots: FAQ, collapse curves, one row, output, worked example, quiz.

It is built apart from the first screen so a served page can add it after the heatmap has
been painted, when the student reaches it. The FAQ, the collapse curves, the row comparison,
the output, the worked example and the quiz are drawn in the browser, by one component,
from data built once per process (app/served/components/lesson.py), the row comparison and the
output from the numbers the session sends; the sections behind their own buttons hold
per-session state only once a student opens them (the training run's; the assumptions'
controls and figure, still built per session).
"""

from __future__ import annotations

from app.page.views.assumptions import ASSUMPTIONS_TITLE
from app.page.views.training_grid import TRAINING_TITLE
from app.served.components.assumptions import AssumptionsSession
from app.served.components.lazy_section import LazySection, SectionView
from app.served.components.lesson import DrawnLesson, Section, lesson_data
from app.served.components.training import training_figures
from app.served.components.training_session import TrainingSession
from app.served.page_data import enabled, publish_registered_soon, register
from app.served.work_queue import WorkGate
from app.simulation.model import SimulationModel

__all__ = ["LessonSections"]

DRAWN_SECTIONS: tuple[Section, ...] = ("faq", "collapse", "why", "worked", "quiz")
"""The sections the lesson's component draws, in page order."""

LAZY_AFTER = {"collapse": "training", "quiz": "assumptions"}
"""Where each lazy section's button sits: training after the collapse curves it tests, the
assumptions at the end."""

LAZY_TITLES = {"training": TRAINING_TITLE, "assumptions": ASSUMPTIONS_TITLE}
"""The lazy sections' buttons' titles, by name."""

# Every worker can build the served lesson's page data, whichever built the page.
register(
    *lesson_data(
        DRAWN_SECTIONS,
        tuple((after, name, LAZY_TITLES[name]) for after, name in LAZY_AFTER.items()),
        True,
    )
)
if enabled():
    # Mounted in this process: what every page draws is ready before a page another worker
    # built asks for it.
    publish_registered_soon()


class LessonSections:
    """The lesson's views over one session's model, in the one component that draws them."""

    def __init__(
        self, model: SimulationModel, *, dark: bool = False, work: WorkGate | None = None
    ) -> None:
        """The lesson of ``model``; ``work`` is the session's gate for heavy jobs (the CSV
        files: app/served/work_queue.py), one of the assumptions section's own unless given."""
        self.training = LazySection(
            "training",
            LAZY_TITLES["training"],
            lambda: TrainingSession(model, self.drawn.show_training, training_figures),
        )
        self.assumptions = LazySection(
            "assumptions",
            LAZY_TITLES["assumptions"],
            lambda: AssumptionsSession(model, self.drawn.show_assumptions, work=work),
        )
        self.lazy_sections = (self.training, self.assumptions)
        """The sections built only when a student opens them."""
        by_name = {section.name: section for section in self.lazy_sections}
        self.drawn = DrawnLesson(
            model,
            DRAWN_SECTIONS,
            lazy={after: by_name[name] for after, name in LAZY_AFTER.items()},
            dark=dark,
            sizing_mode="stretch_width",
            margin=(0, 5),
            name="lesson",
        )
        """The FAQ, the collapse curves, the row comparison beside the output, the worked
        example and the quiz, drawn in the browser, with the lazy sections' buttons; its
        ``on_pick_row`` hears the row box."""

    @property
    def views(self) -> tuple[SectionView, ...]:
        """Every view built so far with an ``update(model, parts)``, in page order."""
        opened = tuple(section.view for section in self.lazy_sections if section.view)
        return (self.drawn, *opened)

    def open(self, section: LazySection) -> None:
        """Open ``section``, as a press on its button does (its view is built once the page
        has loaded)."""
        self.drawn.open(section.name)
