"""Generated hostile requests for the request guard's tests: Host headers and Bokeh's own
parameters, each with the status a server answers it with (0: served as usual).

The tests import it as a top-level module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from urllib.parse import quote, unquote_plus

SERVED_OPTIONS = (
    "--allow-websocket-origin",
    "sim.example.edu:443",
    "--allow-websocket-origin",
    "*.lab.example.org",
    "--allow-embed-from",
    "https://courses.example.edu",
)
"""The ``sdpa-sim`` options (with ``--address 127.0.0.1``) the cases' outcomes assume."""

ALLOWED_NAMES = [
    "localhost",
    "127.0.0.1",
    "127.0.0.2",
    "[::1]",
    "sim.example.edu",
    "a.lab.example.org",
    "courses.example.edu",
]
REFUSED_NAMES = [
    "evil.example",
    "localhost.evil.example",
    "sim.example.edu.evil.example",
    "lab.example.org.evil",
    "127.0.0.1.nip.io",
    "10.0.0.5",
    "[fe80::1]",
    "[::ffff:10.0.0.1]",
]
MALFORMED_NAMES = ["", "::1", "[::1", "[nothing]", "local host", "a..b", "exa$mple", "ä.example"]
PORTS = {"": True, ":80": True, ":0": False, ":65536": False, ":x": False}
"""Port suffixes and whether they are valid (the served port is added to them)."""


@dataclass(frozen=True)
class HostCase:
    """A Host header and the status the guard answers it with (0: served)."""

    value: str
    status: int


def _decorated(name: str, port: str, valid: bool, status: int) -> list[HostCase]:
    """``name + port`` as sent (answered with ``status`` if the port is ``valid``, else
    400), and with what a hostile or sloppy client adds to it."""
    well_formed = status if valid else 400
    plain = name + port
    cases = [
        HostCase(plain, well_formed),
        HostCase(plain.upper(), well_formed),
        HostCase(f"  {plain} ", well_formed),
        HostCase(f"user@{plain}", 400),
        HostCase(f"user:pw@{plain}", 400),
        HostCase(f"{plain}/main", 400),
        HostCase(f"{plain}?x", 400),
        HostCase(f"{plain}\\x", 400),
    ]
    if not name.startswith("["):
        cases.append(HostCase(f"{name}.{port}", well_formed))  # fully qualified: the same
        cases.append(HostCase(f"{name}..{port}", 400))
    return cases


def host_cases(served_port: int) -> list[HostCase]:
    """Host headers built from names (allowed, refused, malformed), ports and decorations,
    for a server on ``served_port``."""
    cases = []
    for port, valid in {f":{served_port}": True, **PORTS}.items():
        for names, status in ((ALLOWED_NAMES, 0), (REFUSED_NAMES, 403)):
            cases += [case for name in names for case in _decorated(name, port, valid, status)]
        cases += [HostCase(name + port, 400) for name in MALFORMED_NAMES]
    return cases


RESERVED = [
    "bokeh-absolute-url",
    "bokeh-session-id",
    "bokeh-token",
    "bokeh-autoload-element",
    "bokeh-app-path",
    "bokeh-protocol-version",
    "bokeh-anything",
]
"""What Bokeh and Panel read from a page's URL for themselves (bokeh/server/core.py, views/
autoload_js_handler.py, panel/io/application.py, panel/io/server.py), and the prefix."""

VALUES = ["", "abc", "http://other.example/", "e30.e30.e30", "x" * 300]
PAGE_TARGETS = ["/main", "/", "/main/", "/static/js/bokeh.min.js", "/assets/course-page.html"]


def _spellings(name: str) -> list[str]:
    """Ways a URL can spell parameter ``name`` that Tornado reads as ``name`` (or that only
    differ in case)."""
    return [
        name,
        name.upper(),
        name.replace("b", "%62"),
        "".join(f"%{ord(char):02X}" for char in name),
        name.replace("-", "%2D"),
    ]


def reserved_cases() -> list[tuple[str, int]]:
    """Request targets carrying a Bokeh parameter, and the status they are refused with."""
    cases = []
    for name, value, target in itertools.product(RESERVED, VALUES, PAGE_TARGETS):
        status = 403 if name in ("bokeh-session-id", "bokeh-token") else 400
        for spelled in _spellings(name):
            for query in (
                f"{spelled}={quote(value)}",
                f"d_k=64&{spelled}={quote(value)}&n=8",
                f"{spelled}={quote(value)}&{spelled}=2",
            ):
                upper = spelled == name.upper()
                cases.append((f"{target}?{query}", 400 if upper else status))
    return cases


ODD_PIECES = [b"%ff", b"\xff", b"\xc3\xa4", b"%00", b"%", b"<script>x</script>", b"\"'", b"?", b"#"]
"""Bytes a query may carry that no well-behaved link does (raw, percent-encoded, markup)."""


def odd_queries() -> list[bytes]:
    """Request targets of the page whose query holds :data:`ODD_PIECES` as a name and as a
    value, plus a long value, many parameters and an empty one: each gets the page or a
    plain 4xx."""
    targets = []
    for piece in ODD_PIECES:
        targets += [b"/main?" + piece + b"=1", b"/main?d_k=" + piece]
    targets += [
        b"/main?x=" + b"a" * 60_000,
        b"/main?" + b"&".join(b"p%d=1" % index for index in range(1000)),
        b"/main?",
        b"/main?&&=&",
    ]
    return targets


# Requests whose headers claim to be what their path is not ---------------------------------

WEBSOCKET_HEADERS = {
    "Upgrade": "websocket",
    "Connection": "Upgrade",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}
"""What a browser's websocket handshake sends, but its sub-protocols."""


def upgrade_header_sets(token: str) -> dict[str, dict[str, str]]:
    """Header sets that ask, one way or another, for the connection to become something else
    than a page: a full Bokeh websocket handshake with a valid ``token``, others without a
    token or with odd spellings, and upgrades to other protocols."""
    bokeh = {**WEBSOCKET_HEADERS, "Sec-WebSocket-Protocol": f"bokeh, {token}"}
    return {
        "bokeh websocket": bokeh,
        "bokeh websocket, capitalised": {**bokeh, "Upgrade": "WebSocket"},
        "websocket among others": {**bokeh, "Upgrade": "h2c, websocket"},
        "websocket, no protocol": dict(WEBSOCKET_HEADERS),
        "websocket, other protocol": {**WEBSOCKET_HEADERS, "Sec-WebSocket-Protocol": "chat"},
        "upgrade only": {"Upgrade": "websocket"},
        "h2c": {"Upgrade": "h2c", "Connection": "Upgrade, HTTP2-Settings"},
    }


HEADER_ROUTED_TARGETS = [
    "/main?bokeh-absolute-url=http://evil.example/",
    "/main?bokeh-token=abc",
    "/main?bokeh-session-id=KNOWN",
    "/?bokeh-absolute-url=http%3A%2F%2Fevil.example%2F&d_k=8",
    "/main/?BOKEH-TOKEN=abc",
    "/main?d_k=8&bokeh-anything=1",
]
"""Page targets the guard refuses: their headers must not change that."""


def header_routing_cases(token: str) -> list[tuple[str, dict[str, str], int]]:
    """Page requests carrying websocket (or other upgrade) headers: each (target, headers,
    status) gets what the same target gets without them, as Tornado routes by path. Then
    the app's websocket paths without upgrade headers: a plain 400 (403 if they name a
    session, as a page would)."""
    cases = []
    refused = {target: status for target, status in reserved_cases()}
    targets = [*HEADER_ROUTED_TARGETS, *list(refused)[::97]]
    for label, headers in upgrade_header_sets(token).items():
        for target in targets:
            expected = refused.get(target) or _expected_without_headers(target)
            cases.append((target, {**headers, "X-Case": label}, expected))
    for path in ("/main/ws", "/ws"):
        for query in ("", "?d_k=8", "?bokeh-session-id=x"):
            status = 403 if "session" in query else 400
            cases.append((path + query, {"X-Case": "no upgrade"}, status))
    return cases


def _expected_without_headers(target: str) -> int:
    name = target.partition("?")[2].lower()
    if "bokeh-token" in name or "bokeh-session-id" in name:
        return 403
    return 400


# Control bytes in paths -----------------------------------------------------------------

CONTROL_PIECES = ["%00", "%01", "%0a", "%0D%0A", "%1f", "%7f", "%7F", "%2500"]
"""Control bytes percent-encoded (``%2500`` decodes to the text ``%00``, which is allowed)."""
PATH_PREFIXES = [
    "/assets/",
    "/assets/course-page.html",
    "/static/",
    "/static/js/bokeh.min.js",
    "/static/extensions/panel/",
    "/main",
    "/main/ws",
    "/favicon.ico",
    "/",
]


def control_path_cases() -> list[tuple[str, int]]:
    """Request targets whose path carries a control byte at its end, inside a name or as a
    whole segment, and the status they get: a plain 400, but for ``%2500`` (no control
    byte once decoded: 404 or the file, any status but a 5xx)."""
    cases = []
    for prefix, piece in itertools.product(PATH_PREFIXES, CONTROL_PIECES):
        status = 0 if piece == "%2500" else 400
        base = prefix.rstrip("/")
        cases += [
            (prefix + piece, status),
            (f"{base}/a{piece}b", status),
            (f"{prefix}{piece}/x?d_k=8", status),
        ]
    return cases


# Websocket messages no BokehJS sends ------------------------------------------------------

Frame = str | bytes
"""One websocket frame: text or binary."""

GOOD_HEADER = {"msgid": "m1", "msgtype": "PULL-DOC-REQ"}


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def malformed_messages() -> dict[str, list[Frame]]:
    """Frame sequences a page's websocket may receive from a hostile client, by family: text
    that is not JSON where each of the message's three parts is expected, headers of the
    wrong shape (``{}``, no ``msgid``, a ``msgtype`` Bokeh does not know or of another
    type), buffers announced and not sent or not JSON, binary frames out of turn, deeply
    nested content, and messages of known types with contents of the wrong shape. Each
    must cost one short log line at most, never a traceback."""
    families: dict[str, list[Frame]] = {}
    not_json = ["not json", "", "{", "\x00", "[" * 100_000, "1" * 5000]
    for index, text in enumerate(not_json):
        families[f"header not JSON {index}"] = [text]
        families[f"metadata not JSON {index}"] = [_json(GOOD_HEADER), text]
        families[f"content not JSON {index}"] = [_json(GOOD_HEADER), "{}", text]
    odd_headers: list[object] = [
        {},
        [],
        5,
        None,
        {"msgid": "m1"},
        {"msgtype": "PULL-DOC-REQ"},
        *({"msgid": "m1", "msgtype": kind} for kind in ("NOPE", "EXPIRED", ["PATCH-DOC"], 5)),
        *({"msgid": "m1", "msgtype": kind} for kind in ("ACK", "OK", "ERROR", "PULL-DOC-REPLY")),
        {"msgid": ["m"], "msgtype": "PULL-DOC-REQ"},
        {**GOOD_HEADER, "num_buffers": "x"},
        {**GOOD_HEADER, "num_buffers": -1},
    ]
    for index, header in enumerate(odd_headers):
        families[f"odd header {index}"] = [_json(header), "{}", "{}"]
    buffered = {**GOOD_HEADER, "msgtype": "PATCH-DOC", "num_buffers": 1}
    families["buffer header not JSON"] = [_json(buffered), "{}", "{}", "not json", b"\x00"]
    families["buffer header wrong shape"] = [_json(buffered), "{}", "{}", "[]", b"\x00"]
    families["binary where text belongs"] = [b"\x00\x01"]
    families["binary metadata"] = [_json(GOOD_HEADER), b"{}"]
    families["text where a buffer belongs"] = [_json(buffered), "{}", "{}", '{"id": "1"}', "x"]
    patch = {**GOOD_HEADER, "msgtype": "PATCH-DOC"}
    for index, content in enumerate(
        [{}, [], {"events": 5}, {"events": [5]}, {"events": [{"kind": "NOPE"}]}, "x"]
    ):
        families[f"patch of the wrong shape {index}"] = [_json(patch), "{}", _json(content)]
    families["server-info with junk"] = [
        _json({**GOOD_HEADER, "msgtype": "SERVER-INFO-REQ"}),
        _json([1]),
        _json({"a": "[" * 1000}),
    ]
    return families


# Page addresses too long for a session to keep --------------------------------------------


@dataclass(frozen=True)
class LongQuery:
    """A page query too long to keep, and what the guard's redirect keeps and names."""

    query: str
    kept: tuple[str, ...]
    omitted: tuple[str, ...]
    """The decoded names of the parameters left out."""


def long_query_cases() -> list[LongQuery]:
    """Long values, long names and many medium parameters, alone or among the app's and a
    course page's own (limits: app.simulation.address)."""
    from app.simulation.address import MAX_KEPT_PIECE

    own = ("d_k=8", "id=007", "ref=https://course.example/page?id=3")
    cases = []
    for length in (MAX_KEPT_PIECE + 1, 25_000, 60_000):
        for alphabet in ("a", "Zy-_9", "%41"):
            value = (alphabet * length)[:length]
            cases.append(LongQuery(f"x={value}&d_k=8", ("d_k=8",), ("x",)))
            name = unquote_plus(value)[:64]
            cases.append(LongQuery(f"{value}=1&{'&'.join(own)}", own, (name,)))
            cases.append(LongQuery(f"{own[0]}&x={value}&{own[1]}&y={value}", own[:2], ("x", "y")))
    medium = [f"p{i}={'m' * 3000}" for i in range(8)]
    # 8 × 3003 characters: the longest go first until 16 KiB fit, here the first three.
    cases.append(
        LongQuery(
            "&".join([*medium, "d_k=8"]), (*medium[3:], "d_k=8"), tuple(f"p{i}" for i in range(3))
        )
    )
    return cases


# Heads Tornado refuses before any handler sees them ---------------------------------------

HEAD_PATHS = ["/main", "/favicon.ico", "/main/ws", "/assets/course-page.html"]


def unreadable_heads(host: str) -> dict[str, bytes]:
    """Whole request heads Tornado cannot read, by family and path: request lines that are
    not ``METHOD target HTTP/1.x``, a folded header line (the Host's or another's), a
    header line without a colon, a query of over 1,000 parameters. Each gets the guard's
    plain 400 with its headers (Tornado's own 400 has neither body nor headers)."""
    heads: dict[str, bytes] = {}
    end = b"Connection: close\r\n\r\n"
    hosted = f"Host: {host}\r\n".encode()
    for path in (item.encode() for item in HEAD_PATHS):
        lines = {
            "no version": b"GET " + path + b"\r\n",
            "two spaces": b"GET  " + path + b" HTTP/1.1\r\n",
            "four parts": b"GET " + path + b" x HTTP/1.1\r\n",
            "another protocol": b"GET " + path + b" FTP/1.1\r\n",
            "HTTP/9.9": b"GET " + path + b" HTTP/9.9\r\n",
        }
        for label, line in lines.items():
            heads[f"{path.decode()} request line {label}"] = line + hosted + end
        good = b"GET " + path + b" HTTP/1.1\r\n"
        heads[f"{path.decode()} folded Host"] = (
            good + f"Host: {host[:-1]}\r\n {host[-1]}\r\n".encode() + end
        )
        heads[f"{path.decode()} folded header"] = good + hosted + b"X-A: 1\r\n 2\r\n" + end
        heads[f"{path.decode()} no colon"] = good + hosted + b"X-A 1\r\n" + end
        many = b"&".join(b"p%d=1" % index for index in range(1001))
        heads[f"{path.decode()} 1,001 parameters"] = (
            b"GET " + path + b"?" + many + b" HTTP/1.1\r\n" + hosted + end
        )
    heads["garbage"] = b"GARBAGE\r\n\r\n"
    heads["binary"] = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"
    return heads


def oversized_heads(host: str) -> dict[str, tuple[bytes, int]]:
    """Request heads longer than 64 KiB, by family (a long header value, many headers, a
    long cookie, a long target) and size, with the status they get: the guard's plain 431
    up to 256 KiB (what the server reads of a head), none beyond (0: Tornado closes the
    connection while reading, before anything can answer; never a 5xx)."""
    from app.server.guarded_http import READ_HEAD_BYTES

    heads: dict[str, tuple[bytes, int]] = {}
    hosted = f"Host: {host}\r\n".encode()
    for size in (70_000, 200_000, READ_HEAD_BYTES + 50_000):
        expected = 431 if size < READ_HEAD_BYTES else 0
        for path in ("/main", "/favicon.ico"):
            good = b"GET " + path.encode() + b" HTTP/1.1\r\n" + hosted
            variants = {
                "header": b"X-Long: " + b"a" * size + b"\r\n",
                "headers": b"".join(b"X-%d: %s\r\n" % (i, b"b" * 90) for i in range(size // 100)),
                "cookie": b"Cookie: c=" + b"c" * size + b"\r\n",
            }
            for label, extra in variants.items():
                heads[f"{path} {label} {size}"] = (
                    good + extra + b"Connection: close\r\n\r\n",
                    expected,
                )
            target = path.encode() + b"?x=" + b"x" * size
            raw = b"GET " + target + b" HTTP/1.1\r\n" + hosted + b"Connection: close\r\n\r\n"
            heads[f"{path} target {size}"] = (raw, expected)
    return heads


# Websocket messages too large for any page to send -----------------------------------------


def oversized_messages() -> dict[str, list[Frame]]:
    """Messages over the websocket's size limit (``app.server.cli.WEBSOCKET_MAX_MESSAGE_BYTES``),
    by family: a PATCH-DOC whose content sets the page's ``Location.href`` (just over the
    limit, and 19 MB as the issue's client sent), a text frame, a binary frame where a
    buffer belongs, and metadata. Tornado closes the connection before reading one whole."""
    from app.server.cli import WEBSOCKET_MAX_MESSAGE_BYTES as LIMIT

    patch = _json({**GOOD_HEADER, "msgtype": "PATCH-DOC"})
    buffered = _json({**GOOD_HEADER, "msgtype": "PATCH-DOC", "num_buffers": 1})

    def href(size: int) -> str:
        change = {"kind": "ModelChanged", "model": {"id": "p1"}, "attr": "href"}
        return _json({"events": [{**change, "new": "http://localhost/main?x=" + "a" * size}]})

    return {
        "href just over": [patch, "{}", href(LIMIT)],
        "href of 19 MB": [patch, "{}", href(19_000_000)],
        "text header": ["x" * (LIMIT + 1)],
        "metadata": [patch, "{" + " " * LIMIT + "}"],
        "binary buffer": [buffered, "{}", href(10), '{"id": "1"}', b"\x00" * (LIMIT + 1)],
    }


# Plain `panel serve app/main.py` ----------------------------------------------------------

PLAIN_PAGE_PATHS = ("/main", "/main/")
"""The paths plain ``panel serve app/main.py`` builds a page for (``/`` redirects there)."""


def plain_serve_cases() -> list[tuple[str, int]]:
    """The reserved-parameter targets of :func:`reserved_cases` as plain ``panel serve``
    answers them once it has served a page: a page path is refused by the app's authorize
    callback (Panel's 403), ``/`` is Bokeh's redirect to the page (302, without the query),
    and a file is served as it is (0: any status but a 5xx; its parameters are never read)."""
    cases = []
    for target, _ in reserved_cases():
        path = target.partition("?")[0]
        status = 403 if path in PLAIN_PAGE_PATHS else 302 if path == "/" else 0
        cases.append((target, status))
    return cases


# Every mounted route, and Panel's /components/ route that imports what its path names -----

MODULE_NAMES = [
    "venv.__main__",  # runs venv's command line on import: exits the process (code 2)
    "idlelib.idle",  # starts IDLE on import
    "this",
    "antigravity",
    "os",
    "subprocess",
    "__main__",
    "json.tool",
    "http.server",
    "panel.io.server",
    "panel",
    "app.server.cli",
    "app.served.session",
    "app.served.components.figures",
    "app.page.views.alert_box",
    "..",
    "",
    "a" * 300,
]
"""Modules a ``/components/`` path can name: some act on import, some are the app's own."""
COMPONENT_RESTS = [
    "x/y/z",
    "DrawnFigures/_bundle_path/x.js",
    "DrawnFigures/__javascript__/x.js",
    "DrawnFigures/_resources/js/x",
    "ComponentResourceHandler/_stylesheets/x.css",
    "x",
    "x/y",
    "../../../../etc/passwd/x",
]


def _percent_encoded(text: str, every: bool) -> str:
    """``text`` with every character percent-encoded, or only its dots and slashes."""
    if every:
        return "".join(f"%{byte:02X}" for byte in text.encode("utf-8"))
    return text.replace(".", "%2e").replace("/", "%2F")


def component_paths() -> list[str]:
    """``/components/`` paths naming modules as sent and encoded, each with the rest of a
    path Panel reads (class, attribute, file): all but the app's own bundle files get a
    plain 404 and import nothing."""
    paths = []
    for module, rest in itertools.product(MODULE_NAMES, COMPONENT_RESTS):
        for spelled in (module, _percent_encoded(module, True), _percent_encoded(module, False)):
            paths.append(f"/components/{spelled}/{rest}")
    paths.append("/components/" + _percent_encoded("venv.__main__/a/b/c", True))
    paths.append("/components/%ff%fe/a/b/c")
    paths.append("/components/")
    return paths


ROUTE_BASES = {
    "bokeh.server.views.ico_handler.IcoHandler": ["/favicon.ico"],
    "panel.io.server.WSHandler": ["/main/ws", "/ws"],
    "bokeh.server.views.metadata_handler.MetadataHandler": ["/main/metadata", "/metadata"],
    "panel.io.server.AutoloadJsHandler": ["/main/autoload.js", "/autoload.js"],
    "panel.io.server.DocHandler": ["/main"],
    "bokeh.server.views.static_handler.StaticHandler": ["/main/static/", "/static/"],
    "panel.io.server.AuthenticatedStaticFileHandler": ["/assets/"],
    "panel.io.server.ComponentResourceHandler": ["/components/"],
    "app.served.channel.ChannelHandler": ["/channel", "/main/channel"],
    "app.served.page_data.PageDataHandler": [
        "/page-data/" + "0" * 32 + ".json",
        "/main/page-data/" + "f" * 32 + ".json",
    ],
    "panel.io.server.RootHandler": ["/"],
    "bokeh.server.views.multi_root_static_handler.MultiRootStaticHandler": [
        "/static/extensions/",
        "/static/extensions/panel/",
    ],
}
"""Paths that reach each handler the server mounts (app/server/mounted_routes.py's
KNOWN_HANDLERS, which a test keeps the same)."""
HOSTILE_SUFFIXES = [
    "",
    "x",
    "..%2f..%2f..%2fetc%2fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "venv.__main__/a/b/c",
    "%76env.__main__/a/b/c",
    "%ff%fe",
    "%C3%A4",
    "a" * 3000,
    "//",
    ";x",
    "%2F",
    ".",
    "..",
    "x/" * 60,
    "js/bokeh.min.js?v=../../x",
    "?bokeh-absolute-url=http://other.example/",
]


def route_probes() -> list[str]:
    """A hostile path (and query) on every mounted route: each answered below 500."""
    probes = []
    for bases in ROUTE_BASES.values():
        for base, suffix in itertools.product(bases, HOSTILE_SUFFIXES):
            probes.append(base + suffix)
            if not base.endswith("/") and not suffix.startswith("?"):
                probes.append(f"{base}/{suffix}")
    return list(dict.fromkeys(probes))


# Heads the front counts as pages and Tornado then refuses -----------------------------------


def malformed_page_heads(host: str) -> dict[str, tuple[bytes, int]]:
    """Heads of a page request that Tornado refuses before any handler (its version, a
    header name, a header value), with the status they get (400), and one it serves that
    the front cannot read as a page (a leading empty line: 200). A burst of them must not
    hold the front's page queue."""
    good = f"Host: {host}\r\nConnection: close\r\n".encode()
    heads = {}
    for version in ("HTTP/2.0", "HTTP/1.10", "HTTP/0.9", "HTTP/1.1x", "http/1.1"):
        heads[f"version {version}"] = (f"GET /main {version}\r\n".encode() + good + b"\r\n", 400)
    for label, line in {
        "a space in a header name": b"X A: 1",
        "brackets in a header name": b"X[A]: 1",
        "a non-ASCII header name": "Xä: 1".encode(),
        "a NUL in a value": b"X-A: 1\x002",
        "a CR in a value": b"X-A: 1\r2",
        "an empty header name": b": 1",
    }.items():
        heads[label] = (b"GET /main HTTP/1.1\r\n" + good + line + b"\r\n\r\n", 400)
    heads["a leading empty line"] = (b"\r\nGET /main HTTP/1.1\r\n" + good + b"\r\n", 200)
    return heads


def head_refusals(host: str, port: int) -> dict[str, tuple[bytes, int]]:
    """HEAD requests for every kind of refusal (a Host, ``bokeh-*`` parameters, a session
    header, control bytes, the websocket path, a page too long to keep, a head over 64 KiB,
    a component that is not the app's), with their status: each gets its head alone."""
    from app.simulation.address import MAX_KEPT_QUERY

    hosted = f"Host: {host}\r\n"
    long_query = "&".join(f"p{i}=" + "v" * 90 for i in range(MAX_KEPT_QUERY // 90 + 2))
    cases = {
        "an unknown host": ("/main", "Host: evil.example\r\n", 403),
        "no host": ("/main", "", 400),
        "bokeh-absolute-url": ("/main?bokeh-absolute-url=http://x.example/", hosted, 400),
        "bokeh-session-id": ("/main?bokeh-session-id=abc", hosted, 403),
        "a session header": ("/main", hosted + "Bokeh-Session-Id: abc\r\n", 403),
        "a NUL in the path": ("/static/%00x", hosted, 400),
        "the websocket path": ("/main/ws", hosted, 400),
        "a page too long to keep": (f"/main?{long_query}", hosted, 303),
        "a head over 64 KiB": ("/main", hosted + "X-Long: " + "a" * 70_000 + "\r\n", 431),
        "a component": ("/components/venv.__main__/a/b/c", hosted, 404),
    }
    return {
        label: (f"HEAD {target} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n".encode(), status)
        for label, (target, headers, status) in cases.items()
    }
