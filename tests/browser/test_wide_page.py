"""A full page at desktop width, as most newcomers first see it: "More controls" opens by
itself as the page renders, and everything the server builds in answer reaches the page.

On Panel 1.9 (what Python 3.11 installs) this once left "More controls" empty and the lesson
stuck on its loading text, with "reference pNNNN isn't known" page errors: the server's
answer to a request the page made before it reported itself ready was dropped. CI runs this
on both Panel lines the package allows (python3 and the newest Python).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import panel as pn
import pytest
from playwright.sync_api import expect

from app.simulation.spec import CONTROL_BY_NAME, D_K_GRID

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

D_K = CONTROL_BY_NAME["d_k"].label

MORE_CONTROLS = (
    ("spinbutton", "exact d_k"),
    ("switch", "causal mask"),
    ("group", "heatmap view"),
    ("spinbutton", "seed"),
    ("button", "Resample"),
    ("button", "Copy link"),
    ("button", "Copy embed code"),
)
"""Controls that live under "More controls", by role and (the start of) accessible name."""


@pytest.mark.parametrize("width", [1024, 1280])
def test_more_controls_open_by_themselves_and_the_lesson_follows(
    app_page: AppPage, width: int
) -> None:
    page = app_page.page
    page.set_viewport_size({"width": width, "height": 800})
    app_page.open(lesson=False)
    expect(page.get_by_role("button", name="More controls")).to_have_attribute(
        "aria-expanded", "true"
    )
    for role, name in MORE_CONTROLS:
        expect(page.get_by_role(role, name=name).first).to_be_visible()
    expect(page.get_by_text("preset scene", exact=True).first).to_be_visible()

    # What the server sends after it (the lesson, a move's new numbers) must still apply.
    app_page.open_lesson()
    d_k = D_K_GRID[D_K_GRID.index(CONTROL_BY_NAME["d_k"].default) + 1]
    app_page.mark("raw")
    app_page.press(D_K, "ArrowRight")
    app_page.wait_changed("raw")
    app_page.wait_histograms(d_k)
    app_page.wait_url(d_k=str(d_k))
    # The conftest hook fails the test on any page error; say which Panel line this was.
    assert not app_page.problems, f"Panel {pn.__version__}: {app_page.problems}"


def test_more_controls_pressed_open_on_a_narrow_page(app_page: AppPage) -> None:
    page = app_page.page
    page.set_viewport_size({"width": 700, "height": 800})
    app_page.open(lesson=False)
    button = page.get_by_role("button", name="More controls")
    expect(button).to_have_attribute("aria-expanded", "false")
    app_page.open_more()
    for role, name in MORE_CONTROLS:
        expect(page.get_by_role(role, name=name).first).to_be_visible()
    app_page.open_lesson()
