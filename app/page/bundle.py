"""The browser code's built bundles (app/page/dist/, built from app/page/web/ by
``node scripts/build_web.mjs``) and the base class of the served page's components.

The served components load one ES module, Panel's compiled-bundle format (a component's
documented ``_bundle``): Panel serves it at ``/components/…`` as a file, so a page's document
names it instead of carrying the code, and a browser fetches it once. Its name carries the hash
of its content, so it may be cached for good. The offline file inlines the other bundle, built
from the same modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from panel.custom import JSComponent

WEB = Path(__file__).with_name("web")
"""The browser code's sources: ES modules, in shared/ (both pages), served/ and offline/."""

DIST = Path(__file__).with_name("dist")
"""The committed bundles: what app/page/web/ builds (CI rebuilds and compares)."""

SERVED_BUNDLE_GLOB = "served-*.js"
"""The served bundle's name, its content hash in place of the star."""


def served_bundle() -> Path:
    """The served page's bundle: the one file in :data:`DIST` its build named."""
    found = sorted(DIST.glob(SERVED_BUNDLE_GLOB))
    if len(found) != 1:
        raise RuntimeError(
            f"expected one {SERVED_BUNDLE_GLOB} in {DIST}, found {[path.name for path in found]}: "
            "run `node scripts/build_web.mjs`"
        )
    return found[0]


OFFLINE_BUNDLE = DIST / "offline.js"
"""The offline file's page, a classic script it inlines."""


def stylesheet_scope(component: type) -> str:
    """The class a served component's element carries, under which the bundle's stylesheet
    applies its CSS (every component's shadow root links the one file): named after the
    class that declares its ``bundled_css``."""
    owner = next(cls for cls in component.__mro__ if "bundled_css" in vars(cls))
    return f"sdpa-scope-{owner.__name__}"


class BundledComponent(JSComponent):
    """A served component whose browser code is its class's name in the served bundle
    (app/page/web/served/index.js exports each by that name)."""

    bundled_css: ClassVar[tuple[str, ...]] = ()
    """The CSS the component's shadow root needs. The build writes every served component's
    into the stylesheet beside the bundle (:func:`app.served.stylesheet.served_css`), which
    Panel links into each component (its ``_bundle_css``): no document carries it. Each
    rule there applies under the component's :func:`stylesheet_scope` only."""

    def __init__(self, **params: Any) -> None:
        params["css_classes"] = [*params.get("css_classes", []), stylesheet_scope(type(self))]
        super().__init__(**params)

    _bundle = served_bundle()
