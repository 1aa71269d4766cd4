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

import sys

from app.page.bundle import BundledComponent
from app.served.component_routes import app_components


def served_components() -> list[type[BundledComponent]]:
    """Every served component class that loads the bundle, in a fixed order (module, name)."""
    found = [
        component
        for component in app_components()
        if issubclass(component, BundledComponent) and component is not BundledComponent
    ]
    return sorted(found, key=lambda component: (component.__module__, component.__qualname__))


def stylesheet_blocks() -> list[str]:
    """Each distinct piece of the served components' CSS once, in the components' order."""
    blocks: list[str] = []
    for component in served_components():
        for block in component.bundled_css:
            if block not in blocks:
                blocks.append(block)
    return blocks


def served_css() -> str:
    """The stylesheet the build writes beside the served bundle."""
    return "\n".join(block.strip() + "\n" for block in stylesheet_blocks())


if __name__ == "__main__":
    sys.stdout.write(served_css())
