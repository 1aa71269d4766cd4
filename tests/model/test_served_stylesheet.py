"""The served components' CSS reaches the page as one cached file beside the bundle
(app/served/stylesheet.py), not inline in every student's document."""

from __future__ import annotations

import re

import pytest
from bokeh.document import Document

from app.page.bundle import served_bundle, stylesheet_scope
from app.served.component_routes import bundle_files
from app.served.components.class_bar import ClassBar
from app.served.components.controls import DrawnControls
from app.served.components.lesson import DrawnLesson
from app.served.stylesheet import (
    scoped,
    scopes_of_pieces,
    served_components,
    served_css,
    split_top_level,
    stylesheet_blocks,
)


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


def test_every_rule_applies_only_under_the_components_that_use_it() -> None:
    """One file styles every component's shadow root: each rule names the hosts of the
    components whose CSS it is, so no component's rules reach into another's."""
    scopes = scopes_of_pieces()
    css = served_css()
    for selectors in re.findall(r"([^{}]+)\{", css):
        if selectors.strip().startswith("@"):
            continue
        for selector in split_top_level(selectors):
            assert selector.strip().startswith(":host(.sdpa-scope-"), selector
    lesson = stylesheet_scope(DrawnLesson)
    controls = stylesheet_scope(DrawnControls)
    for piece, users in scopes.items():
        if piece in DrawnLesson.bundled_css and piece not in DrawnControls.bundled_css:
            assert controls not in users and lesson in users
    assert f":host(.{lesson}) .sdpa-drawn-lesson {{" in css


def test_a_component_carries_its_scope_and_keeps_the_classes_it_is_given() -> None:
    bar = ClassBar(css_classes=["extra"])
    assert bar.css_classes == ["extra", "sdpa-scope-ClassBar"]
    assert stylesheet_scope(ClassBar) == "sdpa-scope-ClassBar"


def test_css_the_scoping_cannot_handle_is_refused() -> None:
    with pytest.raises(ValueError, match="at-rule"):
        scoped("@layer base { .a { color: red; } }", ["s"])
    with pytest.raises(ValueError, match="cannot scope"):
        scoped(":host(.dark) .a { color: red; }", ["s"])
    with pytest.raises(ValueError, match="unclosed"):
        scoped("@media (width < 1px) { .a { color: red; }", ["s"])


def test_rules_in_media_and_container_queries_are_scoped_and_keyframes_kept() -> None:
    assert scoped(".a, .b:is(.c, .d) { color: red; }", ["s", "t"]) == (
        ":host(.s) .a, :host(.t) .a, :host(.s) .b:is(.c, .d), :host(.t) .b:is(.c, .d) "
        "{ color: red; }\n"
    )
    css = """
    /* a comment { with braces } */
    @media (max-width: 600px) { :host { width: 50%; } .a { color: red; } }
    @container (min-width: 10px) { .b { color: blue; } }
    @keyframes spin { from { rotate: 0deg; } to { rotate: 360deg; } }
    """
    assert scoped(css, ["s"]) == (
        "@media (max-width: 600px) {\n:host(.s) { width: 50%; }\n:host(.s) .a { color: red; }\n}\n"
        "@container (min-width: 10px) {\n:host(.s) .b { color: blue; }\n}\n"
        "@keyframes spin { from { rotate: 0deg; } to { rotate: 360deg; } }\n"
    )


def test_a_component_model_carries_none_of_the_stylesheet() -> None:
    model = ClassBar().get_root(Document())
    inline = [getattr(sheet, "css", sheet) for sheet in model.stylesheets]
    carried = [text for text in inline if isinstance(text, str) and "sdpa" in text]
    assert carried == []
    assert not any(block.strip()[:60] in str(inline) for block in stylesheet_blocks())
