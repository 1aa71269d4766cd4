"""One short, rate-limited log line for each websocket message a client got wrong.

Bokeh answers a message it cannot read or handle (text that is not JSON, a header without
``msgid``, a ``msgtype`` it does not know, content nested 100,000 deep, a buffer out of turn)
by closing that connection or with an ERROR message: the right answer to a hostile or broken
client. But it also logs each at ERROR level, most with a traceback and the whole message
(up to the websocket's size limit), so any client could fill the log at the speed it sends.

:class:`ClientMessageFilter`, a standard :class:`logging.Filter` on the loggers of Bokeh's
websocket handler, protocol handler and message parser, on Tornado's application logger
(the websocket's own uncaught errors) and on asyncio's (a websocket task's error nobody
retrieved), turns each such record into one WARNING line: what Bokeh said in its first
words and the exception's type, never the message or a traceback. Lines
beyond :data:`LINES_PER_WINDOW` in :data:`WINDOW_SECONDS` are dropped and counted, and the
next line let through says how many were. Records of other loggers, and Tornado's records
about pages, keep their traceback: a fault of the server must stay visible.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from traceback import extract_tb

CLIENT_MESSAGE_LOGGERS = (
    "bokeh.server.views.ws",
    "bokeh.server.protocol_handler",
    "bokeh.protocol",
)
"""Bokeh's websocket handler, the handler of each message and the message parser:
everything they log at WARNING or above is about one client's connection or message."""

TORNADO_APPLICATION_LOGGER = "tornado.application"
ASYNCIO_LOGGER = "asyncio"
WEBSOCKET_CODE = ("bokeh/server/views/ws.py", "bokeh/server/connection.py")
"""Where an error raised while serving a client's websocket passes: a task's exception that
nobody retrieved (the asyncio logger's) is about a client when its traceback does."""
WEBSOCKET_REQUEST = re.compile(r"^[A-Z]+ \S*/ws(?:[?\s]|$)")
"""The request summary Tornado puts first in an uncaught error's arguments, for a websocket
path (``GET /main/ws?d_k=8 (127.0.0.1)``)."""

OWN_PREFIX = "sdpa-sim:"
"""How this app's log lines start."""

LINES_PER_WINDOW = 20
WINDOW_SECONDS = 60.0
SHOWN_WORDS = 80
"""At most this many characters of Bokeh's own words (its format string, not its
arguments) are kept."""


def _words(record: logging.LogRecord) -> str:
    """The record's format string cut before its first placeholder or colon: Bokeh's words
    without the client's message (some records carry it formatted in already)."""
    text = re.split(r"[%:{\[\n]", str(record.msg), maxsplit=1)[0]
    return text.strip(" ,")[:SHOWN_WORDS] or "a client's message"


class ClientMessageFilter(logging.Filter):
    """Rewrites records about a client's websocket messages into rate-limited warnings (see
    the module); ``clock`` gives the time in seconds (``time.monotonic`` by default)."""

    def __init__(
        self,
        lines: int = LINES_PER_WINDOW,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """A filter letting at most ``lines`` lines through per ``window`` seconds."""
        super().__init__()
        self.lines = lines
        self.window = window
        self.clock = clock
        self._lock = threading.Lock()
        self._window_start = -float("inf")
        self._shown = 0
        self._dropped = 0

    @staticmethod
    def about_a_client(record: logging.LogRecord) -> bool:
        """Whether ``record`` is about a client's websocket message or connection."""
        if record.name in CLIENT_MESSAGE_LOGGERS:
            return record.levelno >= logging.WARNING
        if record.name == TORNADO_APPLICATION_LOGGER and isinstance(record.args, tuple):
            first = record.args[0] if record.args else None
            return isinstance(first, str) and bool(WEBSOCKET_REQUEST.match(first))
        if record.name == ASYNCIO_LOGGER and record.exc_info and record.exc_info[2]:
            files = (frame.filename.replace("\\", "/") for frame in extract_tb(record.exc_info[2]))
            return any(file.endswith(WEBSOCKET_CODE) for file in files)
        return False

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite a client's record in place and let it through if the rate allows;
        let every other record through unchanged."""
        if not self.about_a_client(record):
            return True
        error = record.exc_info[1] if record.exc_info else None
        words = _words(record)
        with self._lock:
            now = self.clock()
            if now - self._window_start >= self.window:
                self._window_start, self._shown = now, 0
            if self._shown >= self.lines:
                self._dropped += 1
                return False
            self._shown += 1
            dropped, self._dropped = self._dropped, 0
        more = f"; {dropped} more such lines were dropped" if dropped else ""
        if str(record.msg).startswith(OWN_PREFIX) and record.exc_info is None:
            # Already one line (app.compat's refused changes): only counted.
            if more:
                record.msg = f"{record.msg}%s"
                record.args = (*(record.args if isinstance(record.args, tuple) else ()), more)
            return True
        kind = f" ({type(error).__name__})" if error is not None else ""
        record.msg = OWN_PREFIX + " a websocket client's message was refused: %s%s%s"
        record.args = (words, kind, more)
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        if record.levelno > logging.WARNING:
            record.levelno = logging.WARNING
            record.levelname = logging.getLevelName(logging.WARNING)
        return True


def quiet_client_messages() -> ClientMessageFilter:
    """Install one :class:`ClientMessageFilter` on Bokeh's websocket loggers and Tornado's
    application logger (idempotent: the one already installed is returned)."""
    # app.compat's filter words a refused page change first; this one then counts it. Imported
    # here: it imports Panel, which a process configures its server before importing.
    from app.compat import quiet_refused_patches

    quiet_refused_patches()
    names = (*CLIENT_MESSAGE_LOGGERS, TORNADO_APPLICATION_LOGGER, ASYNCIO_LOGGER)
    for existing in logging.getLogger(names[0]).filters:
        if isinstance(existing, ClientMessageFilter):
            return existing
    shared = ClientMessageFilter()
    for name in names:
        logging.getLogger(name).addFilter(shared)
    return shared
