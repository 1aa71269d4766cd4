"""What one student downloads: bytes on the wire for a first and a second visit.

Run it from the repository root, in the test environment (Chromium and Playwright)::

    python benchmarks/bench_wire.py            # about a minute
    python benchmarks/bench_wire.py --rounds 3

It starts ``sdpa-sim`` and, as the reference in the same run, plain ``panel serve app/main.py``
(what every response cost before ``sdpa-sim`` compressed them), each behind a small TCP proxy
that counts the bytes the server sends (HTTP and websockets alike, as they cross the
network: compressed or not). For the full page and the embedded one it opens the page in a
new browser context (a first visit: empty cache), waits until the heatmap is drawn and the
session idle, then opens it again in the same context (a second visit) and counts again.
Medians over ``--rounds``, in KiB, and what a class of 100 arriving at once means on a
50 Mbit/s link. The output is a markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from browser_support import CHROMIUM, CHROMIUM_ARGS, HEATMAP_DRAWN_JS, free_port  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

PAGES = {"full page `/main`": "/main", "embedded `?embed=true`": "/main?embed=true"}
CLASS = 100
LINK_MBIT = 50


class CountingProxy:
    """Forwards 127.0.0.1:``port`` to ``target`` and counts the bytes sent back."""

    def __init__(self, port: int, target: int) -> None:
        self.port = port
        self.target = target
        self.received = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", self.port))
        self._ready.set()
        self._loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, count: bool):
            try:
                while data := await source.read(65536):
                    if count:
                        self.received += len(data)
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                sink.close()

        await asyncio.gather(
            pipe(reader, upstream_writer, False), pipe(upstream_reader, writer, True)
        )


@contextmanager
def served(command: list[str], port: int) -> Iterator[None]:
    """Run ``command`` (a server on ``port``) until the block ends."""
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/favicon.ico", timeout=5)
                break
            except OSError:
                time.sleep(0.3)
        if process.poll() is not None:
            raise RuntimeError(f"{command[0]} exited with code {process.returncode}")
        yield
    finally:
        process.terminate()
        process.wait(20)


def visit(context, url: str, proxy: CountingProxy) -> int:
    """Bytes the server sent while ``url`` loaded in ``context`` until its heatmap was drawn
    and the session idle."""
    page = context.new_page()
    before = proxy.received
    page.goto(url)
    page.wait_for_function(HEATMAP_DRAWN_JS, timeout=120_000)
    page.wait_for_load_state("networkidle")
    sent = proxy.received - before
    page.close()
    return sent


def measure(rounds: int) -> dict[str, dict[str, list[int]]]:
    """Bytes per visit, by server, page and visit."""
    servers = {}
    bin_dir = Path(sys.executable).parent
    for index, name in enumerate(("sdpa-sim", "panel serve (reference)")):
        # Apart, as nothing listens on them until each server starts.
        port = free_port(range(5600 + 50 * index, 5650 + 50 * index))
        proxy_port = free_port(range(5700 + 50 * index, 5750 + 50 * index))
        origin = f"localhost:{proxy_port}"
        if name == "sdpa-sim":
            command = [str(bin_dir / "sdpa-sim"), "--port", str(port), "--address", "127.0.0.1"]
        else:
            command = [str(bin_dir / "panel"), "serve", "app/main.py", "--port", str(port)]
            command += ["--index", "main", "--plugins", "app.served.channel"]
        servers[name] = ([*command, "--allow-websocket-origin", origin], port, proxy_port)
    results: dict[str, dict[str, list[int]]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for name, (command, port, proxy_port) in servers.items():
            proxy = CountingProxy(proxy_port, port)
            with served(command, port):
                for label, path in PAGES.items():
                    url = f"http://localhost:{proxy_port}{path}"
                    for _ in range(rounds):
                        context = browser.new_context()
                        first = visit(context, url, proxy)
                        second = visit(context, url, proxy)
                        context.close()
                        row = results.setdefault(f"{name} | {label}", {"first": [], "second": []})
                        row["first"].append(first)
                        row["second"].append(second)
        browser.close()
    return results


def table(results: dict[str, dict[str, list[int]]]) -> str:
    """The markdown table of the medians."""
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "",
        f"| server | page | first visit KiB | second visit KiB | a class of {CLASS} on "
        f"{LINK_MBIT} Mbit/s, first visits |",
        "|---|---|---:|---:|---:|",
    ]
    for key, row in results.items():
        first = statistics.median(row["first"])
        second = statistics.median(row["second"])
        seconds = CLASS * first * 8 / (LINK_MBIT * 1e6)
        server, page = key.split(" | ")
        lines.append(
            f"| {server} | {page} | {first / 1024:,.0f} | {second / 1024:,.0f} | {seconds:.0f} s |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args(argv)
    print(table(measure(options.rounds)))


if __name__ == "__main__":
    main()
