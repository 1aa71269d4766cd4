"""The served components' stylesheet: every served component's CSS in one file beside the
served bundle, built with it (``node scripts/build_web.mjs`` runs
``python -m app.served.stylesheet``).

Panel links a bundle's CSS file into each component that loads the bundle (the
``_bundle_css`` of its compiled-bundle format), so one cached file styles every component and
a student's document carries none of it. The CSS itself stays in Python beside each component
(:attr:`app.page.bundle.BundledComponent.bundled_css`), where the facts it is written from
(widths, breakpoints) live.
"""

from __future__ import annotations

import re
import sys

from app.page.bundle import BundledComponent, stylesheet_scope
from app.served.component_routes import app_components

COMMENT = re.compile(r"/\*.*?\*/", re.S)
RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def served_components() -> list[type[BundledComponent]]:
    """Every served component class that loads the bundle, in a fixed order (module, name)."""
    found = [
        component
        for component in app_components()
        if issubclass(component, BundledComponent) and component is not BundledComponent
    ]
    return sorted(found, key=lambda component: (component.__module__, component.__qualname__))


def scopes_of_pieces() -> dict[str, list[str]]:
    """Each distinct piece of the served components' CSS once, in the components' order,
    with the scopes (:func:`app.page.bundle.stylesheet_scope`) of the components using it."""
    pieces: dict[str, list[str]] = {}
    for component in served_components():
        scope = stylesheet_scope(component)
        for piece in component.bundled_css:
            users = pieces.setdefault(piece, [])
            if scope not in users:
                users.append(scope)
    return pieces


def stylesheet_blocks() -> list[str]:
    """Each distinct piece of the served components' CSS once, in the components' order."""
    return list(scopes_of_pieces())


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at each ``separator`` outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for index, character in enumerate(text):
        if character in "([":
            depth += 1
        elif character in ")]":
            depth -= 1
        elif character == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def scoped(piece: str, scopes: list[str]) -> str:
    """``piece``'s rules, each applying only under the host classes ``scopes``: ``:host``
    becomes ``:host(.scope)``, any other selector ``:host(.scope) selector``. Plain rules
    only: an at-rule or a ``:host(…)`` selector raises ValueError (write the scoping for it
    here before using one)."""
    text = COMMENT.sub("", piece)
    rules = []
    for selectors, declarations in RULE.findall(text):
        scoped_selectors = []
        for selector in split_top_level(selectors):
            selector = " ".join(selector.split())
            if selector == ":host":
                scoped_selectors += [f":host(.{scope})" for scope in scopes]
            elif ":host" in selector or not selector:
                raise ValueError(f"a selector the served stylesheet cannot scope: {selector!r}")
            else:
                scoped_selectors += [f":host(.{scope}) {selector}" for scope in scopes]
        rules.append(f"{', '.join(scoped_selectors)} {{ {declarations.strip()} }}")
    rest = RULE.sub("", text).strip()
    if rest:
        raise ValueError(f"CSS the served stylesheet cannot scope (an at-rule?): {rest[:80]!r}")
    return "\n".join(rules) + "\n"


def served_css() -> str:
    """The stylesheet the build writes beside the served bundle: every piece once, scoped to
    the components that use it, so that one file in every shadow root styles each as its own
    stylesheet did."""
    return "\n".join(scoped(piece, scopes) for piece, scopes in scopes_of_pieces().items())


if __name__ == "__main__":
    sys.stdout.write(served_css())
