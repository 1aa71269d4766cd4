"""A lesson section behind its own button, built the first time a student opens it."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Protocol

from app.simulation.model import SimulationModel


class SectionView(Protocol):
    """What a lesson section's view offers: an update from the model."""

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Bring the view up to date with the model parts that changed."""


class LazySection:
    """A section of the lesson behind a titled button: its view is built the first time a
    student opens it (with the model as it is then), then kept.

    Sections with their own controls and figures (the training run, the assumptions) cost
    a session as much as the rest of the lesson: a class pays for them only where a student
    asks for them, and a move updates them only once built. The button and the box the
    view goes in are drawn by the lesson's component (app/served/components/lesson.py), which
    shows and hides the box on the page; the section itself holds no Panel object until
    it is opened.
    """

    def __init__(self, name: str, title: str, build: Callable[[], SectionView]) -> None:
        self.name = name
        """The section's name: the lesson component's child parameter that shows its view."""
        self.title = title
        """The button's text and accessible name."""
        self._build = build
        self.view: SectionView | None = None
        """The section's view, once opened."""

    def build_once(self) -> SectionView:
        """The section's view, built now if it has not been yet."""
        if self.view is None:
            self.view = self._build()
        return self.view


def lazy_markup(name: str, title: str, body: str = "") -> str:
    """A lazy section's button, closed, titled ``title``, and the box its view goes in,
    holding ``body`` (trusted markup the page draws the section in; empty for a view built
    of Panel objects). The ids tie the button to the box for assistive technology."""
    box = f"sdpa-lazy-{name}"
    return (
        f'<div class="sdpa-disclosure"><button type="button" data-lazy="{name}" '
        f'aria-expanded="false" aria-controls="{box}">{html.escape(title)}</button>'
        f'</div><div class="sdpa-lazy" id="{box}" hidden>{body}</div>'
    )
