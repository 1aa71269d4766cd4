"""Which files Panel's ``/components/`` route may serve: the served page's own bundles.

Panel serves a component's compiled bundle (its documented ``_bundle``) at
``/components/<module>/<Class>/_bundle_path/<file>`` (and the bundle's CSS beside it under
``_bundle_css``), and its handler imports ``<module>`` to find it, whatever the path names.
The request guard lets through only the paths named here
(:attr:`app.server.request_guard.RequestGuard.component_files`): any other is a plain 404.
"""

from __future__ import annotations

import inspect
from pathlib import Path, PurePath

import param
from panel.custom import ReactiveESM

APP_PACKAGE = "app."
BUNDLE_ATTRIBUTES = {".js": "_bundle_path", ".css": "_bundle_css"}
"""The attribute Panel names in a bundle's address, by the file's suffix."""


def app_components() -> list[type[ReactiveESM]]:
    """Every component class of the app (the served page's, imported here)."""
    # The page's session imports every component it shows.
    import app.served.session  # noqa: F401

    return [
        component
        for component in param.concrete_descendents(ReactiveESM).values()
        if component.__module__.startswith(APP_PACKAGE)
    ]


def bundle_files(component: type[ReactiveESM]) -> list[str]:
    """The ``/components/`` paths (after the prefix) of ``component``'s bundle and its CSS,
    as Panel names them: after the first class in its ancestry that has the same
    ``_bundle``; none if it has no bundle file."""
    bundle = component._bundle
    if not bundle:
        return []
    owner = component
    for ancestor in component.__mro__[1:]:
        is_component = isinstance(ancestor, type) and issubclass(ancestor, ReactiveESM)
        if is_component and ancestor._bundle == bundle:
            owner = ancestor
    folder = Path(inspect.getfile(owner)).parent
    path = Path(bundle) if isinstance(bundle, PurePath) else folder / bundle
    files = []
    for candidate in (path, path.with_suffix(".css")):
        if candidate.is_file():
            relative = candidate.resolve().relative_to(folder.resolve()).as_posix()
            attribute = BUNDLE_ATTRIBUTES[candidate.suffix]
            files.append(f"{owner.__module__}/{owner.__name__}/{attribute}/{relative}")
    return files


def served_component_files() -> tuple[str, ...]:
    """Every path Panel's ``/components/`` route may serve for this app."""
    files = {path for component in app_components() for path in bundle_files(component)}
    return tuple(sorted(files))
