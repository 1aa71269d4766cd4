"""axe-core on the offline file in its main states, light and dark, and its dark mode from
the system's colour scheme (Playwright's ``color_scheme``).

No state may have a critical or serious violation; a moderate or minor one fails unless
docs/accessibility.md lists it for the offline page (tests/axe_support.py).
"""

from __future__ import annotations

import pytest
from axe_support import assert_axe_clean, axe_installed

from app.page.figures import DARK_FIGURE_THEME
from app.page.theme import DARK_PAGE

from .conftest import OfflinePage

pytestmark = pytest.mark.browser

BODY_BACKGROUND_JS = "() => getComputedStyle(document.body).backgroundColor"


def rgb(hex_colour: str) -> str:
    """``#rrggbb`` as the browser's computed ``rgb(r, g, b)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(autouse=True)
def _needs_axe() -> None:
    if not axe_installed():
        pytest.skip("axe-core is not in node_modules: scripts/test.sh installs it (npm ci)")


def check_states(opened: OfflinePage, state: str) -> None:
    """The first screen, then every lesson section open."""
    assert_axe_clean(opened.page, "offline", f"{state}: first screen")
    opened.open_sections()
    assert_axe_clean(opened.page, "offline", f"{state}: every lesson section open")


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_the_offline_file_is_axe_clean(open_export, color_scheme: str) -> None:
    opened = open_export(color_scheme=color_scheme)
    # One main landmark, one h1 (the title), the lesson's sections under an h2.
    assert opened.page.get_by_role("main").count() == 1
    assert opened.page.get_by_role("heading", level=1).count() == 1
    check_states(opened, f"{color_scheme}, 1280 wide")


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_the_embedded_offline_file_is_axe_clean(open_export, color_scheme: str) -> None:
    opened = open_export("?embed=true", width=800, height=600, color_scheme=color_scheme)
    check_states(opened, f"{color_scheme}, embedded 800×600")


def test_the_offline_file_follows_a_dark_system(open_export) -> None:
    opened = open_export(color_scheme="dark")
    assert opened.page.evaluate(BODY_BACKGROUND_JS) == rgb(DARK_PAGE["background"])
    dark_figure = DARK_FIGURE_THEME["Figure"]["background_fill_color"]
    assert opened.model("heatmap", "m.background_fill_color") == dark_figure
    opened.open_sections()
    # The lesson's figures, in the document drawn after the first screen, are dark too.
    assert opened.model("row_comparison", "m.background_fill_color") == dark_figure


def test_the_offline_file_is_light_by_default(open_export) -> None:
    opened = open_export()
    assert opened.page.evaluate(BODY_BACKGROUND_JS) != rgb(DARK_PAGE["background"])
    assert opened.model("heatmap", "m.background_fill_color") == "#ffffff"
