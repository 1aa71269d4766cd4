"""The served components' CSS reaches the page as one cached file beside the bundle
(app/served/stylesheet.py), not inline in every student's document."""

from __future__ import annotations

import re

from bokeh.document import Document

from app.page.bundle import served_bundle
from app.served.component_routes import bundle_files
from app.served.stylesheet import served_components, served_css, stylesheet_blocks

SELECTOR_LIST = re.compile(r"([^{}@;]+)\{")


def selectors(css: str) -> set[str]:
    """The selectors of ``css``'s rules (not at-rules' preludes or keyframe steps)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = set()
    for match in SELECTOR_LIST.finditer(css):
        for selector in match.group(1).split(","):
            selector = " ".join(selector.split())
            if selector and not re.match(r"^(\d|from\b|to\b|\(|screen\b|print\b)", selector):
                found.add(selector)
    return found


def test_the_committed_stylesheet_is_what_the_components_write() -> None:
    stylesheet = served_bundle().with_suffix(".css")
    assert stylesheet.read_text() == served_css(), "run `node scripts/build_web.mjs`"


def test_every_served_component_takes_its_css_from_the_bundle_and_none_inline() -> None:
    names = {component.__name__ for component in served_components()}
    assert {"FirstScreen", "DrawnFigures", "DrawnControls", "DrawnLesson", "ClassBar"} <= names
    for component in served_components():
        assert component.bundled_css, component.__name__
        assert all(block in stylesheet_blocks() for block in component.bundled_css)
        assert component._stylesheets == [], f"{component.__name__} carries CSS inline"
        css_path = next(path for path in bundle_files(component) if path.endswith(".css"))
        assert css_path.endswith(served_bundle().with_suffix(".css").name)


def test_no_two_pieces_share_a_selector_but_the_host_width() -> None:
    """One file styles every component's shadow root: a selector two pieces both style
    would let one component's rule reach into another's."""
    seen: dict[str, int] = {}
    for index, block in enumerate(stylesheet_blocks()):
        for selector in selectors(block):
            if selector in seen and selector != ":host":
                raise AssertionError(f"{selector!r} in pieces {seen[selector]} and {index}")
            seen.setdefault(selector, index)
    hosts = {
        " ".join(rule.split())
        for block in stylesheet_blocks()
        for rule in re.findall(r":host\s*\{[^}]*\}", block)
    }
    assert hosts == {":host { width: 100%; }"}


def test_a_component_model_carries_none_of_the_stylesheet() -> None:
    from app.served.components.class_bar import ClassBar

    model = ClassBar().get_root(Document())
    inline = [getattr(sheet, "css", sheet) for sheet in model.stylesheets]
    carried = [text for text in inline if isinstance(text, str) and "sdpa" in text]
    assert carried == []
    assert not any(block.strip()[:60] in str(inline) for block in stylesheet_blocks())
