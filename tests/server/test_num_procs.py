"""``sdpa-sim --num-procs N``: the routing rule, the front with its worker processes, and
pages served through it in Chromium.

The routing tests are pure (a request head and what the front knows of its workers in, a
worker or an answer out). The others start ``sdpa-sim --num-procs 2`` as a subprocess on a
port in 5200–5299 and wait on what it prints, never on time alone.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from bokeh.util.token import generate_jwt_token, generate_secret_key, generate_session_id
from browser_support import HEATMAP_DRAWN_JS
from procs_support import (
    FrontServer,
    channel_async,
    channel_status,
    free_port,
    http_status,
    open_session,
    page_token,
    pid_running,
    run_async,
    running_front,
    sdpa_sim_command,
    start_front,
    stop_front,
    wait_for,
    websocket_status,
)

from app.served import channel
from app.served.component_routes import served_component_files
from app.server import cli, front
from app.server.front import PENDING_LIFETIME, Front, FrontConfig, Worker, worker_count
from app.server.request_guard import RequestGuard
from app.server.routing import (
    CHANNEL_PATHS,
    MAX_HEAD_BYTES,
    Credential,
    RequestHead,
    Route,
    WorkerView,
    is_page,
    least_loaded,
    owner,
    parse_head,
    route,
    session_credential,
    websocket_token,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage

KEYS = [generate_secret_key().encode(), generate_secret_key().encode()]


def _token(key: bytes, **arguments: str) -> str:
    """A session token as worker ``key``'s Bokeh puts it in a page."""
    session_id = generate_session_id(secret_key=key, signed=True)
    return generate_jwt_token(session_id, secret_key=key, signed=True, extra_payload=arguments)


def _head(target: str = "/main", *lines: str, method: str = "GET") -> bytes:
    return "\r\n".join(
        [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1:5200", *lines, "", ""]
    ).encode()


def _websocket(token: str) -> bytes:
    return _head(
        "/main/ws",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        f"Sec-WebSocket-Protocol: bokeh, {token}",
        "Origin: http://127.0.0.1:5200",
    )


def _channel(key: str | None, path: str = "/channel") -> bytes:
    """The head of a page's request for its session channel (app/served/channel.py) with ``key``."""
    return _head(
        path if key is None else f"{path}?key={key}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "Origin: http://127.0.0.1:5200",
    )


def _workers(*loads: int, dead: tuple[int, ...] = ()) -> list[WorkerView]:
    keys = [*KEYS, *(generate_secret_key().encode() for _ in loads[len(KEYS) :])]
    return [
        WorkerView(key=keys[index], alive=index not in dead, load=load)
        for index, load in enumerate(loads)
    ]


# Reading a request head ---------------------------------------------------------------


def test_a_head_gives_its_method_target_and_headers_by_lower_case_name() -> None:
    data = _head("/main?d_k=4", "Accept: text/html", "X-Twice: a", "x-twice: b") + b"body"
    head = parse_head(data)
    assert head is not None
    assert (head.method, head.target, head.path) == ("GET", "/main?d_k=4", "/main")
    assert head.headers["accept"] == "text/html"
    assert head.headers["x-twice"] == "a, b", "a repeated header is one list, as in HTTP"
    assert head.query_value("d_k") == "4"
    assert not head.is_websocket


@pytest.mark.parametrize(
    "data",
    [
        b"GET /main HTTP/1.1\r\nHost: x\r\n",  # no empty line yet: incomplete
        b"",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",  # TLS hello
        b"GET /main\r\n\r\n",  # HTTP/0.9
        b"GET /main HTTP/1.1\r\nno colon here\r\n\r\n",
        b"GET /main HTTP/1.1\r\n Folded: header\r\n\r\n",
    ],
)
def test_what_is_not_a_complete_request_head_is_none(data: bytes) -> None:
    assert parse_head(data) is None


def test_a_bokeh_websocket_carries_its_token_as_second_sub_protocol() -> None:
    token = _token(KEYS[0])
    head = parse_head(_websocket(token))
    assert head is not None and head.is_websocket
    assert websocket_token(head) == token
    assert session_credential(head) == Credential(token=token)


@pytest.mark.parametrize(
    "protocols", ["bokeh", "chat, TOKEN", "bokeh, TOKEN, more", "bokeh, ", "TOKEN, bokeh"]
)
def test_other_sub_protocols_carry_no_token(protocols: str) -> None:
    data = _head("/main/ws", "Upgrade: websocket", f"Sec-WebSocket-Protocol: {protocols}")
    head = parse_head(data)
    assert head is not None and head.is_websocket
    assert websocket_token(head) is None
    assert session_credential(head) is None


def test_a_page_names_a_session_as_bokeh_reads_it() -> None:
    token = _token(KEYS[1])
    by_token = parse_head(_head(f"/main?d_k=4&bokeh-token={token}"))
    by_id = parse_head(_head("/main?bokeh-session-id=a&bokeh-session-id=b"))
    by_header = parse_head(_head("/main", "Bokeh-Session-Id: c"))
    plain = parse_head(_head("/main?d_k=4"))
    assert by_token and by_id and by_header and plain
    assert session_credential(by_token) == Credential(token=token)
    assert session_credential(by_id) == Credential(session_id="b"), "Bokeh reads the last"
    assert session_credential(by_header) == Credential(session_id="c")
    assert session_credential(plain) is None


# The routing decision -------------------------------------------------------------------


def test_a_websocket_goes_to_the_worker_that_signed_its_session() -> None:
    for index, key in enumerate(KEYS):
        token = _token(key, arguments="{}")
        assert owner(Credential(token=token), KEYS) == index
        # However loaded: the session is there and nowhere else.
        assert route(parse_head(_websocket(token)), _workers(9, 9)) == Route(worker=index)


def test_a_websocket_no_worker_signed_is_refused_by_the_front() -> None:
    stranger = _token(generate_secret_key().encode())
    unsigned = generate_jwt_token(generate_session_id(signed=False), signed=False)
    for token in (stranger, unsigned, "not-a-token", "e30.e30", "W10"):
        assert route(parse_head(_websocket(token)), _workers(0, 0)) == Route(status=403)


def test_a_worker_slot_without_a_key_owns_nothing() -> None:
    assert owner(Credential(token=_token(b"")), [b"", *KEYS]) is None


def test_a_websocket_whose_worker_stopped_gets_503() -> None:
    token = _token(KEYS[1])
    assert route(parse_head(_websocket(token)), _workers(0, 0, dead=(1,))) == Route(status=503)


def test_a_new_page_goes_to_the_least_loaded_live_worker() -> None:
    page = parse_head(_head("/main?d_k=1024"))
    assert route(page, _workers(3, 1, 2)) == Route(worker=1, page=True)
    assert route(page, _workers(3, 1, 2, dead=(1,))) == Route(worker=2, page=True)
    static = parse_head(_head("/static/js/bokeh.min.js"))
    assert route(static, _workers(3, 1, 2)) == Route(worker=1, page=False)


def test_equal_workers_take_turns() -> None:
    workers = _workers(2, 2, 5, 2)
    assert [least_loaded(workers, turn) for turn in range(5)] == [0, 1, 3, 3, 0]


def test_without_a_live_worker_the_front_answers_503() -> None:
    assert least_loaded(_workers(0, 0, dead=(0, 1))) is None
    assert route(parse_head(_head("/main")), _workers(0, 0, dead=(0, 1))) == Route(status=503)


def test_a_page_naming_a_session_goes_to_its_worker() -> None:
    token = _token(KEYS[0])
    session_id = generate_session_id(secret_key=KEYS[1], signed=True)
    assert route(parse_head(_head(f"/main?bokeh-token={token}")), _workers(5, 0)).worker == 0
    by_id = parse_head(_head(f"/main?bokeh-session-id={session_id}"))
    assert route(by_id, _workers(0, 5)).worker == 1


def test_a_page_naming_a_session_no_worker_signed_is_refused_by_the_front() -> None:
    """As each worker would refuse it (403): a link cannot choose a session id."""
    for query in ("bokeh-session-id=KNOWN", "bokeh-token=abc", f"bokeh-token={_token(b'k')}"):
        assert route(parse_head(_head(f"/main?{query}")), _workers(1, 0)) == Route(status=403)
    session_id = generate_session_id(secret_key=KEYS[1], signed=True)
    by_id = parse_head(_head(f"/main?bokeh-session-id={session_id}"))
    assert route(by_id, _workers(0, 0, dead=(1,))) == Route(status=503)


def test_an_unreadable_head_goes_to_a_worker_which_answers_it() -> None:
    assert route(None, _workers(1, 0)) == Route(worker=1, page=False)


@pytest.mark.parametrize(
    ("target", "method", "expected"),
    [
        ("/", "GET", True),
        ("/main", "GET", True),
        ("/main/", "GET", True),
        ("/main?d_k=4", "GET", True),
        ("/main/autoload.js?bokeh-autoload-element=x", "GET", True),
        ("/main", "HEAD", False),
        ("/main/ws", "GET", False),
        ("/static/js/bokeh.min.js", "GET", False),
        ("/assets/course-page.html", "GET", False),
        ("/favicon.ico", "GET", False),
    ],
)
def test_which_requests_build_a_session(target: str, method: str, expected: bool) -> None:
    head = RequestHead(method=method, target=target)
    assert is_page(head, ("/", "/main")) is expected


def test_websocket_headers_on_a_page_path_still_make_a_page() -> None:
    """Tornado routes by path: the front counts what the worker builds, a page."""
    head = parse_head(_websocket(_token(KEYS[0])).replace(b"/main/ws", b"/main?d_k=8"))
    assert head is not None and not head.is_websocket
    assert is_page(head, ("/", "/main"))
    assert route(head, _workers(0, 0)).page


def test_the_front_knows_the_channels_paths_without_importing_the_app() -> None:
    """app.server.routing keeps its own copy (the front imports no Panel): it must match the
    channel's mounted routes."""
    assert CHANNEL_PATHS == channel.CHANNEL_PATHS
    ((pattern, _),) = channel.ROUTES
    assert all(re.fullmatch(pattern, path) for path in CHANNEL_PATHS)


def test_a_channel_goes_to_the_worker_that_signed_its_key() -> None:
    for index, key in enumerate(KEYS):
        session_id = generate_session_id(secret_key=key, signed=True)
        for path in CHANNEL_PATHS:
            head = parse_head(_channel(session_id, path))
            assert head is not None and head.is_channel and not head.is_websocket
            assert session_credential(head) == Credential(session_id=session_id)
            # However loaded: the session is there and nowhere else.
            assert route(head, _workers(9, 9, 0)) == Route(worker=index)


def test_a_channel_key_no_worker_signed_is_refused_by_the_front() -> None:
    stranger = generate_session_id(secret_key=generate_secret_key().encode(), signed=True)
    unsigned = generate_session_id(signed=False)
    for key in (stranger, unsigned, "not-a-key", "a.b", "e30.e30"):
        assert route(parse_head(_channel(key)), _workers(0, 0)) == Route(status=403), key


def test_a_channel_whose_worker_stopped_gets_503() -> None:
    session_id = generate_session_id(secret_key=KEYS[1], signed=True)
    assert route(parse_head(_channel(session_id)), _workers(0, 0, dead=(1,))) == Route(status=503)


def test_a_channel_without_a_key_goes_to_a_worker_which_closes_it() -> None:
    """Nothing to route by: the least loaded worker accepts it and closes it at once
    (app.served.channel's UNKNOWN_SESSION), and the page carries on over Bokeh's websocket."""
    for data in (_channel(None), _channel(""), _channel(None, "/main/channel")):
        head = parse_head(data)
        assert head is not None and head.is_channel
        assert session_credential(head) is None
        assert route(head, _workers(3, 1)) == Route(worker=1, page=False)


def test_a_key_names_a_session_only_on_a_channel_websocket() -> None:
    """A plain GET of the channel (the worker answers 400) and ``?key=`` on other paths
    route as any request does."""
    session_id = generate_session_id(secret_key=KEYS[0], signed=True)
    plain_get = parse_head(_head(f"/channel?key={session_id}"))
    elsewhere = parse_head(_channel(session_id).replace(b"/channel?", b"/main/ws?"))
    other_path = parse_head(_channel(session_id).replace(b"/channel?", b"/other/channel?"))
    for head in (plain_get, elsewhere, other_path):
        assert head is not None and not head.is_channel
        assert session_credential(head) is None
        assert route(head, _workers(3, 1)) == Route(worker=1, page=False)


def test_a_page_counts_towards_its_worker_until_its_session_is_reported() -> None:
    worker = Worker(index=0)
    worker.pending.extend([10.0, 11.0, 12.0])
    assert worker.load(now=12.0) == 3
    worker.reported(live=1, created=1)  # the oldest page became a session
    assert (worker.live, list(worker.pending)) == (1, [11.0, 12.0])
    assert worker.load(now=12.0) == 3
    # A page that never became a session (refused, abandoned) stops counting in time.
    assert worker.load(now=11.5 + PENDING_LIFETIME) == 2
    worker.reported(live=0, created=5)
    assert worker.load(now=12.0) == 0


def test_num_procs_zero_means_one_worker_per_core() -> None:
    assert worker_count(0) == len(os.sched_getaffinity(0))
    assert worker_count(3) == 3
    with pytest.raises(ValueError, match="0 or more"):
        worker_count(-1)


# The command line -----------------------------------------------------------------------


def test_without_num_procs_sdpa_sim_runs_panel_serve_in_process_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    guards: list[RequestGuard] = []
    monkeypatch.setattr("panel.command.main", lambda: calls.append(list(sys.argv)))
    monkeypatch.setattr(front, "serve", lambda config: pytest.fail("no front without N > 1"))
    # What they change is process-wide (checked in test_one_process_signs_and_guards).
    monkeypatch.setattr(cli, "sign_sessions", lambda: None)
    monkeypatch.setattr(cli, "guard_this_process", guards.append)
    for argv in ([], ["--num-procs", "1"]):
        cli.main([*argv, "--port", "5299", "--address", "127.0.0.1"])
    assert guards == [RequestGuard.for_server("127.0.0.1")] * 2
    # The command line sdpa-sim ran before --num-procs existed, with the websocket's size limit.
    expected = [
        "panel",
        "serve",
        str(cli.MAIN),
        "--port",
        "5299",
        "--address",
        "127.0.0.1",
        "--index",
        "main",
        "--plugins",
        "app.served.channel",
        "--plugins",
        "app.served.page_data",
        "--websocket-max-message-size",
        str(cli.WEBSOCKET_MAX_MESSAGE_BYTES),
        "--websocket-compression-level",
        str(cli.WEBSOCKET_COMPRESSION_LEVEL),
        "--static-dirs",
        f"assets={cli.STATIC_DIR}",
    ]
    assert calls == [expected, expected]


def test_one_process_signs_and_guards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session ids are signed with a new secret unless one is set, and the HTTPServer
    panel serve builds is the guarded one."""
    from tornado.httpserver import HTTPServer

    from app.server.guarded_http import GuardedHTTPServer

    # setenv first, so the undo removes what sign_sessions sets: the key and the signing
    # would otherwise reach every server a later test starts from this process.
    for name in ("BOKEH_SIGN_SESSIONS", "BOKEH_SECRET_KEY"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    cli.sign_sessions()
    assert os.environ["BOKEH_SIGN_SESSIONS"] == "true"
    assert len(os.environ["BOKEH_SECRET_KEY"]) >= 32, "Bokeh's minimum"
    monkeypatch.setenv("BOKEH_SECRET_KEY", "shared-by-the-processes-behind-one-proxy")
    cli.sign_sessions()
    assert os.environ["BOKEH_SECRET_KEY"] == "shared-by-the-processes-behind-one-proxy"
    guard = RequestGuard.for_server("127.0.0.1")
    try:
        cli.guard_this_process(guard)
        server = HTTPServer(lambda request: None)
        # The guard lets through the app's own bundle and its stylesheet at /components/
        # (cli fills them in).
        expected = dataclasses.replace(guard, component_files=served_component_files())
        assert isinstance(server, GuardedHTTPServer) and server.guard == expected
        assert sorted(path.rsplit(".", 1)[1] for path in expected.component_files) == [
            "css",
            "js",
        ]
    finally:
        HTTPServer.configure(None)


def test_num_procs_starts_the_front_with_that_many_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configs: list[front.FrontConfig] = []
    monkeypatch.setattr(cli, "sign_sessions", lambda: None)
    monkeypatch.setattr(front, "serve", lambda config: configs.append(config) or 0)
    monkeypatch.setattr("panel.command.main", lambda: pytest.fail("the front serves"))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--num-procs", "3", "--port", "5299", "--address", "0.0.0.0", "--show"])
    assert exit_info.value.code == 0
    [config] = configs
    assert (config.address, config.port, config.workers, config.show) == ("0.0.0.0", 5299, 3, True)
    assert config.guard == RequestGuard.for_server("0.0.0.0")
    with pytest.raises(SystemExit, match="0 or more"):
        cli.main(["--num-procs", "-2"])


def test_a_worker_serves_the_app_as_one_process_does_on_a_unix_socket() -> None:
    parser = cli.build_parser()
    options = parser.parse_args(["--num-procs", "2", "--port", "5299", "--show"])
    arguments = cli.worker_arguments(options, 1, Path("/tmp/x/worker-1.sock"))
    assert arguments[:2] == ["serve", str(cli.MAIN)]
    assert _values(arguments, "--index") == ["main"]
    assert _values(arguments, "--plugins") == ["app.served.channel", "app.served.page_data"]
    assert _values(arguments, "--websocket-max-message-size") == ["1048576"]
    assert _values(arguments, "--websocket-compression-level") == ["1"]
    assert _values(arguments, "--unix-socket") == ["/tmp/x/worker-1.sock"]
    assert f"assets={cli.STATIC_DIR}" in arguments
    # The public address's websocket origins: Bokeh's default for a port, made explicit.
    assert _values(arguments, "--allow-websocket-origin") == ["localhost:5299"]
    for option in ("--port", "--address", "--show", "--num-procs"):
        assert option not in arguments, "the front listens and opens the browser"
    listed = parser.parse_args(
        ["--allow-websocket-origin", "course.example.edu", "--allow-websocket-origin", "b:8080"]
    )
    assert _values(cli.worker_arguments(listed, 0, Path("s")), "--allow-websocket-origin") == [
        "course.example.edu",
        "b:8080",
    ]


def test_a_worker_takes_the_guard_before_the_panel_serve_arguments() -> None:
    from app.server.worker import parse_arguments

    guard = RequestGuard.for_server("0.0.0.0", embed_origins=["https://c.example.edu"])
    argv = ["--control-fd", "7", "--guard", guard.to_json(), "--", "serve", "app/main.py"]
    assert parse_arguments(argv) == (7, guard, ["serve", "app/main.py"])
    assert parse_arguments(["--control-fd", "7", "--", "serve"]) == (7, None, ["serve"])


def _values(arguments: list[str], option: str) -> list[str]:
    return [value for name, value in itertools.pairwise(arguments) if name == option]


def test_the_help_documents_num_procs() -> None:
    assert "--num-procs N" in cli.build_parser().format_help()
    assert isinstance(cli.build_parser().parse_args([]), argparse.Namespace)


# The front and its workers, served ------------------------------------------------------


def test_hand_offs_wait_while_a_busy_workers_queue_is_full() -> None:
    """A worker busy building pages stops taking connections; once its queue is full the
    front waits for it rather than taking it for dead."""
    config = FrontConfig(address="127.0.0.1", port=5299, workers=1, serve_arguments=list)
    count = 40

    def take(theirs: socket.socket) -> int:
        theirs.settimeout(30)
        for _ in range(count):
            _data, fds, _flags, _address = socket.recv_fds(theirs, 16, 1)
            for fd in fds:
                os.close(fd)
        return count

    async def scenario() -> tuple[int, list[bool], bool]:
        front_ = Front(config)
        worker = front_.workers[0]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # A small queue: a few messages fill it.
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        ours.setblocking(False)
        worker.control, worker.alive = ours, True
        clients = [socket.socketpair() for _ in range(count)]
        try:
            handing = [asyncio.ensure_future(front_.hand_over(worker, a)) for a, _ in clients]
            for _ in range(3):
                await asyncio.sleep(0)
            waiting = sum(not task.done() for task in handing)
            taken = asyncio.get_running_loop().run_in_executor(None, take, theirs)
            results = await asyncio.wait_for(asyncio.gather(*handing), 30)
            assert await taken == count
            return waiting, results, worker.alive
        finally:
            for a, b in clients:
                a.close()
                b.close()
            ours.close()
            theirs.close()

    waiting, results, alive = run_async(scenario(), 60)
    assert waiting > 0, "the queue should have filled"
    assert all(results) and alive


@pytest.fixture(scope="module")
def front_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontServer]:
    """``sdpa-sim --num-procs 2`` for this module's protocol-level tests."""
    log_path = tmp_path_factory.mktemp("sdpa-sim-front") / "front.log"
    try:
        with running_front(log_path) as server:
            yield server
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


def test_sessions_open_on_both_workers_through_the_front(front_server: FrontServer) -> None:
    pids = front_server.worker_pids()
    assert len(pids) == 2 and all(pid_running(pid) for pid in pids)
    for _ in range(4):
        session = open_session(front_server.base_url, "?d_k=16")
        assert session["status"] == 101
        assert session["messages"][:2] == ["ACK", "PULL-DOC-REPLY"]
    wait_for(
        lambda: _every_worker_has_sessions(front_server),
        30,
        "both workers to report sessions",
        front_server.log_text,
    )


def _every_worker_has_sessions(server: FrontServer) -> bool:
    counts = server.sessions_per_worker()
    return all(counts.get(pid, 0) >= 1 for pid in server.worker_pids())


def test_a_link_cannot_choose_a_session_id(front_server: FrontServer) -> None:
    """Workers sign their session ids, so ``?bokeh-session-id=KNOWN`` is refused with a
    plain 403 (not a 500, and no session shared between two students)."""
    for query in ("?bokeh-session-id=x", "?bokeh-session-id=x.y", "?bokeh-token=abc"):
        assert http_status(front_server.url + query) == 403, query
    assert "Traceback" not in front_server.log_text()


def test_a_websocket_goes_to_its_session_and_a_forged_one_is_refused(
    front_server: FrontServer,
) -> None:
    for _ in range(3):
        assert websocket_status(front_server.base_url, page_token(front_server.url)) == 101
    forged = _token(generate_secret_key().encode())
    assert websocket_status(front_server.base_url, forged) == 403
    assert websocket_status(front_server.base_url, "garbage") == 403


def test_a_pages_channel_reaches_its_session_and_a_forged_key_is_refused(
    front_server: FrontServer,
) -> None:
    """The channel's key routes it to the worker that holds the session, as the page's
    token routes Bokeh's websocket: a move on it comes back as a frame (a key that reached
    another worker would be closed unanswered)."""
    for _ in range(3):
        opened = run_async(channel_async(front_server.base_url), 60)
        assert opened["status"] == 101
        assert isinstance(opened["reply"], bytes), f"no frame on the channel: {opened}"
    stranger = generate_session_id(secret_key=generate_secret_key().encode(), signed=True)
    for key in (stranger, "garbage"):
        assert channel_status(front_server.base_url, key) == 403
    assert "Traceback" not in front_server.log_text()


def test_static_files_and_the_index_are_served(front_server: FrontServer) -> None:
    for path in ("/", "/assets/course-page.html", "/static/js/bokeh.min.js", "/favicon.ico"):
        assert http_status(front_server.base_url + path) == 200, path
    assert http_status(front_server.base_url + "/nothing-here") == 404


def test_the_front_peeks_until_the_head_is_complete() -> None:
    """A head that arrives in pieces is read once whole; nothing is taken off the socket."""
    config = FrontConfig(address="127.0.0.1", port=5299, workers=1, serve_arguments=list)

    async def scenario() -> tuple[bytes | None, bool, bytes | None, bytes | None]:
        ours, client = socket.socketpair()
        closed, client_gone = socket.socketpair()
        big, big_client = socket.socketpair()
        for sock in (ours, closed, big):
            sock.setblocking(False)
        with ours, client, closed, big, big_client:
            client.sendall(b"GET /main HT")
            peek = asyncio.ensure_future(Front(config).peek_head(ours))
            # Let it peek the partial head (it cannot finish: the rest is not sent yet).
            for _ in range(3):
                await asyncio.sleep(0)
            waited = not peek.done()
            client.sendall(b"TP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(peek, 10)
            unread = ours.recv(1024)
            client_gone.close()
            nothing = await asyncio.wait_for(Front(config).peek_head(closed), 10)
            big_client.sendall(b"GET /" + b"x" * MAX_HEAD_BYTES)
            too_long = await asyncio.wait_for(Front(config).peek_head(big), 10)
        assert head == unread, "the worker reads the head the front peeked at"
        return head, waited, nothing, too_long

    head, waited, nothing, too_long = run_async(scenario(), 60)
    assert waited
    assert head == b"GET /main HTTP/1.1\r\nHost: x\r\n\r\n"
    assert nothing is None, "a client that left sends nothing to route"
    assert too_long is not None and len(too_long) == MAX_HEAD_BYTES


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_front_stops_every_worker(tmp_path: Path, signum: int) -> None:
    server = start_front(tmp_path / "front.log")
    pids = server.worker_pids()
    try:
        assert stop_front(server, signum) == 0
        wait_for(lambda: not any(pid_running(pid) for pid in pids), 30, "the workers to exit")
        assert not server.log_path.read_text().count("Traceback")
    finally:
        _kill(pids)


def test_a_killed_front_leaves_no_worker_behind(tmp_path: Path) -> None:
    """Even without a chance to stop them: a worker stops when its control socket closes."""
    server = start_front(tmp_path / "front.log")
    pids = server.worker_pids()
    try:
        server.process.kill()
        server.process.wait(timeout=30)
        wait_for(
            lambda: not any(pid_running(pid) for pid in pids),
            60,
            "the workers to notice and exit",
            server.log_text,
        )
    finally:
        _kill(pids)


def test_a_worker_that_dies_is_replaced_and_the_other_serves_meanwhile(tmp_path: Path) -> None:
    with running_front(tmp_path / "front.log") as server:
        first, second = server.worker_pids()
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: "exited with code -9" in server.log_text(), 30, "the exit to be logged")
        for _ in range(3):
            assert open_session(server.base_url)["status"] == 101
        restarted = wait_for(
            lambda: RESTARTED.findall(server.log_text()), 120, "a new worker 0", server.log_text
        )
        new_pid = int(restarted[0])
        assert new_pid != first and pid_running(new_pid) and pid_running(second)
        assert open_session(server.base_url)["status"] == 101
    wait_for(
        lambda: not pid_running(second) and not pid_running(new_pid), 30, "the workers to exit"
    )


RESTARTED = re.compile(r"worker 0 restarted \(pid (\d+)\)")


def test_a_port_in_use_stops_sdpa_sim_before_any_worker_starts(tmp_path: Path) -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):
        command = [*sdpa_sim_command(), "--num-procs", "2", "--port", str(port)]
        command += ["--address", "127.0.0.1"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "Cannot start sdpa-sim" in result.stderr
    assert "worker" not in result.stdout + result.stderr


def _kill(pids: list[int]) -> None:
    for pid in pids:
        if pid_running(pid):
            os.kill(pid, signal.SIGKILL)


# In Chromium ------------------------------------------------------------------------------

PAGE_TIMEOUT_MS = 30_000

MARK_WEIGHTS_JS = """() => {
  const {models, frames} = window.SdpaDrawnFigures[0];
  window.__sdpaWeights = {array: models.source.data.weight[0], frames};
}"""
"""Notes the heatmap's weights (app/page/assets/drawn_figures.js draws the session's frames into
the first-screen figures' own documents, and counts the frames it has drawn)."""

WEIGHTS_CHANGED_JS = """() => {
  const {models, frames} = window.SdpaDrawnFigures[0];
  const before = window.__sdpaWeights;
  return frames > before.frames && models.source.data.weight[0] !== before.array;
}"""
"""True once a later frame has been drawn, with new weights."""

SERVER_ERROR_MARKERS = ("Traceback (most recent call last)", "ERROR", "error handling message")
BENIGN_SERVER_ERRORS = ("WebSocketClosedError", "StreamClosedError")


@pytest.mark.browser
def test_pages_through_the_front_render_and_follow_their_controls(
    tmp_path: Path, chromium: Browser
) -> None:
    """Four students through the front: both workers get sessions, every heatmap renders and
    follows a d_k key press (its websocket reached the worker that built its page), and a
    link choosing a session id gets a plain 403."""
    problems: list[str] = []
    with running_front(tmp_path / "front.log") as server:
        mark = server.log_size()
        contexts = []
        try:
            pages = []
            for student in range(4):
                context = chromium.new_context(viewport={"width": 1280, "height": 800})
                context.set_default_timeout(PAGE_TIMEOUT_MS)
                contexts.append(context)
                page = context.new_page()
                page.on("pageerror", lambda error, s=student: problems.append(f"{s}: {error}"))
                page.on("console", lambda message, s=student: _console(problems, s, message))
                response = page.goto(server.url)
                assert response is not None and response.status == 200
                page.wait_for_function(HEATMAP_DRAWN_JS)
                pages.append(page)
            pids = server.worker_pids()
            wait_for(
                lambda: all(server.sessions_per_worker().get(pid, 0) >= 1 for pid in pids),
                30,
                "sessions on both workers",
                server.log_text,
            )
            for page in pages:
                page.evaluate(MARK_WEIGHTS_JS)
                slider = page.get_by_role("slider", name="d_k (key dimension)", exact=True)
                slider.focus()
                slider.press("ArrowRight")
                page.wait_for_function(WEIGHTS_CHANGED_JS)
            # A link choosing its session: the worker refuses it, in a page of its own.
            chosen = chromium.new_context()
            contexts.append(chosen)
            response = chosen.new_page().goto(server.url + "?bokeh-session-id=x")
            assert response is not None and response.status == 403
        finally:
            for context in contexts:
                context.close()
        errors = [
            line
            for line in server.log_text(mark).splitlines()
            if any(marker in line for marker in SERVER_ERROR_MARKERS)
            and not any(benign in line for benign in BENIGN_SERVER_ERRORS)
        ]
    assert not problems, "\n".join(problems)
    assert not errors, "\n".join(errors)


def _console(problems: list[str], student: int, message: ConsoleMessage) -> None:
    if message.type == "error":
        problems.append(f"{student}: console error: {message.text}")
