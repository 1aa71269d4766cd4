"""Responses compressed on their way to the client (static files once per process), and
static files given a cache lifetime.

``panel serve`` sends every response as it is: BokehJS (1.27 MB), Panel's bundles and the
Material UI bundle reach each student uncompressed, about four times the bytes gzip leaves.
Tornado's own ``compress_response`` would compress each of them again for every student (tens
of milliseconds of CPU per page, a class at once). :class:`CompressingConnection` sits between
the application and the request's connection (app/server/guarded_http.py puts it there, in one
process and in each worker): a ``200`` of a text type over :data:`MIN_BYTES`, for a client that
accepts gzip, is compressed whole; a static file's (its ``ETag`` names its content) is
compressed the first time only and kept in :class:`CompressedCache`.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any

from tornado import httputil
from tornado.concurrent import Future

MIN_BYTES = 1024
"""Smaller bodies are sent as they are (gzip's header and the work cost more than they save)."""

LEVEL = 6
"""zlib's default level: within a few per cent of the best for these files, several times faster."""

CACHE_BYTES = 64 * 1024 * 1024
"""The most compressed static files a process keeps (Panel's and Bokeh's all fit in ~4 MB)."""

COMPRESSIBLE_TYPES = (
    "text/",
    "application/javascript",
    "application/x-javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
)
"""``Content-Type`` prefixes worth compressing (fonts and images are compressed already)."""


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value admits gzip (named or ``*``, without ``q=0``)."""
    for item in accept_encoding.lower().split(","):
        coding, _, parameters = item.partition(";")
        if coding.strip() not in ("gzip", "*"):
            continue
        quality = parameters.strip()
        if quality.startswith("q="):
            try:
                return float(quality[2:]) > 0
            except ValueError:
                return False
        return True
    return False


def compressible(headers: httputil.HTTPHeaders) -> bool:
    """Whether a response with ``headers`` is one to compress: a text type, not encoded yet."""
    content_type = headers.get("Content-Type", "").lower()
    return "Content-Encoding" not in headers and content_type.startswith(COMPRESSIBLE_TYPES)


def static_tag(headers: httputil.HTTPHeaders) -> str | None:
    """The ``ETag`` of a static file's response, or None: Tornado's static handlers send
    ``Last-Modified`` with it; any other handler's tag names one student's page."""
    tag = headers.get("Etag")
    return tag if tag and "Last-Modified" in headers else None


STATIC_LIFETIME_S = 24 * 3600
"""How long a browser may keep a static file whose address carries no version, without
asking again (a versioned one, ``?v=…``, gets Tornado's ten years): a class's next lesson
revalidates it with its ``ETag`` (a 304, no body) after a server's upgrade."""


CONTENT_ADDRESSED_LIFETIME_S = 365 * 24 * 3600
"""How long a browser may keep a file whose name carries the hash of its content (the served
page's bundle, app/page/bundle.py): a year, never revalidated, since new content is a new name."""


def give_cache_lifetime(
    status: int, headers: httputil.HTTPHeaders, *, content_addressed: bool = False
) -> None:
    """Give a static file's ``200`` that has no ``Cache-Control`` :data:`STATIC_LIFETIME_S`,
    or :data:`CONTENT_ADDRESSED_LIFETIME_S` (immutable) when its name carries its content's
    hash."""
    if status == 200 and static_tag(headers) and "Cache-Control" not in headers:
        if content_addressed:
            headers["Cache-Control"] = f"public, max-age={CONTENT_ADDRESSED_LIFETIME_S}, immutable"
        else:
            headers["Cache-Control"] = f"public, max-age={STATIC_LIFETIME_S}"


class CompressedCache:
    """Compressed static files by path and ``ETag``, the least recently used dropped first
    past :data:`CACHE_BYTES` (thread-safe: websockets' pages may be served from threads)."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> bytes | None:
        """The compressed body kept for ``key``, or None."""
        with self._lock:
            body = self._entries.get(key)
            if body is not None:
                self._entries.move_to_end(key)
            return body

    def put(self, key: tuple[str, str], body: bytes) -> None:
        """Keep ``body`` for ``key`` (not if it alone is over the limit)."""
        if len(body) > self.limit:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            self._size -= len(previous) if previous is not None else 0
            self._entries[key] = body
            self._size += len(body)
            while self._size > self.limit:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped)

    @property
    def size(self) -> int:
        """The bytes kept."""
        return self._size


def _done() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


class CompressingConnection(httputil.HTTPConnection):
    """A request's connection that compresses the response when it is worth it (see the
    module); anything else passes through unchanged."""

    def __init__(self, connection: httputil.HTTPConnection, cache: CompressedCache) -> None:
        self._connection = connection
        self._cache = cache
        self._path = ""
        self._wanted = False
        self._held: tuple[httputil.ResponseStartLine, httputil.HTTPHeaders] | None = None
        self._chunks: list[bytes] = []
        self._cached = False

    def request_received(self, method: str, path: str, headers: httputil.HTTPHeaders) -> None:
        """What the response may be compressed for: the request's method, path and
        ``Accept-Encoding``."""
        self._path = path
        self._wanted = method != "HEAD" and accepts_gzip(headers.get("Accept-Encoding", ""))

    def write_headers(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
        chunk: bytes | None = None,
    ) -> Awaitable[None]:
        """Write the head, or hold it (with ``chunk``) until the body is compressed."""
        is_ok = isinstance(start_line, httputil.ResponseStartLine) and start_line.code == 200
        if not (is_ok and compressible(headers)):
            return self._connection.write_headers(start_line, headers, chunk)
        headers.add("Vary", "Accept-Encoding")
        length = headers.get("Content-Length")
        small = length is not None and length.isdigit() and int(length) < MIN_BYTES
        if not self._wanted or small:
            return self._connection.write_headers(start_line, headers, chunk)
        assert isinstance(start_line, httputil.ResponseStartLine)
        tag = static_tag(headers)
        kept = self._cache.get((self._path, tag)) if tag else None
        if kept is not None:
            self._cached = True
            return self._connection.write_headers(start_line, self._encoded(headers, kept), kept)
        self._held = (start_line, headers)
        self._chunks = [chunk] if chunk else []
        return _done()

    def write(self, chunk: bytes) -> Awaitable[None]:
        """Write part of the body, or keep it to compress with the rest."""
        if self._cached:
            return _done()
        if self._held is not None:
            self._chunks.append(chunk)
            return _done()
        return self._connection.write(chunk)

    def finish(self) -> None:
        """Write what was held, compressed if it is worth it, and finish."""
        if self._held is not None:
            start_line, headers = self._held
            self._held = None
            body = b"".join(self._chunks)
            self._chunks = []
            if len(body) < MIN_BYTES:
                headers["Content-Length"] = str(len(body))
                self._connection.write_headers(start_line, headers, body)
            else:
                compressed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
                tag = static_tag(headers)
                if tag:
                    self._cache.put((self._path, tag), compressed)
                self._connection.write_headers(
                    start_line, self._encoded(headers, compressed), compressed
                )
        self._connection.finish()

    @staticmethod
    def _encoded(headers: httputil.HTTPHeaders, body: bytes) -> httputil.HTTPHeaders:
        headers["Content-Encoding"] = "gzip"
        headers["Content-Length"] = str(len(body))
        return headers

    def __getattr__(self, name: str) -> Any:
        # Everything else (detach for websockets, the close callback, the stream and the
        # context the request reads) is the real connection's.
        return getattr(self._connection, name)
