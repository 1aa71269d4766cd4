"""A client's malformed websocket messages cost one short, rate-limited WARNING line
(app/server/message_log.py), without a server: records as Bokeh and Tornado make them."""

from __future__ import annotations

import logging

import pytest

from app.server.message_log import LINES_PER_WINDOW, ClientMessageFilter, quiet_client_messages


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(name: str, msg: str, *args: object, error: BaseException | None = None):
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, exc_info)


HUGE = "[" * 100_000


@pytest.mark.parametrize(
    ("name", "msg", "args"),
    [
        ("bokeh.server.views.ws", "Unhandled exception receiving a message: %r: %r", (1, HUGE)),
        ("bokeh.server.views.ws", "Bokeh Server protocol error: %s, closing connection", (HUGE,)),
        ("bokeh.server.protocol_handler", "error handling message\n message: %r", (HUGE,)),
        ("bokeh.protocol", f"Bad header with no msgtype was: {HUGE}", ()),
        ("tornado.application", "Uncaught exception %s\n%r", ("GET /main/ws?d_k=8 (1)", HUGE)),
    ],
)
def test_a_clients_record_becomes_one_short_warning(name: str, msg: str, args: tuple) -> None:
    record = _record(name, msg, *args, error=KeyError("msgid"))
    assert ClientMessageFilter().filter(record)
    text = record.getMessage()
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert len(text) < 160 and "[[" not in text, text
    assert text.startswith("sdpa-sim: a websocket client's message was refused")


def test_other_records_keep_their_traceback() -> None:
    error = ValueError("the server's own fault")
    page = _record("tornado.application", "Uncaught exception %s", "GET /main (1)", error=error)
    other = _record("app.served.session", "boom", error=error)
    for record in (page, other):
        assert ClientMessageFilter().filter(record)
        assert record.levelno == logging.ERROR and record.exc_info is not None


def test_lines_beyond_the_rate_are_dropped_and_counted() -> None:
    clock = Clock()
    quiet = ClientMessageFilter(clock=clock)
    passed = [
        quiet.filter(_record("bokeh.server.views.ws", "Bokeh Server protocol error: %s", "x"))
        for _ in range(3 * LINES_PER_WINDOW)
    ]
    assert passed.count(True) == LINES_PER_WINDOW
    clock.now += 61
    record = _record("bokeh.server.views.ws", "Bokeh Server protocol error: %s", "x")
    assert quiet.filter(record)
    assert f"{2 * LINES_PER_WINDOW} more such lines were dropped" in record.getMessage()


def test_installing_twice_installs_one_filter() -> None:
    first = quiet_client_messages()
    assert quiet_client_messages() is first
    filters = logging.getLogger("bokeh.server.views.ws").filters
    assert sum(isinstance(f, ClientMessageFilter) for f in filters) == 1


def _raised_in(filename: str) -> BaseException:
    """An AssertionError whose traceback passes through ``filename``."""
    code = compile("assert False", filename, "exec")
    try:
        exec(code, {})
    except AssertionError as error:
        return error
    raise RuntimeError("unreachable")


def test_a_websocket_tasks_error_nobody_retrieved_is_one_line_too() -> None:
    """A client that never reads while it floods: Bokeh's connection asserts in a task."""
    error = _raised_in("/site-packages/bokeh/server/connection.py")
    record = logging.LogRecord(
        "asyncio", logging.ERROR, __file__, 1, "Task exception was never retrieved", (), None
    )
    record.exc_info = (type(error), error, error.__traceback__)
    assert ClientMessageFilter().filter(record)
    assert record.levelno == logging.WARNING and record.exc_info is None
    other = _raised_in("/work/app/served/session.py")
    mine = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "Task exception", (), None)
    mine.exc_info = (type(other), other, other.__traceback__)
    assert ClientMessageFilter().filter(mine) and mine.exc_info is not None
