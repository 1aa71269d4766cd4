"""Hostile hosts, links and websockets against a served ``sdpa-sim``, in one process and with
``--num-procs 2``: every request gets a page or a plain 4xx, never a 500, and the server
log stays free of tracebacks.

The cases are generated (tests/guard_cases.py); each mode runs them against its own
``sdpa-sim`` subprocess on a port in 5200–5299. Requests the guard lets through are sent
for a cheap file (every route passes the same guard), and a sample of them for the page
itself, which builds a session.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bokeh.util.token import generate_jwt_token, generate_session_id
from guard_cases import (
    ROUTE_BASES,
    SERVED_OPTIONS,
    HostCase,
    component_paths,
    control_path_cases,
    head_refusals,
    header_routing_cases,
    host_cases,
    long_query_cases,
    malformed_messages,
    malformed_page_heads,
    odd_queries,
    oversized_heads,
    oversized_messages,
    reserved_cases,
    route_probes,
    unreadable_heads,
    upgrade_header_sets,
)
from procs_support import (
    TOKEN,
    FrontServer,
    http_status,
    open_session,
    page_token,
    raw_get,
    run_async,
    running_front,
    tracebacks,
    websocket_status,
)
from raw_http import exchange, send_frames

from app.server.mounted_routes import KNOWN_HANDLERS
from app.simulation.address import OMITTED

CHEAP_TARGET = "/favicon.ico"
"""A route Bokeh answers without building a session."""


@pytest.fixture(scope="module", params=[1, 2], ids=["one-process", "num-procs-2"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontServer]:
    """``sdpa-sim`` with the options the generated cases assume, in each mode."""
    log_path = tmp_path_factory.mktemp("guarded") / "sdpa-sim.log"
    try:
        with running_front(log_path, request.param, SERVED_OPTIONS) as server:
            yield server
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    assert not tracebacks(log_path.read_text()), tracebacks(log_path.read_text())


def _expected(case: HostCase) -> int:
    return case.status or 200


def test_every_host_header_gets_the_page_or_a_plain_4xx(served: FrontServer) -> None:
    cases = host_cases(served.port)
    wrong = []
    for case in cases:
        status, headers, body = raw_get(served.port, CHEAP_TARGET, {"Host": case.value})
        if status != _expected(case):
            wrong.append(f"{case.value!r}: {status}, expected {_expected(case)}")
        elif status >= 400:
            assert headers["content-type"].startswith("text/plain"), case
            assert b"Traceback" not in body and b"<" not in body, case
    assert not wrong, "\n".join(wrong)
    assert not tracebacks(served.log_text()), tracebacks(served.log_text())


def test_a_page_is_built_for_each_form_of_an_allowed_host(served: FrontServer) -> None:
    port = served.port
    for host in ("localhost", f"localhost:{port}", f"LOCALHOST.:{port}", f"127.0.0.2:{port}"):
        status, _headers, body = raw_get(port, "/main?d_k=16", {"Host": host})
        assert status == 200 and b'"token"' in body, host
    mark = served.log_size()
    status, _, _ = raw_get(port, "/main", {"Host": f"[::1]:{port}"})
    assert status in (200, 400), "an IPv6 literal: the page, or a plain 400"
    assert not tracebacks(served.log_text(mark)), tracebacks(served.log_text(mark))


def test_a_missing_host_is_a_plain_400(served: FrontServer) -> None:
    status, headers, _ = raw_get(served.port, "/main")
    assert status == 400 and headers["content-type"].startswith("text/plain")


def test_a_rebinding_page_is_refused_and_so_is_its_websocket(served: FrontServer) -> None:
    """DNS rebinding: evil.example resolves to this server, so its page's requests carry
    ``Host: evil.example:PORT`` and a matching Origin, which Tornado takes as same-origin."""
    evil = f"evil.example:{served.port}"
    status, _, _ = raw_get(served.port, "/main", {"Host": evil})
    assert status == 403
    token = page_token(served.url)
    headers = {"Host": evil, "Origin": f"http://{evil}"}
    assert websocket_status(served.base_url, token, headers=headers) == 403
    assert websocket_status(served.base_url, token) == 101, "the real page's websocket works"


RESERVED_SAMPLE = reserved_cases()[::7]


def test_bokeh_parameters_are_refused_on_every_route(served: FrontServer) -> None:
    host = {"Host": f"127.0.0.1:{served.port}"}
    wrong = []
    for target, expected in RESERVED_SAMPLE:
        status, headers, _body = raw_get(served.port, target, host)
        # The front refuses a request naming a session itself, with the same status.
        if status != expected or not headers["content-type"].startswith("text/plain"):
            wrong.append(f"{target[:120]}: {status}, expected {expected}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "target",
    [
        "/main?bokeh-token=abc",
        "/main/autoload.js?bokeh-token=abc",
        "/main/autoload.js?bokeh-autoload-element=x&bokeh-token=abc",
        "/?bokeh-session-id=KNOWN",
        "/main?bokeh-absolute-url=http://other.example/",
        "/main/autoload.js",
    ],
)
def test_bokeh_internals_never_answer_500(served: FrontServer, target: str) -> None:
    mark = served.log_size()
    status, _, _ = raw_get(served.port, target, {"Host": f"127.0.0.1:{served.port}"})
    assert 400 <= status < 500, (target, status)
    assert not tracebacks(served.log_text(mark)), tracebacks(served.log_text(mark))


def test_odd_bytes_in_a_query_get_the_page_or_a_plain_4xx(served: FrontServer) -> None:
    mark = served.log_size()
    for target in odd_queries():
        status, headers, _ = raw_get(served.port, target, {"Host": f"127.0.0.1:{served.port}"})
        # Tornado answers a request line it cannot read with a bare 400 of its own; a query
        # too long to keep is sent on to the page without what does not fit.
        plain = headers.get("content-type", "text/plain").startswith("text/plain")
        moved = status == 303 and headers["location"].startswith("/main?")
        assert status == 200 or moved or (400 <= status < 500 and plain), (target[:80], status)
    assert not tracebacks(served.log_text(mark)), tracebacks(served.log_text(mark))


def test_autoload_js_as_server_document_asks_for_it(served: FrontServer) -> None:
    target = (
        "/main/autoload.js?bokeh-autoload-element=p1002&bokeh-app-path=/main"
        f"&bokeh-absolute-url=http://127.0.0.1:{served.port}/main"
    )
    status, headers, _body = raw_get(served.port, target, {"Host": f"127.0.0.1:{served.port}"})
    assert status == 200 and headers["content-type"] == "application/javascript"


def test_session_ids_are_signed_so_no_link_or_client_can_choose_one(
    served: FrontServer,
) -> None:
    unsigned = generate_jwt_token(generate_session_id(signed=False), signed=False)
    assert websocket_status(served.base_url, unsigned) == 403
    assert websocket_status(served.base_url, page_token(served.url)) == 101


def test_responses_say_who_may_frame_them_and_sessions_still_open(served: FrontServer) -> None:
    for target in ("/main", "/assets/course-page.html", "/main?bokeh-token=x"):
        _, headers, _ = raw_get(served.port, target, {"Host": f"localhost:{served.port}"})
        policy = headers["content-security-policy"].split()
        assert policy[:2] == ["frame-ancestors", "'self'"], target
        assert "https://courses.example.edu" in policy and "http://localhost:*" in policy
    session = open_session(served.base_url, "?d_k=16")
    assert session["status"] == 101 and session["messages"][:2] == ["ACK", "PULL-DOC-REPLY"]


def test_websocket_headers_on_a_page_do_not_switch_its_check_off(served: FrontServer) -> None:
    """Tornado routes ``/main`` to the page whatever ``Upgrade`` says: the guard checks it
    as the page it is (with a live token in the sub-protocols, as a real page's)."""
    mark = served.log_size()
    host = {"Host": f"127.0.0.1:{served.port}", "Origin": served.base_url}
    wrong = []
    for target, headers, expected in header_routing_cases(page_token(served.url)):
        status, answer, body = exchange(served.port, target, {**host, **headers})
        plain = answer.get("content-type", "").startswith("text/plain")
        if status != expected or not plain or b"evil.example" in body:
            wrong.append(f"{target[:100]} {headers['X-Case']}: {status}, expected {expected}")
    assert not wrong, "\n".join(wrong)
    bokeh = upgrade_header_sets(page_token(served.url))["bokeh websocket"]
    status, _, body = exchange(served.port, "/main?d_k=8", {**host, **bokeh})
    assert status == 200 and b'"token"' in body, "a clean page is still the page"
    assert not tracebacks(served.log_text(mark)), tracebacks(served.log_text(mark))


def test_control_bytes_in_a_path_get_a_plain_400(served: FrontServer) -> None:
    mark = served.log_size()
    host = {"Host": f"127.0.0.1:{served.port}"}
    wrong = []
    for target, expected in control_path_cases():
        status, headers, _ = raw_get(served.port, target, host)
        plain = headers.get("content-type", "").startswith("text/plain")
        if (expected and (status, plain) != (expected, True)) or status >= 500:
            wrong.append(f"{target}: {status}, expected {expected or 'no 5xx'}")
    for raw in (b"/assets/a\x00b", b"/static/\x00", b"/main\x01"):
        status, _, _ = raw_get(served.port, raw, host)
        if not 400 <= status < 500:
            wrong.append(f"{raw!r}: {status}")
    assert not wrong, "\n".join(wrong)
    assert not tracebacks(served.log_text(mark)), tracebacks(served.log_text(mark))


def test_a_page_too_long_to_keep_opens_without_what_does_not_fit(served: FrontServer) -> None:
    """``?x=<25,000 characters>&d_k=8``: its websocket, which repeats the page's query
    beside a token carrying it, would cross Tornado's 64 KiB head limit unanswered. The
    guard sends the page on without it; that page's websocket opens as BokehJS opens it."""
    host = {"Host": f"127.0.0.1:{served.port}"}
    for case in long_query_cases()[1::3]:
        status, headers, body = raw_get(served.port, f"/main?{case.query}", host)
        assert status == 303 and b"too long to keep" in body, (case.query[:60], status)
        location = headers["location"]
        assert len(location) < 20_000 and OMITTED in location
        status, _, page = raw_get(served.port, location, host)
        assert status == 200, location[:80]
        token = TOKEN.search(page.decode("utf-8"))
        assert token and len(token.group(1)) < 40_000
        query = location.partition("?")[2]
        opened = run_async(
            send_frames(served.base_url, token.group(1), [], wait=0.5, query=query), 60
        )
        assert opened, "the page's websocket (with the page's query, as BokehJS writes it)"


REFUSED_LINE = "a websocket client's message was refused"


def test_malformed_websocket_messages_cost_a_short_line_at_most(served: FrontServer) -> None:
    """Each family on a websocket of its own (Bokeh closes a connection it cannot read),
    then a flood of requests from a client that reads nothing: no traceback, no ERROR line,
    a few short lines, and the session still opens."""
    mark = served.log_size()
    token = page_token(served.url)
    families = malformed_messages()

    async def scenario() -> None:
        for frames in families.values():
            await send_frames(served.base_url, token, frames, wait=0.3)
        pull = ['{"msgid": "p", "msgtype": "PULL-DOC-REQ"}', "{}", "{}"]
        await send_frames(served.base_url, token, pull * 300, read=False)

    run_async(scenario(), 300)
    session = open_session(served.base_url, "?d_k=16")
    assert session["status"] == 101 and "PULL-DOC-REPLY" in session["messages"]
    text = served.log_text(mark)
    assert not tracebacks(text), tracebacks(text)
    lines = [line for line in text.splitlines() if REFUSED_LINE in line]
    assert 0 < len(lines) <= 2 * 20, len(lines)
    assert all(len(line) < 200 for line in lines), max(lines, key=len)
    assert "ERROR" not in text and "[[[[" not in text


def _answer(port: int, raw: bytes) -> bytes:
    """Send ``raw`` on a connection of its own; everything the server sends before it
    closes (b"" if it closes or resets the connection without an answer)."""
    import socket

    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        try:
            connection.sendall(raw)
            while chunk := connection.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass  # a head too long to read: Tornado closes with the rest unread
    return data


def _plain_refusal(answer: bytes, status: int) -> str | None:
    """What is wrong with ``answer`` as the guard's plain ``status`` refusal, or None."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.lower(): value.strip() for name, _, value in (x.partition(":") for x in lines[1:])
    }
    if not lines[0].startswith(f"HTTP/1.1 {status} "):
        return lines[0] or "no answer"
    if not headers.get("content-type", "").startswith("text/plain") or len(body) < 20:
        return f"not plain text: {headers.get('content-type')!r}, {len(body)} bytes"
    if "frame-ancestors" not in headers.get("content-security-policy", ""):
        return "no frame-ancestors"
    return None


def _check_heads(served: FrontServer, cases: dict[str, tuple[bytes, int]]) -> None:
    """Send each head on a connection of its own: a status means the guard's plain refusal
    with that status, 0 no answer but never a 5xx. The server serves the page after, and
    its log has no traceback nor ERROR line."""
    mark = served.log_size()
    wrong = []
    for label, (raw, status) in cases.items():
        answer = _answer(served.port, raw)
        problem = _plain_refusal(answer, status) if status else None
        if status == 0 and answer[:12].startswith(b"HTTP/1.1 5"):
            problem = answer[:40].decode("latin-1")
        if problem:
            wrong.append(f"{label}: {problem}")
    assert not wrong, "\n".join(wrong)
    assert http_status(served.url) == 200, "the server still serves the page"
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]


def test_heads_tornado_cannot_read_get_the_guards_plain_400(served: FrontServer) -> None:
    """A bad request line, a folded header, over 1,000 query parameters: Tornado refuses
    them before any handler, and the guard's stream writes its plain 400 for its empty one."""
    heads = unreadable_heads(f"127.0.0.1:{served.port}")
    _check_heads(served, {label: (raw, 400) for label, raw in heads.items()})


def test_heads_over_64_kib_get_a_plain_431_while_they_can_be_read(served: FrontServer) -> None:
    """Up to what the server reads of a head, a plain 431; past it Tornado closes the
    connection while reading (no answer can be written then), never with a 5xx."""
    _check_heads(served, oversized_heads(f"127.0.0.1:{served.port}"))


def test_websocket_messages_over_the_limit_close_only_their_connection(
    served: FrontServer,
) -> None:
    """A 19 MB ``Location.href`` (and every other family over the limit) is not read whole:
    Tornado closes that connection; the server keeps serving, and logs no error."""
    mark = served.log_size()
    token = page_token(served.url)

    async def scenario() -> list[list[str | bytes]]:
        return [
            await send_frames(served.base_url, token, frames, wait=0.5)
            for frames in oversized_messages().values()
        ]

    answers = run_async(scenario(), 600)
    # At most the ACK the server sends on opening (three frames), then the close: no reply
    # (OK or ERROR) to the message.
    assert all(len(received) <= 3 for received in answers), [len(a) for a in answers]
    session = open_session(served.base_url, "?d_k=16")
    assert session["status"] == 101 and "PULL-DOC-REPLY" in session["messages"]
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]


def _status(answer: bytes) -> int:
    """The status of an HTTP answer (0: none)."""
    parts = answer[:16].split(b" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


ANSWER_LIMIT_S = 1.0
"""How long a hostile request on any route may wait for its answer: none builds a page."""


def test_no_component_path_but_the_apps_own_imports_anything(served: FrontServer) -> None:
    """Panel's /components/ route imports the module its path names: the guard answers a
    plain 404 first (one path named ``venv.__main__`` ended the server before)."""
    mark = served.log_size()
    host = f"Host: 127.0.0.1:{served.port}\r\nConnection: close\r\n\r\n"
    wrong = []
    for path in component_paths():
        for method in ("GET", "HEAD"):
            answer = _answer(served.port, f"{method} {path} HTTP/1.1\r\n{host}".encode())
            if _status(answer) != 404:
                wrong.append(f"{method} {path[:80]}: {answer[:40]!r}")
    assert not wrong, "\n".join(wrong[:20])
    assert http_status(served.url) == 200, "the server still serves the page"
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]
    assert "Zen of Python" not in text and "usage:" not in text, "a module ran on import"


def test_a_hostile_path_on_every_mounted_route_is_answered_below_500(served: FrontServer) -> None:
    """Every route Panel and Bokeh mount, with hostile paths and queries, by GET and HEAD:
    an answer under 500 within :data:`ANSWER_LIMIT_S`, and the page served after."""
    import time

    mark = served.log_size()
    host = f"Host: 127.0.0.1:{served.port}\r\nConnection: close\r\n\r\n"
    wrong, slowest = [], (0.0, "")
    for probe in route_probes():
        for method in ("GET", "HEAD"):
            started = time.monotonic()
            answer = _answer(served.port, f"{method} {probe} HTTP/1.1\r\n{host}".encode())
            took = time.monotonic() - started
            slowest = max(slowest, (took, f"{method} {probe[:60]}"))
            if not 100 <= _status(answer) < 500:
                wrong.append(f"{method} {probe[:80]}: {answer[:40]!r}")
    assert not wrong, "\n".join(wrong[:20])
    assert slowest[0] < ANSWER_LIMIT_S, slowest
    assert http_status(served.url) == 200, "the server still serves the page"
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]


def test_the_server_knows_every_route_it_mounts(served: FrontServer) -> None:
    """No route Panel or Bokeh mount is one app/server/mounted_routes.py does not name
    (the server warns at start, and answers such a route with 404), and each named
    handler has hostile probes."""
    text = served.log_text()
    assert "mount routes this server does not know" not in text, text[-2000:]
    assert "could not read the server's routing table" not in text
    assert set(ROUTE_BASES) == set(KNOWN_HANDLERS)


def test_a_refused_head_request_gets_its_head_alone(served: FrontServer) -> None:
    """HEAD with every kind of refusal: the status, its headers with the length the body
    would have, no body, and no traceback in the log."""
    mark = served.log_size()
    wrong = []
    for label, (raw, status) in head_refusals(f"127.0.0.1:{served.port}", served.port).items():
        answer = _answer(served.port, raw)
        head, separator, body = answer.partition(b"\r\n\r\n")
        if _status(answer) != status or not separator or body:
            wrong.append(f"{label}: {answer[:60]!r} … {len(body)} bytes of body")
        elif b"content-length: " not in head.lower():
            wrong.append(f"{label}: no Content-Length")
    assert not wrong, "\n".join(wrong)
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]


def test_heads_tornado_refuses_do_not_hold_up_the_next_pages(served: FrontServer) -> None:
    """Page heads the front counts as pages and Tornado refuses (three rounds of each
    family), sent at once: each answered, and a page still opens at once after them (the
    front's page queue held each for 30 s before)."""
    from concurrent.futures import ThreadPoolExecutor

    mark = served.log_size()
    cases = malformed_page_heads(f"127.0.0.1:{served.port}")
    burst = [(label, raw, status) for label, (raw, status) in cases.items()] * 3
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda case: _answer(served.port, case[1]), burst))
    wrong = [
        f"{label}: {answer[:40]!r}"
        for (label, _raw, status), answer in zip(burst, answers, strict=True)
        if _status(answer) != status
    ]
    assert not wrong, "\n".join(wrong)
    # The page queue is free again: pages open within the time a page takes, far below the
    # 30 s each refused head held a slot for.
    for _ in range(3):
        assert page_token(served.url, timeout=15)
    text = served.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, text[-2000:]


def test_static_files_and_the_websocket_are_compressed(served: FrontServer) -> None:
    """BokehJS as gzip (the same bytes once decompressed, a quarter of them on the wire) with
    a cache lifetime; the page's websocket negotiates per-message deflate."""
    import gzip

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    host = {"Host": f"127.0.0.1:{served.port}"}
    target = "/static/js/bokeh.min.js"
    status, headers, packed = raw_get(served.port, target, {**host, "Accept-Encoding": "gzip"})
    plain_status, plain_headers, plain = raw_get(served.port, target, host)
    assert status == plain_status == 200
    assert headers["content-encoding"] == "gzip" and "content-encoding" not in plain_headers
    assert gzip.decompress(packed) == plain and len(packed) < len(plain) / 3
    assert "max-age=" in headers["cache-control"]

    token = page_token(served.url)

    async def extensions() -> str:
        request = HTTPRequest(
            f"ws://127.0.0.1:{served.port}/main/ws", headers={"Origin": served.base_url}
        )
        connection = await websocket_connect(
            request, subprotocols=["bokeh", token], compression_options={}
        )
        try:
            return connection.headers.get("Sec-WebSocket-Extensions", "")
        finally:
            connection.close()

    assert "permessage-deflate" in run_async(extensions(), 60)


def test_the_log_has_no_traceback(served: FrontServer) -> None:
    assert not tracebacks(served.log_text()), tracebacks(served.log_text())
