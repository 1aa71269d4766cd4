"""The origins ``sdpa-sim`` is told about: ``--allow-websocket-origin`` and ``--allow-embed-from``.

Bokeh compares a websocket's ``Origin`` with ``--allow-websocket-origin`` entries
(``HOST[:PORT]``) after giving a portless origin port 80, whatever its scheme. A page on the
default HTTPS port sends ``Origin: https://HOST``, which ``HOST:443`` then never matches:
here ``HOST:443`` also brings the plain ``HOST`` (any port, as Bokeh matches a portless
entry), so both forms work.

``--allow-embed-from`` takes origins as a Content-Security-Policy names them
(``https://courses.example.edu``, ``http://localhost:8000``): they go into the pages'
``frame-ancestors`` (see :mod:`app.server.request_guard`) and their hosts are allowed websocket
origins too.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
HOST_SOURCE = re.compile(r"(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\]")
"""A host as a CSP source may name it: a name (``*.`` for any subdomain) or an IP literal."""


def embed_origin(text: str) -> str:
    """``text`` as an origin for ``frame-ancestors``: ``scheme://host[:port]`` in lower case
    (``http`` or ``https``; a port number or ``*``). Raises ArgumentTypeError otherwise
    (it is ``--allow-embed-from``'s argparse type)."""
    value = text.strip().lower().rstrip("/")
    try:
        parts = urlsplit(value)
        port = parts.port if not value.endswith(":*") else None
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in DEFAULT_PORTS
        or parts.path
        or parts.query
        or parts.fragment
        or "@" in parts.netloc
    ):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an origin such as https://courses.example.edu or "
            "http://localhost:8000"
        )
    host = parts.netloc.rsplit(":", 1)[0] if port or value.endswith(":*") else parts.netloc
    if not HOST_SOURCE.fullmatch(host):
        raise argparse.ArgumentTypeError(f"{text!r}: {host!r} is not a host name")
    return value


def websocket_forms(entry: str) -> list[str]:
    """The ``--allow-websocket-origin`` entries for ``entry`` (``HOST[:PORT]``): itself,
    and the plain host for port 443, the form browsers send for that port."""
    host, colon, port = entry.rpartition(":")
    return [entry, host] if colon and port == "443" and host else [entry]


def embed_websocket_origin(origin: str) -> str:
    """The ``--allow-websocket-origin`` entry for an ``--allow-embed-from`` origin: its
    host, with its port unless that is the scheme's default."""
    parts = urlsplit(origin)
    netloc = parts.netloc
    if origin.endswith(":*"):
        return netloc
    if parts.port is not None and parts.port == DEFAULT_PORTS[parts.scheme]:
        return netloc.rsplit(":", 1)[0]
    return netloc


def websocket_origins(allowed: Iterable[str], embed_origins: Iterable[str], port: int) -> list[str]:
    """Every ``--allow-websocket-origin`` entry to give ``panel serve``, without repeats.

    Empty if neither option was given: Bokeh then allows ``localhost:PORT`` by itself. When
    only ``--allow-embed-from`` was, ``localhost:PORT`` is kept, which the others would
    otherwise replace.
    """
    allowed = list(allowed)
    embed_origins = list(embed_origins)
    if not allowed and not embed_origins:
        return []
    entries = [form for entry in allowed for form in websocket_forms(entry)]
    if not allowed:
        entries.append(f"localhost:{port}")
    entries += [embed_websocket_origin(origin) for origin in embed_origins]
    return list(dict.fromkeys(entries))
