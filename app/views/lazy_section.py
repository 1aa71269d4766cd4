"""A lesson section behind its own button, built the first time a student opens it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import panel as pn

from app.model import SimulationModel
from app.ticks import once_page_loaded
from app.views.disclosure import DISCLOSURE_CSS, Disclosure


class SectionView(Protocol):
    """What a lesson view offers: its page section and an update from the model."""

    panel: pn.viewable.Viewable

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Bring the view up to date with the model parts that changed."""


class LazySection:
    """A titled button that opens a lesson section in place; the section's view is built
    when it is first opened (with the model as it is then) and hidden when closed.

    Sections with their own controls and figures (the training run, the assumptions) cost
    a session as much as the rest of the lesson: a class pays for them only where a student
    asks for them, and a move updates them only once built.
    """

    def __init__(self, title: str, build: Callable[[], SectionView]) -> None:
        self._build = build
        self.view: SectionView | None = None
        """The section's view, once opened."""
        self.button = Disclosure(
            label=title,
            sizing_mode="stretch_width",
            margin=(10, 0),
            stylesheets=[DISCLOSURE_CSS],
        )
        self.panel = pn.Column(self.button, sizing_mode="stretch_width")
        self.button.param.watch(self._toggle, "opened")

    def open(self) -> None:
        """Open the section, as a press on its button does."""
        self.button.opened = True

    def _toggle(self, event: object) -> None:
        once_page_loaded(self._show_or_hide)

    def _show_or_hide(self) -> None:
        if self.button.opened and self.view is None:
            with pn.io.hold():
                self.view = self._build()
                self.panel.append(self.view.panel)
        elif self.view is not None:
            self.view.panel.visible = self.button.opened
