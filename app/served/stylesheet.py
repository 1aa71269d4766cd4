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


GROUPING_RULES = ("@media", "@container", "@supports")
"""At-rules whose block holds rules, scoped like the piece's others."""

UNSCOPED_RULES = ("@keyframes", "@font-face", "@property")
"""At-rules kept as they are (names, not elements)."""


def scoped_selector(selector: str, scopes: list[str]) -> list[str]:
    """``selector`` under each of the host classes ``scopes``."""
    selector = " ".join(selector.split())
    if selector == ":host":
        return [f":host(.{scope})" for scope in scopes]
    if ":host" in selector or not selector:
        raise ValueError(f"a selector the served stylesheet cannot scope: {selector!r}")
    return [f":host(.{scope}) {selector}" for scope in scopes]


def closing_brace(text: str, opening: int) -> int:
    """The index of the ``}`` that closes the ``{`` at ``opening``."""
    depth = 0
    for index in range(opening, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"an unclosed block in the served components' CSS: {text[opening:80]!r}")


def scoped(piece: str, scopes: list[str]) -> str:
    """``piece``'s rules, each applying only under the host classes ``scopes``: ``:host``
    becomes ``:host(.scope)``, any other selector ``:host(.scope) selector``; the rules in
    ``@media``, ``@container`` and ``@supports`` likewise; ``@keyframes`` and ``@font-face``
    as they are. Anything else (another at-rule, a ``:host(…)`` selector) raises ValueError:
    write its scoping here before using it."""
    text = COMMENT.sub("", piece)
    out: list[str] = []
    position = 0
    while True:
        opening = text.find("{", position)
        if opening == -1:
            if text[position:].strip():
                raise ValueError(f"CSS the served stylesheet cannot read: {text[position:]!r}")
            return "\n".join(out) + "\n"
        prelude = " ".join(text[position:opening].split())
        closing = closing_brace(text, opening)
        body = text[opening + 1 : closing]
        if prelude.startswith(GROUPING_RULES):
            out.append(f"{prelude} {{\n{scoped(body, scopes)}}}")
        elif prelude.startswith(UNSCOPED_RULES):
            out.append(f"{prelude} {{{body}}}")
        elif prelude.startswith("@"):
            raise ValueError(f"an at-rule the served stylesheet cannot scope: {prelude!r}")
        else:
            selectors = [
                scoped_one
                for selector in split_top_level(prelude)
                for scoped_one in scoped_selector(selector, scopes)
            ]
            out.append(f"{', '.join(selectors)} {{ {body.strip()} }}")
        position = closing + 1


def served_css() -> str:
    """The stylesheet the build writes beside the served bundle: every piece once, scoped to
    the components that use it, so that one file in every shadow root styles each as its own
    stylesheet did."""
    return "\n".join(scoped(piece, scopes) for piece, scopes in scopes_of_pieces().items())


if __name__ == "__main__":
    sys.stdout.write(served_css())
