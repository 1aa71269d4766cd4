"""What ``sdpa-sim`` refuses before Bokeh and Panel read a request, and the headers it adds.

Pure functions of a request's line and headers, so they can be tested without a server
(:mod:`app.server.guarded_http` applies them to every request, in one process as in each worker of
``--num-procs``). Refused, with a plain 4xx:

- a ``Host`` that is missing, malformed (userinfo, a path, several) or not one this server
  answers to: against DNS rebinding, as Jupyter's server does, a host name must be
  ``localhost``, the served address or one of the hosts the options allow; an IP literal must
  be a loopback address or the served one (any, when serving on every interface: an address
  typed by hand cannot be rebound);
- parameters only Bokeh's embedding and internals use (``bokeh-*``: Bokeh and Panel read
  ``bokeh-absolute-url``, ``bokeh-session-id`` and ``bokeh-token`` from any page URL), and
  a ``Bokeh-Session-Id`` header: a link cannot choose where scripts come from nor which
  session a student joins. ``autoload.js`` keeps the three parameters Bokeh's
  ``server_document`` sends, checked for shape;
- a page whose query is too long for its session to keep (:mod:`app.simulation.address`): sent, with
  a 303, to the same address without the parameters that do not fit, named in the
  ``sdpa-omitted`` parameter the app explains;
- a request target that is not a path, or whose path carries a control character (a NUL
  byte, raw or percent-encoded: Python's file functions raise on it);
- on Panel's ``/components/`` route, which imports the module its path names: any path
  but the app's own bundle files (a plain 404, nothing imported);
- on the app's websocket path (``/main/ws``): a request that is not a websocket, and a
  websocket that Bokeh would accept and then drop with a traceback in the log: not the
  sub-protocols ``bokeh`` and a token, a token this process did not sign (a forged or
  chosen session), or an expired one.

The guard decides on what a request is, its path, never on what its headers claim: Tornado
routes ``/main`` to the page whatever ``Upgrade`` says, so a page request with websocket
headers has its parameters checked like any other.

Every response but a websocket's gets ``Content-Security-Policy: frame-ancestors``: the
app's own origin, ``localhost`` on any port, and the course sites given with
``--allow-embed-from``.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlsplit

from bokeh.server.util import match_host
from bokeh.util.token import check_token_signature, get_token_payload
from tornado.httputil import parse_qs_bytes

from app.server.mounted_routes import COMPONENT_PREFIX, component_allowed
from app.simulation.address import fit_query

RESERVED_PREFIX = "bokeh-"
"""Query parameters Bokeh and Panel read for themselves, never the app's."""

SESSION_PARAMETERS = frozenset({"bokeh-session-id", "bokeh-token"})
SESSION_HEADER = "Bokeh-Session-Id"

AUTOLOAD_SUFFIX = "/autoload.js"
WEBSOCKET_SUFFIX = "/ws"
"""Bokeh serves an app's websocket at its path plus this (``/main/ws``, ``/ws``)."""
CONTROL_BYTES = re.compile(rb"[\x00-\x1f\x7f]")
"""Bytes no path of this server holds: C0 controls (NUL among them) and DEL."""
AUTOLOAD_ELEMENT = "bokeh-autoload-element"
AUTOLOAD_APP_PATH = "bokeh-app-path"
AUTOLOAD_ABSOLUTE_URL = "bokeh-absolute-url"
AUTOLOAD_PARAMETERS = frozenset({AUTOLOAD_ELEMENT, AUTOLOAD_APP_PATH, AUTOLOAD_ABSOLUTE_URL})
"""What ``bokeh.embed.server_document`` puts in an ``autoload.js`` address."""

ELEMENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
PORT = re.compile(r"[0-9]{1,5}")

LOCATION_SAFE = "/?&=%:@!$'()*+,;[]~-._"
"""What a redirect's ``Location`` keeps of the request target as it is (the rest encoded)."""

WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})
LOCAL_NAMES = ("localhost",)
LOCAL_FRAME_ANCESTORS = ("http://localhost:*", "https://localhost:*")


class StartLine(Protocol):
    """The parts of Tornado's ``RequestStartLine`` the guard reads."""

    method: str
    path: str


class Headers(Protocol):
    """The parts of Tornado's ``HTTPHeaders`` the guard reads."""

    def get_list(self, name: str) -> list[str]:
        """Every value of header ``name``."""
        ...


@dataclass(frozen=True)
class Refusal:
    """A plain-text answer instead of the page."""

    status: int
    reason: str
    text: str
    headers: tuple[tuple[str, str], ...] = ()
    """More headers of the answer (a redirect's ``Location``)."""


def bad_request(text: str) -> Refusal:
    """A 400 with ``text``."""
    return Refusal(400, "Bad Request", text)


def forbidden(text: str) -> Refusal:
    """A 403 with ``text``."""
    return Refusal(403, "Forbidden", text)


UNKNOWN_HOST = forbidden(
    "This server does not answer to that host name. Use the address the course gave you."
)
NO_SESSION_CHOICE = forbidden(
    "A link cannot choose the page's session: load the page again without "
    "bokeh-session-id or bokeh-token."
)
NOT_OUR_SESSION = forbidden(
    "This page's session was not made by this server, or has expired: load the page again."
)
NOT_A_BOKEH_WEBSOCKET = bad_request(
    "The app's websocket offers two sub-protocols: bokeh and the page's token."
)
NOT_A_WEBSOCKET = bad_request(
    "This address is the app's websocket: only the page opens it, as a websocket."
)
NOT_FOUND = Refusal(404, "Not Found", "There is no page or file at this address.")
"""A path no route of this server may answer (a component that is not the app's, a route
this server does not know: :mod:`app.server.mounted_routes`)."""
CONTROL_IN_PATH = bad_request(
    "The address's path carries a control character (such as a NUL byte): no file or page has one."
)


def offered_token(protocols: str) -> str | None:
    """The session token in a ``Sec-WebSocket-Protocol`` value, or None.

    BokehJS offers two sub-protocols, ``bokeh`` and the token; Bokeh's server only accepts
    exactly that pair, so anything else carries no token here either.
    """
    offered = [part.strip() for part in protocols.split(",")]
    if len(offered) == 2 and offered[0] == "bokeh" and offered[1]:
        return offered[1]
    return None


def token_signed_by(token: str, key: bytes) -> bool:
    """Whether session ``token`` was signed with ``key`` (an empty key signs nothing)."""
    if not key:
        return False
    try:
        return check_token_signature(token, secret_key=key, signed=True)
    except (ValueError, KeyError, TypeError):
        # Not base64, not JSON, or JSON without a session id: nobody's token.
        return False


def token_live(token: str, now: float) -> bool:
    """Whether a (signed) token still opens its session: Bokeh refuses one past its
    ``session_expiry``."""
    try:
        expiry = get_token_payload(token).get("session_expiry")
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(expiry, int | float) and now < expiry


def check_websocket(headers: Headers, session_key: bytes | None, now: float) -> Refusal | None:
    """Refuse a websocket Bokeh would refuse only after accepting it (see the module)."""
    token = offered_token(",".join(headers.get_list("Sec-WebSocket-Protocol")))
    if token is None:
        return NOT_A_BOKEH_WEBSOCKET
    if session_key is not None and not (
        token_signed_by(token, session_key) and token_live(token, now)
    ):
        return NOT_OUR_SESSION
    return None


@dataclass(frozen=True)
class Host:
    """A ``Host`` header, parsed: the name in lower case (an IPv6 literal without its
    brackets, a trailing dot removed) and the port, if given."""

    name: str
    port: int | None = None

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The address, if the name is an IP literal."""
        try:
            return ipaddress.ip_address(self.name)
        except ValueError:
            return None


def parse_host(value: str) -> Host | None:
    """The host in a ``Host`` header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), or
    None if it is anything else (userinfo, a path, a bare IPv6 address, a bad port)."""
    value = value.strip().lower()
    port: str | None = None
    if value.startswith("["):
        literal, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
        try:
            name = str(ipaddress.IPv6Address(literal))
        except ValueError:
            return None
    else:
        name, colon, port_text = value.partition(":")
        port = port_text if colon else None
        # One trailing dot is the same name, fully qualified.
        name = name[:-1] if name.endswith(".") else name
        if not HOST_NAME.fullmatch(name):
            return None
    if port is None:
        return Host(name)
    if not PORT.fullmatch(port) or not 0 < int(port) < 65536:
        return None
    return Host(name, int(port))


def origin_host(entry: str) -> str:
    """The host pattern of an allowed origin (``HOST[:PORT]`` or ``scheme://HOST[:PORT]``),
    without its port, in lower case."""
    netloc = urlsplit(entry).netloc if "://" in entry else entry
    if netloc.startswith("["):
        return netloc[1 : netloc.find("]")].lower()
    return netloc.rsplit(":", 1)[0].lower() if netloc.count(":") == 1 else netloc.lower()


def is_app_path(path: str, app_paths: Sequence[str]) -> bool:
    """Whether ``path`` is one the app's page is served under (with or without a final
    slash)."""
    return path in app_paths or path.rstrip("/") in app_paths


def is_autoload(path: str, app_paths: Sequence[str]) -> bool:
    """Whether ``path`` is the app's ``autoload.js``."""
    return path.endswith(AUTOLOAD_SUFFIX) and is_app_path(
        path[: -len(AUTOLOAD_SUFFIX)] or "/", app_paths
    )


def is_websocket_path(path: str, app_paths: Sequence[str]) -> bool:
    """Whether ``path`` is the app's websocket (its path plus ``/ws``)."""
    return path.endswith(WEBSOCKET_SUFFIX) and is_app_path(
        path[: -len(WEBSOCKET_SUFFIX)] or "/", app_paths
    )


def has_control_bytes(path: str) -> bool:
    """Whether a request path (as Tornado holds it: latin-1 text of the raw bytes) carries a
    control byte, as sent or percent-encoded (``%00``)."""
    raw = path.encode("latin-1", errors="replace")
    return bool(CONTROL_BYTES.search(raw) or CONTROL_BYTES.search(unquote_to_bytes(raw)))


def is_upgrade(headers: Headers) -> bool:
    """Whether the request asks to become a websocket."""
    values = ",".join(headers.get_list("Upgrade"))
    return "websocket" in {part.strip().lower() for part in values.split(",")}


def is_page_request(method: str, target: str, app_paths: Sequence[str]) -> bool:
    """Whether a request builds a Bokeh session: a GET of the app's page or its
    ``autoload.js``, whatever its headers say (Tornado routes by path: websocket headers
    on ``/main`` still get the page)."""
    if method != "GET":
        return False
    path = target.partition("?")[0]
    return is_app_path(path, app_paths) or is_autoload(path, app_paths)


def check_autoload(arguments: Mapping[str, list[bytes]], app_paths: Sequence[str]) -> bool:
    """Whether ``autoload.js``'s own parameters have the shape ``server_document`` gives
    them: one element id, an app path of this server, an http(s) address."""
    for name in AUTOLOAD_PARAMETERS & arguments.keys():
        if len(arguments[name]) != 1:
            return False
    element = arguments.get(AUTOLOAD_ELEMENT, [b""])[0].decode("latin-1")
    if not ELEMENT_ID.fullmatch(element):
        return False
    app_path = arguments.get(AUTOLOAD_APP_PATH)
    if app_path is not None and not is_app_path(app_path[0].decode("latin-1"), app_paths):
        return False
    absolute = arguments.get(AUTOLOAD_ABSOLUTE_URL)
    if absolute is not None:
        try:
            url = urlsplit(absolute[0].decode("utf-8"))
            return url.scheme in ("http", "https") and bool(url.hostname) and not url.username
        except (UnicodeDecodeError, ValueError):
            return False
    return True


def fitted_page(path: str, query: str) -> Refusal | None:
    """A 303 to the page at ``path`` with what its session can keep of ``query``
    (:func:`app.simulation.address.fit_query`), or None when all of it fits."""
    fitted = fit_query(query)
    if fitted is None:
        return None
    target, omitted = fitted
    names = ", ".join(item.name[:20] for item in omitted[:3]) + (", …" if len(omitted) > 3 else "")
    return Refusal(
        303,
        "See Other",
        f"This address is too long to keep; the page opens without {len(omitted)} of its "
        f"parameters ({names}).",
        # As sent, but for what a header cannot carry (Tornado holds the target as latin-1).
        (("Location", quote_from_bytes(f"{path}?{target}".encode("latin-1"), LOCATION_SAFE)),),
    )


@dataclass(frozen=True)
class RequestGuard:
    """The hosts this server answers to, the origins that may frame it, and its app's paths."""

    names: tuple[str, ...] = LOCAL_NAMES
    """Host-name patterns allowed in ``Host`` (Bokeh's ``match_host``: ``*`` wildcards)."""
    addresses: tuple[str, ...] = ()
    """IP literals allowed in ``Host`` besides the loopback ones."""
    any_address: bool = False
    """Whether any IP literal is allowed (the server listens on every interface)."""
    frame_ancestors: tuple[str, ...] = ()
    """Origins besides the app's own and localhost that may frame its pages."""
    app_paths: tuple[str, ...] = ("/", "/main")
    component_files: tuple[str, ...] = ()
    """The paths Panel's ``/components/`` route may serve (after that prefix: the app's own
    bundles, set by the serving process, app/served/component_routes.py); any other path
    there is a 404 before Panel imports the module it names."""

    @classmethod
    def for_server(
        cls,
        address: str,
        websocket_origins: Iterable[str] = (),
        embed_origins: Iterable[str] = (),
        app_paths: Sequence[str] = ("/", "/main"),
    ) -> RequestGuard:
        """The guard of a server listening on ``address`` that allows these websocket
        origins (``HOST[:PORT]``) and embedding origins (``scheme://HOST[:PORT]``)."""
        embed_origins = tuple(embed_origins)
        names = list(LOCAL_NAMES)
        addresses: list[str] = []
        any_address = address in WILDCARD_ADDRESSES
        for entry in [address, *websocket_origins, *embed_origins]:
            if not entry or entry in WILDCARD_ADDRESSES:
                continue
            host = origin_host(entry) if entry != address else entry.strip("[]").lower()
            try:
                addresses.append(str(ipaddress.ip_address(host)))
            except ValueError:
                names.append(host.rstrip("."))
        return cls(
            names=tuple(dict.fromkeys(names)),
            addresses=tuple(dict.fromkeys(addresses)),
            any_address=any_address,
            frame_ancestors=embed_origins,
            app_paths=tuple(app_paths),
        )

    def to_json(self) -> str:
        """This guard as JSON, for a worker process (:meth:`from_json`)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RequestGuard:
        """The guard :meth:`to_json` wrote."""
        fields: dict[str, Any] = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})

    def host_allowed(self, host: Host) -> bool:
        """Whether this server answers to ``host``."""
        ip = host.ip
        if ip is not None:
            return self.any_address or ip.is_loopback or str(ip) in self.addresses
        return any(match_host(host.name, pattern) for pattern in self.names)

    def check(
        self,
        start_line: StartLine,
        headers: Headers,
        session_key: bytes | None = None,
        now: float | None = None,
    ) -> Refusal | None:
        """The answer to give instead of serving the request, or None to serve it.

        ``session_key`` is the secret this process signs session ids with: a websocket's
        token must carry its signature and not have expired at ``now`` (seconds since the
        epoch; the current time by default). Without it Bokeh checks tokens alone.
        """
        hosts = headers.get_list("Host")
        if len(hosts) != 1:
            return bad_request("The request needs exactly one Host header.")
        host = parse_host(hosts[0])
        if host is None:
            return bad_request("The Host header is not a host name, IP address and port.")
        if not self.host_allowed(host):
            return UNKNOWN_HOST
        path, _, query = start_line.path.partition("?")
        if not path.startswith("/"):
            return bad_request("The request target is not a path.")
        if has_control_bytes(path):
            return CONTROL_IN_PATH
        if path.startswith(COMPONENT_PREFIX) and not component_allowed(path, self.component_files):
            return NOT_FOUND
        if headers.get_list(SESSION_HEADER):
            return NO_SESSION_CHOICE
        if is_websocket_path(path, self.app_paths):
            if not is_upgrade(headers):
                return self.check_parameters(path, query) or NOT_A_WEBSOCKET
            # A websocket names its session in its sub-protocols; its query is the page's.
            return check_websocket(headers, session_key, time.time() if now is None else now)
        # Any other path, websocket headers or not, is what Tornado routes it to.
        refusal = self.check_parameters(path, query)
        if refusal is None and is_app_path(path, self.app_paths):
            return fitted_page(path, query)
        return refusal

    def check_parameters(self, path: str, query: str) -> Refusal | None:
        """Refuse Bokeh's own parameters in a query (``autoload.js`` keeps its three)."""
        if RESERVED_PREFIX not in query.lower() and "%" not in query:
            return None
        # Read as Tornado reads them for Bokeh: percent-decoded names, every value.
        arguments = parse_qs_bytes(query, keep_blank_values=True)
        reserved = {name for name in arguments if name.lower().startswith(RESERVED_PREFIX)}
        if not reserved:
            return None
        if reserved & SESSION_PARAMETERS:
            return NO_SESSION_CHOICE
        if (
            is_autoload(path, self.app_paths)
            and reserved <= AUTOLOAD_PARAMETERS
            and check_autoload(arguments, self.app_paths)
        ):
            return None
        return bad_request(
            "This address carries parameters only the server itself uses (bokeh-…): "
            "load the page without them."
        )

    def response_headers(self) -> dict[str, str]:
        """Headers every response but a websocket's carries."""
        sources = ["'self'", *LOCAL_FRAME_ANCESTORS, *self.frame_ancestors]
        return {"Content-Security-Policy": "frame-ancestors " + " ".join(sources)}
