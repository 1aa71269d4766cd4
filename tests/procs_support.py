"""``sdpa-sim`` (one process, or ``--num-procs N``) as a subprocess, and a Bokeh protocol
client: shared by the tests in tests/server and the front's measurement script.

The tests import it as a top-level module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import browser_support
from browser_support import REPO, AppServer

PORTS = range(5200, 5300)
"""The ports these tests' servers listen on (127.0.0.1 only)."""

START_TIMEOUT = 120.0
"""Seconds the front and its workers have to start: a loaded CI machine imports slowly."""

STOP_TIMEOUT = 30.0

SERVING = re.compile(r"sdpa-sim: serving (\S+) with (\d+) worker processes \(([\d, ]+)\)")
"""The line the front prints once every worker answers."""

PANEL_SERVING = re.compile(r"Bokeh app running at: (\S+)")
"""The line ``panel serve`` prints once it listens (``sdpa-sim`` without ``--num-procs``)."""

STATUS = re.compile(r"sdpa-sim: live sessions per worker: (.*)")
STATUS_ENTRY = re.compile(r"(\d+) \(pid (\d+)\)|stopped \(was pid (\d+)\)")

TOKEN = re.compile(r'"token":\s*"([^"]+)"')

T = TypeVar("T")


def free_port() -> int:
    """The first port of :data:`PORTS` nothing listens on now."""
    return browser_support.free_port(PORTS)


def sdpa_sim_command() -> list[str]:
    """The installed ``sdpa-sim`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("sdpa-sim")
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.server.cli"]


def wait_for(
    probe: Callable[[], T], timeout: float, what: str, on_timeout: Callable[[], str] = str
) -> T:
    """Poll ``probe`` until it returns something truthy; return that. Raises AssertionError
    naming ``what`` (and ``on_timeout()``, e.g. a log) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for {what}\n{on_timeout()}"
            )
        # Paces the polling only: the loop ends on the state, not on the clock.
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # The state follows the command name in parentheses, which may itself hold spaces.
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time process ``pid`` has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of stat; fields[0] here is field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class FrontServer(AppServer):
    """A running ``sdpa-sim`` subprocess (with ``--num-procs N``: the front, whose log
    holds its workers' too)."""

    def serving(self) -> re.Match[str] | None:
        """The front's "serving" line, once printed."""
        return SERVING.search(self.log_text())

    def ready(self) -> bool:
        """Whether it serves: the front's line, or ``panel serve``'s in one process."""
        return bool(self.serving() or PANEL_SERVING.search(self.log_text()))

    def worker_pids(self) -> list[int]:
        """The workers' process ids as the front printed them at startup."""
        match = self.serving()
        assert match, f"the front has not started:\n{self.log_text()}"
        return [int(pid) for pid in match.group(3).split(",")]

    def sessions_per_worker(self) -> dict[int, int]:
        """Live sessions by worker pid, from the front's latest status line ({} before one)."""
        lines = STATUS.findall(self.log_text())
        if not lines:
            return {}
        counts = {}
        for live, pid, stopped in STATUS_ENTRY.findall(lines[-1]):
            if pid:
                counts[int(pid)] = int(live)
            else:
                counts[int(stopped)] = -1
        return counts


def start_front(
    log_path: Path, workers: int = 2, extra: tuple[str, ...] = (), attempts: int = 3
) -> FrontServer:
    """Start ``sdpa-sim --num-procs workers`` on a free loopback port; return once it has
    printed its address (every worker answered; with one worker, once ``panel serve`` in
    its one process listens). Raises RuntimeError with the log if it exits or stays
    silent."""
    for attempt in range(attempts):
        port = free_port()
        command = [
            *sdpa_sim_command(),
            "--num-procs",
            str(workers),
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            *extra,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env
            )
        front = FrontServer(process, port, log_path)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if front.ready():
                return front
            try:
                code = process.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
            # Another process may take the port between the probe and the bind: try again.
            # The front's own bind says "Address already in use"; with one worker,
            # panel serve binds and says "port N is already in use".
            log = front.log_text()
            taken = "Address already in use" in log or "is already in use" in log
            if taken and attempt + 1 < attempts:
                break
            raise RuntimeError(f"sdpa-sim exited with {code}:\n{front.log_text()}")
        else:
            stop_front(front)
            raise RuntimeError(
                f"sdpa-sim did not start within {START_TIMEOUT:.0f} s:\n{front.log_text()}"
            )
    raise RuntimeError(f"sdpa-sim found no free port in {attempts} attempts")


def stop_front(front: FrontServer, signum: int = signal.SIGTERM) -> int | None:
    """Send ``signum`` to the front and wait for it; kill it if it has not exited within
    :data:`STOP_TIMEOUT` seconds (then return None, else its exit code)."""
    if front.process.poll() is not None:
        return front.process.returncode
    front.process.send_signal(signum)
    try:
        return front.process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        front.process.kill()
        front.process.wait(timeout=STOP_TIMEOUT)
        return None


@contextmanager
def running_front(
    log_path: Path, workers: int = 2, extra: tuple[str, ...] = ()
) -> Iterator[FrontServer]:
    """:func:`start_front` for a ``with`` block; stops the front and any worker left after."""
    front = start_front(log_path, workers, extra)
    pids = front.worker_pids() if workers > 1 else []
    try:
        yield front
    finally:
        stop_front(front)
        for pid in pids:
            if pid_running(pid):
                os.kill(pid, signal.SIGKILL)


# A Bokeh session without a browser ---------------------------------------------------------


def page_token(url: str, timeout: float = 60) -> str:
    """GET the page at ``url`` (the server builds its session) and return its session token."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        page = response.read().decode("utf-8")
    match = TOKEN.search(page)
    assert match, "the page carries no session token"
    return match.group(1)


def http_status(url: str, timeout: float = 60) -> int:
    """The HTTP status of a GET of ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _frame(message_type: str, content: dict[str, Any]) -> list[str]:
    header = {"msgid": f"{message_type}-{time.monotonic_ns()}", "msgtype": message_type}
    return [json.dumps(header), "{}", json.dumps(content)]


DOCUMENT_READY = {
    "events": [
        {
            "kind": "MessageSent",
            "msg_type": "bokeh_event",
            "msg_data": {
                "type": "event",
                "name": "document_ready",
                "values": {"type": "map", "entries": []},
            },
        }
    ]
}
"""The PATCH-DOC BokehJS sends once the page's document is up: without it Panel runs no
``onload`` callback, and a session looks cheaper than it is."""


async def session_async(base_url: str, query: str = "", timeout: float = 60) -> dict[str, Any]:
    """A whole session as a browser makes one, without the browser: the page (the server
    builds the session), its websocket, the document, ``document_ready`` and the first
    update after it (the lesson and other ``onload`` work).

    Returns ``{"status": 101, "messages": [...], "bytes": n, "page": s, "document": s,
    "update": s}`` (seconds from the start to the page, the document and that update), or
    ``{"status": code}`` with the HTTP status that refused the page or the websocket.
    """
    from bokeh.protocol import Protocol
    from bokeh.protocol.receiver import Receiver
    from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    started = time.monotonic()
    client = AsyncHTTPClient(force_instance=True, max_clients=1)
    try:
        response = await client.fetch(
            f"{base_url}/main{query}", connect_timeout=timeout, request_timeout=timeout
        )
    except HTTPClientError as error:
        return {"status": error.code}
    finally:
        client.close()
    page_time = time.monotonic() - started
    match = TOKEN.search(response.body.decode("utf-8"))
    assert match, "the page carries no session token"
    host = base_url.split("://", 1)[1]
    request = HTTPRequest(
        f"ws://{host}/main/ws",
        headers={"Origin": base_url},
        connect_timeout=timeout,
        request_timeout=timeout,
    )
    try:
        connection = await websocket_connect(
            request, subprotocols=["bokeh", match.group(1)], max_message_size=64 * 2**20
        )
    except HTTPClientError as error:
        return {"status": error.code}
    receiver = Receiver(Protocol())
    received: list[str] = []
    received_bytes = 0

    async def next_message() -> Any:
        nonlocal received_bytes
        while True:
            fragment = await connection.read_message()
            if fragment is None:
                raise ConnectionError("the server closed the websocket")
            received_bytes += len(fragment)
            message = await receiver.consume(fragment)
            if message is not None:
                received.append(message.msgtype)
                return message

    try:
        assert (await next_message()).msgtype == "ACK"
        for part in _frame("PULL-DOC-REQ", {}):
            await connection.write_message(part)
        while (await next_message()).msgtype != "PULL-DOC-REPLY":
            pass
        document_time = time.monotonic() - started
        for part in _frame("PATCH-DOC", DOCUMENT_READY):
            await connection.write_message(part)
        while (await next_message()).msgtype != "PATCH-DOC":
            pass
        update_time = time.monotonic() - started
    finally:
        connection.close()
    return {
        "status": 101,
        "messages": received,
        "bytes": received_bytes,
        "page": page_time,
        "document": document_time,
        "update": update_time,
    }


def open_session(base_url: str, query: str = "", timeout: float = 60) -> dict[str, Any]:
    """:func:`session_async`, from synchronous code."""
    return run_async(session_async(base_url, query, timeout), timeout)


def websocket_status(
    base_url: str, token: str, timeout: float = 60, headers: dict[str, str] | None = None
) -> int:
    """Open the app's websocket with ``token`` (and ``headers``, e.g. a Host and an Origin
    of a rebinding attack; the Origin is ``base_url``'s unless given): 101 if accepted,
    else the HTTP status."""
    host = base_url.split("://", 1)[1]

    async def attempt() -> int:
        from tornado.httpclient import HTTPClientError, HTTPRequest
        from tornado.websocket import websocket_connect

        request = HTTPRequest(
            f"ws://{host}/main/ws",
            headers={"Origin": base_url, **(headers or {})},
            connect_timeout=timeout,
            request_timeout=timeout,
        )
        try:
            connection = await websocket_connect(request, subprotocols=["bokeh", token])
        except HTTPClientError as error:
            return error.code
        connection.close()
        return 101

    return run_async(attempt(), timeout)


CHANNEL_KEY = re.compile(r'"channel_key":\s*"([^"]+)"')
"""The session channel's key in a pulled document (the page's figures' ``channel_key``)."""


async def channel_async(
    base_url: str, timeout: float = 60, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """A session's own websocket (app/served/channel.py) as its page uses it: the page, Bokeh's
    websocket and the document (whose figures carry the channel's key), then
    ``/channel?key=KEY`` and one d_k move on it; every request with ``headers`` (e.g. a
    proxy's routing cookie).

    Returns ``{"status": 101, "reply": the first message back or None, "close_code": the
    channel's close code or None}``, or ``{"status": code}`` if the channel was refused.
    """
    from bokeh.protocol import Protocol
    from bokeh.protocol.receiver import Receiver
    from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    from app.simulation.spec import D_K_GRID

    client = AsyncHTTPClient(force_instance=True, max_clients=1)
    try:
        response = await client.fetch(
            f"{base_url}/main?d_k=64", headers=headers, request_timeout=timeout
        )
    finally:
        client.close()
    match = TOKEN.search(response.body.decode("utf-8"))
    assert match, "the page carries no session token"
    host = base_url.split("://", 1)[1]
    sent = {"Origin": base_url, **(headers or {})}
    request = HTTPRequest(f"ws://{host}/main/ws", headers=sent, request_timeout=timeout)
    bokeh = await websocket_connect(
        request, subprotocols=["bokeh", match.group(1)], max_message_size=64 * 2**20
    )
    receiver = Receiver(Protocol())
    try:
        key = None
        while key is None:
            fragment = await bokeh.read_message()
            if fragment is None:
                raise ConnectionError("the server closed the websocket")
            message = await receiver.consume(fragment)
            if message is not None and message.msgtype == "ACK":
                for part in _frame("PULL-DOC-REQ", {}):
                    await bokeh.write_message(part)
            elif message is not None and message.msgtype == "PULL-DOC-REPLY":
                found = CHANNEL_KEY.search(json.dumps(message.content))
                assert found, "the document names no channel key"
                key = found.group(1)
        channel_url = f"ws://{host}/channel?key={key}"
        request = HTTPRequest(channel_url, headers=sent, request_timeout=timeout)
        try:
            channel = await websocket_connect(request)
        except HTTPClientError as error:
            return {"status": error.code}
        move = {"name": "d_k", "index": D_K_GRID.index(128)}
        await channel.write_message(json.dumps({"to": "controls", "msg": move}))
        reply = await channel.read_message()
        channel.close()
        return {"status": 101, "reply": reply, "close_code": channel.close_code}
    finally:
        bokeh.close()


def channel_status(base_url: str, key: str, timeout: float = 60) -> int:
    """Open a session channel with ``key`` and no session behind it: 101 if accepted (the
    worker then closes it), else the HTTP status."""
    host = base_url.split("://", 1)[1]

    async def attempt() -> int:
        from tornado.httpclient import HTTPClientError, HTTPRequest
        from tornado.websocket import websocket_connect

        request = HTTPRequest(f"ws://{host}/channel?key={key}", headers={"Origin": base_url})
        try:
            connection = await websocket_connect(request)
        except HTTPClientError as error:
            return error.code
        connection.close()
        return 101

    return run_async(attempt(), timeout)


def run_async(coroutine: Any, timeout: float) -> Any:
    """Run ``coroutine`` to completion in a thread of its own (Playwright's sync API keeps an
    event loop in the calling thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(asyncio.wait_for(coroutine, timeout))).result()


def raw_get(
    port: int, target: str | bytes, headers: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str], bytes]:
    """GET ``target`` on 127.0.0.1:``port`` with exactly ``headers`` (no Host unless
    given): the status, the response headers by lower-case name, and the body. The request
    is sent as bytes (a str as UTF-8), so hosts and targets no HTTP library would send
    arrive as written."""
    target = target if isinstance(target, bytes) else target.encode("utf-8")
    lines = [*(f"{k}: {v}" for k, v in (headers or {}).items()), "Connection: close", "", ""]
    request = b"GET " + target + b" HTTP/1.1\r\n" + "\r\n".join(lines).encode("utf-8")
    chunks = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parsed = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return int(status_line.split(" ")[1]), parsed, body


def tracebacks(log: str) -> str:
    """The tracebacks in a server log, each with the line before it (what was being done),
    or "" if there are none."""
    lines = log.splitlines()
    found = []
    for index, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            end = index + 1
            while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
                end += 1
            found.append("\n".join(lines[max(0, index - 2) : end + 1]))
    return "\n\n".join(found)
