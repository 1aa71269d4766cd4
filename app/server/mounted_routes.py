"""Every route Panel and Bokeh mount in ``sdpa-sim``'s server, and how a hostile request to
each is kept harmless.

``panel serve`` mounts handlers this app never asked for. Each one a request can reach is
named in :data:`KNOWN_HANDLERS` with what keeps it safe; :class:`RouteTable` reads the
routes a running server actually mounts (:meth:`RouteTable.of`), and a path whose route's
handler is not named there is answered with a plain 404 before the handler runs: a Panel or
Bokeh release that mounts a new handler cannot expose it until it is looked at
(tests/server/test_mounted_routes.py fails too, and the server warns at start).

Panel's ``/components/`` route imports the module its path names (``importlib.import_module``)
before checking anything: the guard lets through only the app's own bundles
(:func:`component_allowed`, :attr:`app.server.request_guard.RequestGuard.component_files`).

Pure functions of paths and handler names, and a reader of Tornado's routing rules
(``Application.wildcard_router.rules``: each a ``Rule`` with a ``PathMatches`` matcher and a
handler class as its target).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import unquote_to_bytes

COMPONENT_PREFIX = "/components/"
"""Where Panel serves a component's own files (``/components/<module>/<class>/<attribute>/…``)."""

KNOWN_HANDLERS: Mapping[str, str] = {
    "bokeh.server.views.ico_handler.IcoHandler": "one fixed icon; no path arguments",
    "panel.io.server.WSHandler": (
        "the page's websocket: the guard checks its sub-protocols, its token's signature and "
        "expiry, and refuses anything that is not a websocket"
    ),
    "bokeh.server.views.metadata_handler.MetadataHandler": (
        "the app's fixed metadata as JSON; no path arguments; query checked by the guard"
    ),
    "panel.io.server.AutoloadJsHandler": (
        "builds a session like the page: its three bokeh-* parameters checked for shape"
    ),
    "panel.io.server.DocHandler": (
        "the page: bokeh-* parameters and the session header refused, long queries redirected"
    ),
    "bokeh.server.views.static_handler.StaticHandler": (
        "BokehJS's files: Tornado's StaticFileHandler keeps paths inside its folder"
    ),
    "panel.io.server.AuthenticatedStaticFileHandler": (
        "the project's static/ folder: Tornado's StaticFileHandler keeps paths inside it"
    ),
    "panel.io.server.ComponentResourceHandler": (
        "imports the module its path names: only the app's own bundle files pass the guard"
    ),
    "app.served.channel.ChannelHandler": (
        "the session's own websocket: a signed session key, its origin and every message checked"
    ),
    "app.served.page_data.PageDataHandler": (
        "data the process published, by a 32-hex-digit digest the route's pattern checks; "
        "any other digest is a 404"
    ),
    "panel.io.server.RootHandler": "redirects / to the app's page; no path arguments",
    "bokeh.server.views.multi_root_static_handler.MultiRootStaticHandler": (
        "extensions' files (Panel's dist): a fixed table of folders, paths kept inside them"
    ),
}
"""Each handler class a request can reach (``module.Class``), with what keeps it safe."""


def handler_name(handler: object) -> str:
    """A route target's ``module.Class`` name (``repr`` of anything that is not a class)."""
    if isinstance(handler, type):
        return f"{handler.__module__}.{handler.__qualname__}"
    return repr(handler)


@dataclass(frozen=True)
class MountedRoute:
    """One routing rule of the server: Tornado's regular expression and its handler."""

    pattern: str
    handler: str
    """The handler class as ``module.Class``."""
    known: bool = True
    """Whether the server knows how this handler is kept safe (:data:`KNOWN_HANDLERS`)."""


@dataclass(frozen=True)
class RouteTable:
    """The routes a server mounts, in Tornado's order (the first whose pattern matches the
    whole path handles a request)."""

    routes: tuple[MountedRoute, ...]
    readable: bool = True
    """False if the server's rules could not be read (then no route is refused here)."""

    @classmethod
    def of(cls, application: object, known_handlers: Iterable[str] = KNOWN_HANDLERS) -> RouteTable:
        """The routes of a Tornado ``Application`` (``wildcard_router.rules``), each known
        if its handler is one of ``known_handlers`` (``module.Class``)."""
        known = set(known_handlers)
        rules = getattr(getattr(application, "wildcard_router", None), "rules", None)
        if not isinstance(rules, list):
            return cls((), readable=False)
        routes = []
        for rule in rules:
            regex = getattr(getattr(rule, "matcher", None), "regex", None)
            if not isinstance(regex, re.Pattern):
                return cls((), readable=False)
            handler = handler_name(getattr(rule, "target", None))
            routes.append(MountedRoute(regex.pattern, handler, handler in known))
        return cls(tuple(routes))

    @cached_property
    def unknown(self) -> tuple[MountedRoute, ...]:
        """The routes whose handler the server does not know."""
        return tuple(route for route in self.routes if not route.known)

    def route_for(self, path: str) -> MountedRoute | None:
        """The route Tornado gives ``path`` (the request's path, undecoded), or None."""
        for route in self.routes:
            pattern = route.pattern if route.pattern.endswith("$") else route.pattern + "$"
            if re.match(pattern, path):
                return route
        return None

    def refuses(self, path: str) -> bool:
        """Whether ``path`` reaches a handler this server does not know (answered 404)."""
        if not self.unknown:
            # Every request asks: with every route known (as served), no pattern is tried.
            return False
        route = self.route_for(path)
        return route is not None and not route.known

    def warning(self) -> str | None:
        """The line the server prints at start about routes it refuses, or None."""
        if not self.readable:
            return (
                "sdpa-sim: could not read the server's routing table; routes Panel or Bokeh "
                "add are not checked (app/server/mounted_routes.py)"
            )
        if not self.unknown:
            return None
        names = "; ".join(f"{route.pattern} ({route.handler})" for route in self.unknown)
        return (
            f"sdpa-sim: Panel or Bokeh mount routes this server does not know, answered "
            f"with 404 until app/server/mounted_routes.py says how they are guarded: {names}"
        )


def component_file(path: str) -> str | None:
    """What a ``/components/`` path asks for (the rest of the path, decoded as Tornado
    decodes it for Panel), or None if it is not such a path or is not UTF-8."""
    if not path.startswith(COMPONENT_PREFIX):
        return None
    rest = path[len(COMPONENT_PREFIX) :]
    try:
        return unquote_to_bytes(rest.encode("latin-1")).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None


def component_allowed(path: str, files: tuple[str, ...]) -> bool:
    """Whether a ``/components/`` path asks for one of ``files`` (each as
    :func:`component_file` reads it)."""
    return component_file(path) in files
