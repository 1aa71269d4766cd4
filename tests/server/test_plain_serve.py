"""Hostile links and messages against plain ``panel serve app/main.py``, which has no guard
before Bokeh: what the app can refuse through Panel's authorize callback it refuses (a
plain page, never a 500), and the log gets one line naming what needs ``sdpa-sim`` and
short lines for malformed websocket messages.

The cases are generated (tests/guard_cases.py), as for ``sdpa-sim``
(tests/server/test_guarded_serving.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import REPO, AppServer, free_port, served_app, stop_server
from guard_cases import (
    PLAIN_PAGE_PATHS,
    header_routing_cases,
    long_query_cases,
    malformed_messages,
    plain_serve_cases,
)
from procs_support import page_token, raw_get, run_async, tracebacks, wait_for
from raw_http import exchange, send_frames

from app.server.plain_serve import NEEDS_SDPA_SIM, REFUSED_TEXT
from app.simulation.address import OMITTED

REFUSED_LINE = "a websocket client's message was refused"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """``panel serve app/main.py`` that has served its first page (the harness asks for
    ``/main`` until it answers)."""
    log_path = tmp_path_factory.mktemp("plain") / "panel.log"
    try:
        with served_app(log_path) as server:
            yield server
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


def _host(server: AppServer) -> dict[str, str]:
    return {"Host": f"127.0.0.1:{server.port}"}


def _refused(status: int, body: bytes) -> bool:
    return status == 403 and REFUSED_TEXT.encode("utf-8") in body and b"<script" not in body


def test_bokeh_parameters_are_refused_before_bokeh_reads_them(plain: AppServer) -> None:
    """Every spelling of every ``bokeh-*`` name on a page: Panel's 403 with the app's words
    and no script (``bokeh-absolute-url`` loads nothing, ``bokeh-token=abc`` is no 500,
    ``bokeh-session-id`` picks nothing); on a file, never a 5xx."""
    mark = plain.log_size()
    wrong = []
    for target, expected in plain_serve_cases():
        status, _, body = raw_get(plain.port, target, _host(plain))
        if expected == 403 and not _refused(status, body):
            wrong.append(f"{target[:90]}: {status}")
        elif (expected and status != expected) or status >= 500 or b"evil.example" in body:
            wrong.append(f"{target[:90]}: {status}, expected {expected or 'no 5xx'}")
    assert not wrong, "\n".join(wrong[:40])
    text = plain.log_text(mark)
    assert not tracebacks(text) and "ERROR" not in text, tracebacks(text)


def test_a_session_header_and_websocket_headers_change_nothing(plain: AppServer) -> None:
    """``Bokeh-Session-Id`` on the page is refused; a page request with websocket headers is
    still the page, refused for its parameters; the websocket path without them is
    Bokeh's 4xx."""
    status, _, body = raw_get(plain.port, "/main", {**_host(plain), "Bokeh-Session-Id": "x"})
    assert _refused(status, body), status
    token = page_token(plain.url)
    wrong = []
    for target, headers, _ in header_routing_cases(token):
        status, _, body = exchange(plain.port, target, {**_host(plain), **headers})
        page = target.partition("?")[0] in PLAIN_PAGE_PATHS
        if (page and not _refused(status, body)) or status >= 500 or b"evil.example" in body:
            wrong.append(f"{target[:80]} {headers['X-Case']}: {status}")
    assert not wrong, "\n".join(wrong)
    assert not tracebacks(plain.log_text()), tracebacks(plain.log_text())


def test_an_address_too_long_to_keep_is_redirected_without_it(plain: AppServer) -> None:
    """As ``sdpa-sim`` sends it on (with Panel's 302 instead of a 303), the left-out
    parameters named for the page's notice."""
    for case in long_query_cases()[::3]:
        status, headers, _ = raw_get(plain.port, f"/main?{case.query}", _host(plain))
        assert status == 302, (case.query[:60], status)
        assert OMITTED in headers["location"] and len(headers["location"]) < 20_000
        status, _, page = raw_get(plain.port, headers["location"], _host(plain))
        assert status == 200 and b'"token"' in page, headers["location"][:80]


def test_malformed_websocket_messages_cost_a_short_line_at_most(plain: AppServer) -> None:
    """app/main.py installs the quiet client-message log: no traceback, no ERROR."""
    mark = plain.log_size()
    token = page_token(plain.url)

    async def scenario() -> None:
        for frames in malformed_messages().values():
            await send_frames(plain.base_url, token, frames, wait=0.3)

    run_async(scenario(), 300)
    text = plain.log_text(mark)
    assert not tracebacks(text), tracebacks(text)
    assert "ERROR" not in text and "[[[[" not in text
    lines = [line for line in text.splitlines() if REFUSED_LINE in line]
    assert 0 < len(lines) <= 2 * 20 and all(len(line) < 200 for line in lines)


def test_panel_serve_says_once_what_needs_sdpa_sim(plain: AppServer) -> None:
    assert plain.log_text().count(NEEDS_SDPA_SIM) == 1


@pytest.fixture
def fresh_plain(tmp_path: Path) -> Iterator[AppServer]:
    """``panel serve app/main.py`` that has served nothing yet."""
    port = free_port()
    log_path = tmp_path / "panel.log"
    command = [sys.executable, "-m", "panel", "serve", "app/main.py", "--port", str(port)]
    command += ["--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    server = AppServer(process, port, log_path)
    try:
        wait_for(lambda: "Bokeh app running at" in server.log_text(), 60, "panel serve")
        yield server
    finally:
        stop_server(server)


@pytest.mark.parametrize(
    "query", ["bokeh-absolute-url=http://evil.example/&d_k=8", "BOKEH-session-id=abc"]
)
def test_the_first_page_with_a_bokeh_parameter_is_not_built(
    fresh_plain: AppServer, query: str
) -> None:
    """Before any page, nothing of the app runs ahead of Bokeh: the first such request has
    its session built, but not the app, and Panel writes the app's refusal instead of the
    page (its 200, as Panel answers a session's own refusal)."""
    status, _, body = raw_get(fresh_plain.port, f"/main?{query}", _host(fresh_plain))
    assert status == 200 and REFUSED_TEXT.encode("utf-8") in body and b"evil.example" not in body
    status, _, body = raw_get(fresh_plain.port, f"/main?{query}", _host(fresh_plain))
    assert _refused(status, body)
    text = fresh_plain.log_text()
    assert not tracebacks(text) and text.count(NEEDS_SDPA_SIM) == 1, text[-2000:]
