"""Responses compressed on their way to the client, static files once per process, and
static files' cache lifetime (app/server/compression.py), behind the guarded server in this
process with Tornado's own static file handler."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from procs_support import free_port, run_async
from tornado.httpclient import AsyncHTTPClient
from tornado.web import Application, RequestHandler, StaticFileHandler

from app.server.compression import (
    MIN_BYTES,
    STATIC_LIFETIME_S,
    CompressedCache,
    accepts_gzip,
)
from app.server.guarded_http import GuardedHTTPServer
from app.server.mounted_routes import handler_name


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("gzip, deflate, br", True),
        ("GZIP", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0", False),
        ("gzip;q=x", False),
        ("*", True),
        ("identity", False),
        ("", False),
        ("x-gzip-not", False),
    ],
)
def test_accept_encoding_is_read_with_its_qualities(value: str, accepted: bool) -> None:
    assert accepts_gzip(value) is accepted


def test_the_cache_drops_the_least_recently_used_past_its_limit() -> None:
    cache = CompressedCache(limit=10)
    cache.put(("a", "1"), b"aaaa")
    cache.put(("b", "1"), b"bbbb")
    assert cache.get(("a", "1")) == b"aaaa"  # now the most recent
    cache.put(("c", "1"), b"cccc")
    assert cache.get(("b", "1")) is None and cache.get(("a", "1")) == b"aaaa"
    assert cache.size == 8
    cache.put(("huge", "1"), b"x" * 11)
    assert cache.get(("huge", "1")) is None and cache.size == 8


class Dynamic(RequestHandler):
    """A page: text made per request."""

    def get(self) -> None:
        """Long text, or a short one with ``?short``."""
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.write("<p>short</p>" if self.get_argument("short", None) else "<p>page</p>" * 500)


@pytest.fixture
def static_dir(tmp_path: Path) -> Path:
    (tmp_path / "big.js").write_text("function f() { return 1; }\n" * 2000)
    (tmp_path / "small.js").write_text("let x = 1;\n")
    (tmp_path / "font.woff2").write_bytes(bytes(range(256)) * 40)
    return tmp_path


def _fetch_all(static_dir: Path, requests: list[tuple[str, dict[str, str], str]]) -> tuple:
    async def scenario() -> tuple[list, int]:
        port = free_port()
        app = Application(
            [(r"/static/(.*)", StaticFileHandler, {"path": str(static_dir)}), (r"/page", Dynamic)]
        )
        known = [handler_name(StaticFileHandler), handler_name(Dynamic)]
        server = GuardedHTTPServer(app, known_handlers=known)
        server.listen(port, "127.0.0.1")
        client = AsyncHTTPClient(force_instance=True)
        answers = []
        try:
            for path, headers, method in requests:
                answer = await client.fetch(
                    f"http://127.0.0.1:{port}{path}",
                    method=method,
                    headers=headers,
                    decompress_response=False,
                    raise_error=False,
                )
                answers.append(answer)
            return answers, server.compressed.size
        finally:
            client.close()
            server.stop()

    return run_async(scenario(), 60)


GZIP = {"Accept-Encoding": "gzip"}


def test_a_static_file_is_compressed_once_and_served_whole(static_dir: Path) -> None:
    original = (static_dir / "big.js").read_bytes()
    answers, kept = _fetch_all(
        static_dir,
        [
            ("/static/big.js", GZIP, "GET"),
            ("/static/big.js", GZIP, "GET"),
            ("/static/big.js", {}, "GET"),
            ("/static/big.js", GZIP, "HEAD"),
        ],
    )
    first, second, plain, head = answers
    for answer in (first, second):
        assert answer.code == 200 and answer.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(answer.body) == original
        assert int(answer.headers["Content-Length"]) == len(answer.body) < len(original) // 5
        assert "Accept-Encoding" in answer.headers.get_list("Vary")
    assert second.body == first.body and kept == len(first.body)
    assert plain.body == original and "Content-Encoding" not in plain.headers
    assert "Content-Encoding" not in head.headers and head.body == b""
    # Its address carries no version: a day, then revalidated with its ETag.
    assert first.headers["Cache-Control"] == f"public, max-age={STATIC_LIFETIME_S}"


def test_what_is_not_worth_compressing_passes_unchanged(static_dir: Path) -> None:
    tag_answers, _ = _fetch_all(static_dir, [("/static/big.js", GZIP, "GET")])
    tag = tag_answers[0].headers["Etag"]
    answers, kept = _fetch_all(
        static_dir,
        [
            ("/static/small.js", GZIP, "GET"),
            ("/static/font.woff2", GZIP, "GET"),
            ("/static/big.js", {**GZIP, "Range": "bytes=0-99"}, "GET"),
            ("/static/big.js", {**GZIP, "If-None-Match": tag}, "GET"),
            ("/static/big.js?v=abc", {}, "GET"),
        ],
    )
    small, font, part, unchanged, versioned = answers
    assert small.code == 200 and "Content-Encoding" not in small.headers
    assert len(small.body) < MIN_BYTES
    assert font.code == 200 and font.body == (static_dir / "font.woff2").read_bytes()
    assert "Content-Encoding" not in font.headers
    assert part.code == 206 and len(part.body) == 100 and "Content-Encoding" not in part.headers
    assert unchanged.code == 304 and unchanged.body == b""
    # Tornado's own lifetime for a versioned address stays.
    assert "max-age=315360000" in versioned.headers["Cache-Control"]
    assert kept == 0


def test_a_page_is_compressed_for_each_request_and_not_kept(static_dir: Path) -> None:
    answers, kept = _fetch_all(
        static_dir,
        [("/page", GZIP, "GET"), ("/page?short=1", GZIP, "GET"), ("/page", {}, "GET")],
    )
    page, short, plain = answers
    assert page.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(page.body) == b"<p>page</p>" * 500
    assert "Content-Encoding" not in short.headers and short.body == b"<p>short</p>"
    assert plain.body == b"<p>page</p>" * 500
    assert "Cache-Control" not in page.headers
    assert kept == 0
