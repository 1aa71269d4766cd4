"""The page's address as the browser has it: parsed from the request, guarded from the page."""

from __future__ import annotations

import urllib.parse

import panel as pn
from panel.io.location import Location
from panel.util import edit_readonly

from app.compat import CheckedPageChanges

MAX_ADDRESS_LENGTH = 65536
"""The longest address part a page may send: no request head Tornado reads is longer, so
no address the server could have been asked for is either."""

LOCATION_PREFIXES = {"pathname": "/", "search": "?", "hash": "#"}
"""What these Location parameters start with when not empty (Panel's regexes for them)."""


def location_params(protocol: str | None, host: str | None, uri: str | None) -> dict[str, str]:
    """Location parameters (``href``, ``hostname``, ``port``, ``pathname``, ``search``,
    ``hash``, ``protocol``) for a request, as the browser's ``window.location`` has them.

    Panel's own parser splits the URI on ``?`` and the Host on ``:``, so a ``?`` inside the
    query (``?d_k=8&ref=https://course.example/page?id=3``, ``??d_k=5``) or an IPv6 Host
    (``[::1]:5006``) failed the page. Here the query starts at the first ``?`` (the rest,
    further ``?`` included, is the query, as Tornado reads it) and the hash at the first
    ``#``; a bracketed IPv6 host keeps its brackets, as ``location.hostname`` does; a port
    that is not a number is left out. Never raises.
    """
    params: dict[str, str] = {}
    if protocol:
        params["protocol"] = f"{protocol}:"
    if host:
        if host.startswith("["):
            hostname, _, rest = host.partition("]")
            hostname += "]"
            port = rest[1:] if rest.startswith(":") else ""
        elif host.count(":") == 1:
            hostname, _, port = host.partition(":")
        else:
            hostname, port = host, ""
        params["hostname"] = hostname
        params["port"] = port if port.isascii() and port.isdigit() else ""
    if uri:
        scheme, separator, after = uri.partition("://")
        if separator and scheme.lower() in ("http", "https"):
            # An absolute-form request target: the path starts after the authority.
            authority_end = min((i for i in map(after.find, "/?#") if i >= 0), default=len(after))
            uri = after[authority_end:]
        rest, _, fragment = uri.partition("#")
        path, mark, query = rest.partition("?")
        params["pathname"] = path if path.startswith("/") else f"/{path}"
        params["search"] = f"?{query}" if mark and query else ""
        params["hash"] = f"#{fragment}" if fragment else ""
    authority = f"//{host}" if host else ""
    parts = (params.get(name, "") for name in ("pathname", "search", "hash"))
    params["href"] = params.get("protocol", "") + authority + "".join(parts)
    return params


class SafeLocation(CheckedPageChanges, Location):
    """Panel's Location, built from a request with :func:`location_params` and guarded
    against what a page sends back.

    ``query_params`` gives the raw text of each parameter: Panel's parses every value (an
    all-digit value of over 4300 digits failed the session, ``[…]`` went through
    ``ast.literal_eval``) and the app reads its parameters itself (:mod:`app.simulation.query`). The
    page may only change the address's parts, each as text of the right form; ``reload``
    and anything else stay as the server set them.
    """

    page_properties = ("href", "hostname", "pathname", "protocol", "port", "search", "hash")

    @classmethod
    def from_request(cls, request: object) -> SafeLocation:
        """The Location of the page ``request`` (a Bokeh session's request) asked for."""
        location = cls()
        if request is None:
            return location
        params = location_params(
            getattr(request, "protocol", None),
            getattr(request, "host", None),
            getattr(request, "uri", None),
        )
        with edit_readonly(location):
            location.param.update(params)
        return location

    @property
    def query_params(self) -> dict:
        """The query's parameters as text, the last of a repeated name winning."""
        return dict(urllib.parse.parse_qsl(self.search[1:], keep_blank_values=True))

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Text only, at most :data:`MAX_ADDRESS_LENGTH` characters (an address no request
        could carry is refused before it is kept), starting as the parameter's regex asks
        (Panel would raise otherwise)."""
        if not isinstance(value, str) or len(value) > MAX_ADDRESS_LENGTH:
            return False
        prefix = LOCATION_PREFIXES.get(name)
        if prefix is None or value == "":
            return True
        # In an iframe made from ``srcdoc`` the browser's pathname is "srcdoc".
        return value.startswith(prefix) or (name == "pathname" and value == "srcdoc")


def session_location() -> SafeLocation | None:
    """A :class:`SafeLocation` for the current server session; None outside a server."""
    if not served():
        return None
    return SafeLocation.from_request(pn.state.curdoc.session_context.request)


def served() -> bool:
    """Whether the page is being built for a browser session of a running server."""
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None
