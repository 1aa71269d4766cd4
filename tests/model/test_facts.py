"""The breakpoints live once, in app.page.facts: the stylesheets name them and receive the
widths as data."""

from __future__ import annotations

import re

import pytest

from app.page import ASSETS
from app.page.facts import BREAKPOINTS, SIDEBAR_PX, with_breakpoints
from app.served.layout import HEADER_CSS

MEDIA_QUERY = re.compile(r"@media[^{]*\{")


@pytest.mark.parametrize("sheet", sorted(path.name for path in ASSETS.glob("*.css")))
def test_no_stylesheet_writes_a_breakpoint_itself(sheet: str) -> None:
    """Every width in a media query of the assets' stylesheets is a ``$name`` of
    BREAKPOINTS, never a number written again."""
    css = (ASSETS / sheet).read_text(encoding="utf-8")
    for query in MEDIA_QUERY.findall(css):
        assert not re.search(r"\d+(\.\d+)?px", query), query
        for name in re.findall(r"\$(\w+)", query):
            assert name.removesuffix("_below") in BREAKPOINTS, name


def test_breakpoints_are_written_as_widths() -> None:
    css = with_breakpoints("@media (min-width: $sidebar_px) and (max-width: $sidebar_px_below)")
    assert css == f"@media (min-width: {SIDEBAR_PX}px) and (max-width: {SIDEBAR_PX - 0.02:g}px)"
    assert "$" not in HEADER_CSS and f"max-width: {BREAKPOINTS['wide_page_px']}px" in HEADER_CSS


def test_an_unknown_breakpoint_is_refused() -> None:
    with pytest.raises(KeyError):
        with_breakpoints("@media (min-width: $tablet_px) {}")


def test_the_offline_page_gets_the_widths() -> None:
    """The page's stylesheet, as the offline file receives it, has every width filled in."""
    css = with_breakpoints((ASSETS / "page.css").read_text(encoding="utf-8"))
    assert "$" not in css
    assert f"(min-width: {SIDEBAR_PX}px)" in css
