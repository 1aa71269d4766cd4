"""The one place the app reaches into Panel's internals, each for a measured figure.

Every entry names the Panel versions it was checked against and the upstream code it relies
on; ``tests/model/test_compat.py`` fails loudly when that code changes shape, and
:func:`apply` refuses (with a warning, leaving Panel as it is) on a version it does not know.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any

import panel as pn
import panel.io.server as panel_server
from bokeh.model import Model
from packaging.version import Version
from panel.io.state import state

log = logging.getLogger(__name__)

CHECKED_PANEL = ("1.9", "1.10")
"""Panel minor versions whose ``panel.io.server`` this module was read against."""

BUNDLE_SIGNATURE = ("roots", "resources", "notebook", "reloading", "enable_mathjax")
"""The parameters of ``panel.io.resources.bundle_resources`` the cache below passes on."""


def panel_version_checked(version: str = pn.__version__) -> bool:
    """Whether ``version`` of Panel is one this module was checked against."""
    release = Version(version).release
    return f"{release[0]}.{release[1]}" in CHECKED_PANEL


def bundle_signature_matches(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes the parameters :data:`BUNDLE_SIGNATURE`, in that order."""
    return tuple(inspect.signature(function).parameters) == BUNDLE_SIGNATURE


def _page_key(roots: Iterable[Model], resources: Any) -> tuple | None:
    """What a page's resource bundle depends on, or None when it should not be cached.

    Panel derives the bundle from the resources' mode and URLs, the request's relative path,
    the configuration, and which kinds of models the page holds (tables, MathJax, each
    component's own CSS and scripts). Pages of one app at one path share all of them.
    """
    roots = list(roots)
    if not roots or roots[0].document is None:
        return None
    kinds = frozenset(type(model) for model in roots[0].document.models)
    config = pn.config
    return (
        type(resources),
        resources.mode,
        resources.root_url,
        getattr(resources, "absolute", None),
        state.rel_path,
        kinds,
        bool(config.notifications and state.notifications),
        id(config.design),
        tuple(config.css_files),
        tuple(config.raw_css),
        tuple(config.global_css),
        tuple(config.js_files.items()),
    )


def cached_bundle_resources(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (Panel's ``bundle_resources``) with its result kept per page kind.

    Panel recomputes a served page's scripts and stylesheets for every page request, walking
    every custom component class of the process and checking their files on disk: about a
    fifth of the server's time per arriving student, the same answer each time. Callers get
    a copy, since Panel's autoload script adds to the bundle it receives.
    """
    cache: dict[tuple, Any] = {}

    def bundle_resources(
        roots: Any,
        resources: Any,
        notebook: bool = False,
        reloading: bool = False,
        enable_mathjax: bool | str = "auto",
    ) -> Any:
        key = None
        if not (notebook or reloading) and enable_mathjax == "auto" and resources is not None:
            key = _page_key(roots, resources)
        if key is None:
            return original(roots, resources, notebook, reloading, enable_mathjax)
        if key not in cache:
            cache[key] = original(roots, resources, notebook, reloading, enable_mathjax)
        return _copy_bundle(cache[key])

    bundle_resources.__wrapped__ = original  # type: ignore[attr-defined]
    return bundle_resources


def _copy_bundle(bundle: Any) -> Any:
    fresh = copy.copy(bundle)
    for name, value in vars(bundle).items():
        if isinstance(value, list | dict):
            setattr(fresh, name, copy.copy(value))
    return fresh


def cache_page_resources() -> bool:
    """Serve pages with a cached resource bundle (see :func:`cached_bundle_resources`).

    Checked against Panel 1.9 and 1.10, where ``panel.io.server`` imports
    ``bundle_resources`` by name and calls it from ``server_html_page_for_session`` and
    ``autoload_js_script``; upstream code: panel/io/resources.py ``bundle_resources`` and
    ``Resources.extra_resources``. No upstream issue asks for a cache; holoviz/panel#4562
    (resources per page, after #4282) is why the bundle is computed per request. Returns
    whether it was applied; idempotent.
    """
    current = panel_server.bundle_resources
    if hasattr(current, "__wrapped__"):
        return True
    if not panel_version_checked() or not bundle_signature_matches(current):
        log.warning(
            "sdpa-sim: Panel %s is not one the page-resource cache was checked against "
            "(%s): pages are served without it",
            pn.__version__,
            ", ".join(CHECKED_PANEL),
        )
        return False
    panel_server.bundle_resources = cached_bundle_resources(current)
    return True
