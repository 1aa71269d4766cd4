"""The request guard's decisions (app/server/request_guard.py) and the origins ``sdpa-sim`` derives
from its options (app/server/origins.py), without a server.

Host headers and reserved parameters are generated from their parts (names, ports,
decorations; parameter names, spellings, routes), each case with the outcome the rule gives.
"""

from __future__ import annotations

import argparse
import itertools

import pytest
from bokeh.util.token import generate_jwt_token, generate_session_id
from guard_cases import (
    SERVED_OPTIONS,
    control_path_cases,
    header_routing_cases,
    host_cases,
    long_query_cases,
    reserved_cases,
    upgrade_header_sets,
)
from tornado.httputil import HTTPHeaders, HTTPInputError, RequestStartLine, parse_qs_bytes

from app.server import cli
from app.server.origins import embed_origin, websocket_origins
from app.server.request_guard import RequestGuard, parse_host
from app.simulation.address import MAX_KEPT_QUERY, OMITTED, read_omitted

PORT = 5206

SERVED = cli.request_guard(
    cli.build_parser().parse_args(["--address", "127.0.0.1", "--port", str(PORT), *SERVED_OPTIONS])
)
EVERYWHERE = RequestGuard.for_server("0.0.0.0")


def _check(guard: RequestGuard, target: str = "/main", **headers: str) -> int:
    """The status a server with ``guard`` answers with, 0 if it lets the request through.

    The headers are read as Tornado reads them off the wire: a head Tornado cannot read is
    answered with its own 400 before the guard sees it.
    """
    lines = [f"{name.replace('_', '-')}: {value}\r\n" for name, value in headers.items()]
    if "Host" not in headers:
        lines.insert(0, f"Host: 127.0.0.1:{PORT}\r\n")
    try:
        head = HTTPHeaders.parse("".join(lines))
    except HTTPInputError:
        return 400
    refusal = guard.check(RequestStartLine("GET", target, "HTTP/1.1"), head)
    return refusal.status if refusal is not None else 0


# Host headers ---------------------------------------------------------------------------

HOST_CASES = host_cases(PORT)


def test_the_generated_host_cases_cover_every_outcome() -> None:
    statuses = {case.status for case in HOST_CASES}
    assert statuses == {0, 400, 403} and len(HOST_CASES) > 300


def test_a_host_header_is_served_only_if_this_server_answers_to_it() -> None:
    wrong = [
        f"{case.value!r}: {status}, expected {case.status}"
        for case in HOST_CASES
        if (status := _check(SERVED, Host=case.value)) != case.status
    ]
    assert not wrong, "\n".join(wrong)


def test_a_missing_or_repeated_host_is_a_bad_request() -> None:
    head = HTTPHeaders()
    assert SERVED.check(RequestStartLine("GET", "/main", "HTTP/1.1"), head).status == 400
    head.add("Host", "localhost")
    head.add("Host", "evil.example")
    assert SERVED.check(RequestStartLine("GET", "/main", "HTTP/1.1"), head).status == 400


def test_on_every_interface_any_ip_literal_is_served_but_names_are_checked() -> None:
    for host in ("10.0.0.5:5006", "192.168.1.20", "[2001:db8::1]:5006", "localhost:1"):
        assert _check(EVERYWHERE, Host=host) == 0, host
    assert _check(EVERYWHERE, Host="evil.example:5006") == 403


def test_a_named_address_is_served_by_name() -> None:
    guard = RequestGuard.for_server("sim.internal")
    assert _check(guard, Host="sim.internal:5006") == 0
    assert _check(guard, Host="other.internal:5006") == 403


def test_parse_host_reads_names_ipv6_literals_and_ports() -> None:
    assert parse_host("LocalHost.:5006") == parse_host("localhost:5006")
    host = parse_host("[0:0::1]:5006")
    assert host is not None and (host.name, host.port) == ("::1", 5006)
    assert parse_host("example.edu") is not None and parse_host("example.edu").port is None


# Parameters only Bokeh uses -------------------------------------------------------------

RESERVED_CASES = reserved_cases()


def test_bokeh_parameters_in_any_spelling_are_refused() -> None:
    wrong = [
        f"{target[:120]}: {status}, expected {expected}"
        for target, expected in RESERVED_CASES
        if (status := _check(SERVED, target)) != expected
    ]
    assert not wrong and len(RESERVED_CASES) > 1000, "\n".join(wrong)


@pytest.mark.parametrize(
    "query",
    ["", "d_k=1024&scaled=false", "preset=collapse", "embed=true", "ref=bokeh-token", "bokeh=1"],
)
def test_the_apps_own_parameters_pass(query: str) -> None:
    assert _check(SERVED, f"/main?{query}") == 0


def test_a_bokeh_session_id_header_is_refused() -> None:
    assert _check(SERVED, Bokeh_Session_Id="KNOWN") == 403


KEY = b"this-process-signs-its-session-ids-with-this-key"


def _websocket(protocols: str | None, host: str = f"127.0.0.1:{PORT}", key: bytes = KEY) -> int:
    lines = f"Host: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    if protocols is not None:
        lines += f"Sec-WebSocket-Protocol: {protocols}\r\n"
    start = RequestStartLine("GET", "/main/ws?bokeh-x=1", "HTTP/1.1")
    refusal = SERVED.check(start, HTTPHeaders.parse(lines), key, now=1_000_000.0)
    return refusal.status if refusal is not None else 0


def test_a_websocket_must_carry_a_live_token_this_process_signed() -> None:
    """Else Bokeh accepts the handshake and then drops it with a traceback in the log."""
    live = f"bokeh, {_token_at(expiry=1_000_300)}"
    assert _websocket(live) == 0, "its query is not read: a websocket's session is its token"
    assert _websocket(live, host="evil.example") == 403
    for protocols in (None, "bokeh", "chat, x", "x, bokeh", "bokeh, a, b"):
        assert _websocket(protocols) == 400, protocols
    unsigned = generate_jwt_token(generate_session_id(signed=False), signed=False)
    for token in (unsigned, _token_at(key=b"another-process-key-another-key!"), "garbage", "e30"):
        assert _websocket(f"bokeh, {token}") == 403, token
    assert _websocket(f"bokeh, {_token_at(expiry=999_999)}") == 403, "expired"


def _token_at(key: bytes = KEY, expiry: int = 1_000_300) -> str:
    """A token signed with ``key`` whose session expires at ``expiry`` (epoch seconds)."""
    session_id = generate_session_id(secret_key=key, signed=True)
    payload = {"session_expiry": expiry}
    return generate_jwt_token(session_id, secret_key=key, signed=True, extra_payload=payload)


AUTOLOAD = "/main/autoload.js?bokeh-autoload-element=p1002&bokeh-app-path=/main"


@pytest.mark.parametrize(
    ("target", "status"),
    [
        (AUTOLOAD, 0),
        (AUTOLOAD + "&bokeh-absolute-url=http://127.0.0.1:5206/main", 0),
        ("/autoload.js?bokeh-autoload-element=x", 0),
        ("/main/autoload.js", 0),  # Panel answers it: 400, no element named
        (AUTOLOAD + "&bokeh-absolute-url=javascript:alert(1)", 400),
        (AUTOLOAD + "&bokeh-absolute-url=http://u@evil/", 400),
        ("/main/autoload.js?bokeh-autoload-element=%22%3E%3Cscript%3E", 400),
        ("/main/autoload.js?bokeh-autoload-element=a&bokeh-app-path=/elsewhere", 400),
        ("/main/autoload.js?bokeh-autoload-element=a&bokeh-autoload-element=b", 400),
        ("/main/autoload.js?bokeh-autoload-element=a&bokeh-token=abc", 403),
        ("/main/autoload.js?bokeh-autoload-element=a&bokeh-session-id=x", 403),
        ("/main/autoload.js?bokeh-autoload-element=a&bokeh-other=1", 400),
    ],
)
def test_autoload_keeps_the_parameters_server_document_sends(target: str, status: int) -> None:
    assert _check(SERVED, target) == status


def test_a_target_that_is_not_a_path_is_refused() -> None:
    assert _check(SERVED, "http://evil.example/main") == 400


# Framing and origins --------------------------------------------------------------------


def test_pages_may_be_framed_by_their_own_origin_localhost_and_the_named_sites() -> None:
    policy = SERVED.response_headers()["Content-Security-Policy"]
    assert policy.split() == [
        "frame-ancestors",
        "'self'",
        "http://localhost:*",
        "https://localhost:*",
        "https://courses.example.edu",
    ]
    assert "courses" not in RequestGuard().response_headers()["Content-Security-Policy"]


def test_a_guard_travels_to_a_worker_as_json() -> None:
    assert RequestGuard.from_json(SERVED.to_json()) == SERVED


@pytest.mark.parametrize(
    ("text", "origin"),
    [
        ("https://Courses.example.edu/", "https://courses.example.edu"),
        ("http://localhost:8000", "http://localhost:8000"),
        ("https://*.example.edu", "https://*.example.edu"),
        ("http://127.0.0.1:*", "http://127.0.0.1:*"),
    ],
)
def test_embed_origins_are_read_as_csp_names_them(text: str, origin: str) -> None:
    assert embed_origin(text) == origin


@pytest.mark.parametrize(
    "text",
    [
        "courses.example.edu",
        "ftp://x.edu",
        "https://u@x.edu",
        "https://x.edu/page",
        "https://x.edu?a",
        "https://x y",
        "https://x;y",
        "https://x.edu:99999",
    ],
)
def test_anything_else_is_not_an_embed_origin(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        embed_origin(text)


def test_port_443_entries_also_match_what_browsers_send() -> None:
    assert websocket_origins(["sim.example.edu:443", "b:8080"], [], 5006) == [
        "sim.example.edu:443",
        "sim.example.edu",
        "b:8080",
    ]
    # Embedding sites' websockets are allowed too, and localhost stays allowed.
    assert websocket_origins([], ["https://c.edu:443", "http://localhost:8000"], 5006) == [
        "localhost:5006",
        "c.edu",
        "localhost:8000",
    ]
    assert websocket_origins([], [], 5006) == [], "Bokeh's own default then"


def test_sdpa_sim_takes_embed_origins_and_passes_their_websocket_origins_on() -> None:
    options = cli.build_parser().parse_args(
        ["--port", "5206", "--allow-embed-from", "https://courses.example.edu"]
    )
    arguments = cli.serve_arguments(options)
    origins = [v for k, v in itertools.pairwise(arguments) if k == "--allow-websocket-origin"]
    assert origins == ["localhost:5206", "courses.example.edu"]
    assert cli.request_guard(options).frame_ancestors == ("https://courses.example.edu",)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--allow-embed-from", "not an origin"])


# What a request is, not what its headers claim -------------------------------------------


def _check_with(target: str, headers: dict[str, str]) -> int:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head = HTTPHeaders.parse(f"Host: 127.0.0.1:{PORT}\r\n{lines}")
    refusal = SERVED.check(RequestStartLine("GET", target, "HTTP/1.1"), head, KEY, 1_000_000.0)
    return refusal.status if refusal is not None else 0


def test_upgrade_headers_do_not_turn_the_page_check_off() -> None:
    cases = header_routing_cases(_token_at())
    wrong = [
        f"{target[:100]} {headers['X-Case']}: {status}, expected {expected}"
        for target, headers, expected in cases
        if (status := _check_with(target, headers)) != expected
    ]
    assert not wrong and len(cases) > 80, "\n".join(wrong)


def test_a_page_with_websocket_headers_and_a_clean_query_passes() -> None:
    headers = upgrade_header_sets(_token_at())["bokeh websocket"]
    assert _check_with("/main?d_k=8", headers) == 0


def test_control_bytes_in_a_path_are_refused() -> None:
    cases = control_path_cases()
    wrong = [
        f"{target}: {status}, expected {expected}"
        for target, expected in cases
        if (status := _check(SERVED, target)) != expected
    ]
    assert not wrong and len(cases) > 200, "\n".join(wrong)
    assert _check(SERVED, "/assets/a\x00b") == 400, "a raw NUL too"


# Addresses too long for a session to keep -------------------------------------------------


@pytest.mark.parametrize("path", ["/main", "/", "/main/"])
def test_a_page_too_long_to_keep_is_sent_on_without_what_does_not_fit(path: str) -> None:
    for case in long_query_cases():
        refusal = SERVED.check(
            RequestStartLine("GET", f"{path}?{case.query}", "HTTP/1.1"),
            HTTPHeaders({"Host": f"127.0.0.1:{PORT}"}),
        )
        assert refusal is not None and refusal.status == 303, case.query[:80]
        location = dict(refusal.headers)["Location"]
        target, _, query = location.partition("?")
        assert target == path and len(location) <= MAX_KEPT_QUERY + 1000
        pieces = query.split("&")
        assert tuple(piece for piece in pieces if not piece.startswith(OMITTED)) == case.kept
        marks = parse_qs_bytes(query).get(OMITTED, [])
        names = [read.name for read in read_omitted([m.decode() for m in marks])]
        assert tuple(names) == case.omitted, case.query[:80]
        assert _check(SERVED, location) == 0, "the page it is sent to is served"


def test_only_pages_are_sent_on() -> None:
    long = "x=" + "a" * 30_000
    for target in ("/static/js/bokeh.min.js", "/assets/course-page.html", "/favicon.ico"):
        assert _check(SERVED, f"{target}?{long}") == 0
    assert _check(SERVED, f"/main?{long}&bokeh-token=x") == 403, "refusals come first"


def test_a_redirect_keeps_what_a_header_can_carry() -> None:
    start = RequestStartLine("GET", "/main?y=\xff\x01&x=" + "a" * 5000, "HTTP/1.1")
    refusal = SERVED.check(start, HTTPHeaders({"Host": "localhost"}))
    assert refusal is not None
    assert dict(refusal.headers)["Location"] == f"/main?y=%FF%01&{OMITTED}=5002.x"
