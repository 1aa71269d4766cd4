"""axe-core on the served page in its main states, light and dark, and dark mode that follows
the system (Playwright's ``color_scheme``) with the header's toggle still switching.

No state may have a critical or serious violation; a moderate or minor one fails unless
docs/accessibility.md lists it for the served page (tests/axe_support.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from axe_support import assert_axe_clean, axe_installed
from browser_support import FIGURES_HELPER_JS
from conftest import PAGE_TIMEOUT_MS, AppPage
from playwright.sync_api import Browser, expect

from app.page.figures import DARK_FIGURE_THEME
from app.page.theme import DARK_PAGE, PANEL_DARK
from app.page.views.assumptions import ASSUMPTIONS_TITLE
from app.page.views.training_grid import TRAINING_TITLE
from app.served.components.training_session import TRAIN_LABEL

if TYPE_CHECKING:
    from browser_support import AppServer

pytestmark = pytest.mark.browser

EMBEDDED = {"width": 800, "height": 600}

THEMED_JS = """(dark) => {
  const component = sdpaComponent();
  return component != null && component.data.dark === dark
    && document.documentElement.dataset.theme === (dark ? 'dark' : 'light')
    && Bokeh.documents[0].is_idle;
}"""
"""True once the page shows the theme asked for: the figures' component has it, the
document says it, and the session is idle."""

FIGURE_BACKGROUND_JS = """() => sdpaFigure('heatmap').background_fill_color"""

COLLAPSE_BACKGROUND_JS = """() => sdpaFigure('collapse_entropy').background_fill_color"""

COLLAPSE_BACKGROUND_IS_JS = """(colour) =>
  sdpaFigure('collapse_entropy').background_fill_color === colour"""

DARK_FIGURE_BACKGROUND = DARK_FIGURE_THEME["Figure"]["background_fill_color"]
"""What a figure drawn in the browser fills its plot with in the dark theme."""

BODY_BACKGROUND_JS = """() => getComputedStyle(document.body).backgroundColor"""


def rgb(hex_colour: str) -> str:
    """``#rrggbb`` as the browser's computed ``rgb(r, g, b)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture
def dark_page(app_server: AppServer, chromium: Browser) -> Iterator[AppPage]:
    """As ``app_page``, in a context whose system prefers dark (errors are not collected)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.add_init_script(FIGURES_HELPER_JS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield AppPage(page=page, server=app_server, log_mark=app_server.log_size())
    context.close()
    assert errors == [], errors


@pytest.fixture(autouse=True)
def _needs_axe() -> None:
    if not axe_installed():
        pytest.skip("axe-core is not in node_modules: scripts/test.sh installs it (npm ci)")


SETTLED_JS = """() => document.getAnimations().every((a) => a.playState !== "running")"""
"""Whether every CSS transition and animation of the page (shadow trees included) is over."""


def open_everything(app: AppPage, state: str) -> None:
    """Check the first screen, then with More controls open, then with every lesson
    section open."""
    assert_axe_clean(app.page, "served", f"{state}: first screen")
    app.open_more()
    assert_axe_clean(app.page, "served", f"{state}: More controls open")
    app.open_lesson()
    for title in (TRAINING_TITLE, ASSUMPTIONS_TITLE):
        app.open_section(title)
    # A question's feedback, in its colours (the quiz is drawn in the browser).
    app.page.get_by_role("button", name="Check answer 1").click()
    expect(app.page.locator(".quiz-feedback-1")).to_be_visible()
    # The Train button is enabled once the process's comparison runs exist (a few seconds
    # after the first page): axe checks its colours once it has settled, not mid-fade.
    expect(app.page.get_by_role("button", name=TRAIN_LABEL, exact=True)).to_be_enabled(
        timeout=PAGE_TIMEOUT_MS
    )
    app.page.wait_for_function(SETTLED_JS, timeout=PAGE_TIMEOUT_MS)
    assert_axe_clean(app.page, "served", f"{state}: every lesson section open")


def test_the_page_is_axe_clean_in_its_main_states(app_page: AppPage) -> None:
    app_page.open(lesson=False)
    app_page.page.wait_for_function(THEMED_JS, arg=False)
    open_everything(app_page, "light, 1280 wide")


def test_the_embedded_page_is_axe_clean(app_page: AppPage) -> None:
    app_page.page.set_viewport_size(EMBEDDED)
    app_page.open("?embed=true", lesson=False)
    page = app_page.page
    # Everything sits in the one main landmark; the title is its heading, read, not shown.
    expect(page.get_by_role("main")).to_have_count(1)
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    open_everything(app_page, "embedded 800×600")


def test_the_page_follows_a_dark_system_and_is_axe_clean(dark_page: AppPage) -> None:
    dark_page.open(lesson=False)
    page = dark_page.page
    page.wait_for_function(THEMED_JS, arg=True)
    assert page.evaluate(BODY_BACKGROUND_JS) == rgb(DARK_PAGE["background"])
    assert page.evaluate(FIGURE_BACKGROUND_JS) != "#ffffff"
    open_everything(dark_page, "dark, 1280 wide")
    # The lesson's figures, drawn after the switch, are dark too (the Page themes them).
    gate_free = page.evaluate("() => sdpaFigure('row_comparison').background_fill_color")
    assert gate_free != "#ffffff"
    # The figures drawn in the browser take the dark figure theme, the quiz's feedback the
    # dark alert colours.
    assert page.evaluate(COLLAPSE_BACKGROUND_JS) == DARK_FIGURE_BACKGROUND
    feedback = page.locator(".quiz-feedback-1")
    background = feedback.evaluate("(box) => getComputedStyle(box).backgroundColor")
    assert background == rgb(DARK_PAGE["info-background"])


def test_the_embedded_page_follows_a_dark_system(dark_page: AppPage) -> None:
    dark_page.page.set_viewport_size(EMBEDDED)
    dark_page.open("?embed=true", lesson=False)
    page = dark_page.page
    page.wait_for_function(THEMED_JS, arg=True)
    assert page.evaluate(BODY_BACKGROUND_JS) == rgb(DARK_PAGE["background"])
    open_everything(dark_page, "embedded 800×600, dark")


def test_the_page_is_light_by_default_and_its_toggle_still_switches(app_page: AppPage) -> None:
    app_page.open(lesson=False)
    page = app_page.page
    page.wait_for_function(THEMED_JS, arg=False)
    assert page.evaluate(BODY_BACKGROUND_JS) != rgb(DARK_PAGE["background"])
    page.get_by_role("button", name="Toggle theme").click()
    page.wait_for_function(THEMED_JS, arg=True)
    page.wait_for_function(
        "(colour) => getComputedStyle(document.body).backgroundColor === colour",
        arg=rgb(DARK_PAGE["background"]),
    )
    page.get_by_role("button", name="Toggle theme").click()
    page.wait_for_function(THEMED_JS, arg=False)


def test_the_drawn_lesson_follows_the_theme_toggle(app_page: AppPage) -> None:
    """The collapse figures, drawn in the browser, turn dark with the header's toggle and
    back (their documents are the component's to theme)."""
    app_page.open()
    page = app_page.page
    page.wait_for_function(THEMED_JS, arg=False)
    assert page.evaluate(COLLAPSE_BACKGROUND_JS) == "#ffffff"
    page.get_by_role("button", name="Toggle theme").click()
    page.wait_for_function(COLLAPSE_BACKGROUND_IS_JS, arg=DARK_FIGURE_BACKGROUND)
    page.get_by_role("button", name="Toggle theme").click()
    page.wait_for_function(COLLAPSE_BACKGROUND_IS_JS, arg="#ffffff")


def test_the_lesson_gate_is_dark_in_the_dark_theme(dark_page: AppPage) -> None:
    dark_page.open(lesson=False)
    page = dark_page.page
    page.wait_for_function(THEMED_JS, arg=True)
    gate = page.get_by_role("button", name="Why the scale matters", exact=False)
    background = gate.evaluate("(button) => getComputedStyle(button).backgroundColor")
    assert background == rgb(DARK_PAGE["accent-background"])


def test_the_number_boxes_step_with_their_arrow_keys(app_page: AppPage) -> None:
    """A whole-number box is a native spin button: its arrow keys step it, and each step
    reaches the state (the link follows) as a slider's move does."""
    app_page.open(lesson=False)
    app_page.open_more()
    page = app_page.page
    box = page.get_by_role("spinbutton", name="seed")
    box.focus()
    box.press("ArrowUp")
    expect(box).to_have_value("1")
    app_page.wait_url(seed="1")
    box.press("ArrowDown")
    app_page.wait_url(seed="0")


def test_the_toolbar_icons_are_light_in_the_dark_theme(dark_page: AppPage) -> None:
    """Bokeh's icon colour (an inherited custom property) is the dark theme's light grey."""
    dark_page.open(lesson=False)
    page = dark_page.page
    page.wait_for_function(THEMED_JS, arg=True)
    icon = page.evaluate(
        "() => getComputedStyle(document.documentElement).getPropertyValue('--bokeh-icon-color')"
    )
    assert icon.strip() == PANEL_DARK["--bokeh-icon-color"]
