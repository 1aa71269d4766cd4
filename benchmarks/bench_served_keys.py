"""Benchmark of the served page on loopback: keydown → first frame with the new heatmap.

Issue 46's served target: median ≤ 20 ms at n = 32. Measured as bench_offline_keys.py
measures the exported file (benchmarks/key_frames.py: a capture-phase keydown, then the
first animation frame after the heatmap's ColumnDataSource got its new data), here with the
numbers computed by the session's server and sent over loopback. One tab per server, keys
on the d_k and temperature sliders with the keyboard, in interleaved rounds.

Without ``--servers`` it starts ``sdpa-sim`` from this tree on a port of 5600–5800. To
compare commits, start each commit's own server from its own tree and pass the pages::

    git worktree add /tmp/ref-883d946 883d946
    (cd /tmp/ref-883d946 && PYTHONPATH=. python -m app.cli --port 5603 --address 127.0.0.1 &)
    python -m app.server.cli --port 5601 --address 127.0.0.1 &
    python benchmarks/bench_served_keys.py \\
        --servers new=http://127.0.0.1:5601/ 883d946=http://127.0.0.1:5603/
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
from key_frames import add_round_options, launch, open_tab, print_results, run_rounds  # noqa: E402

PORTS = range(5600, 5801)
"""Ports this benchmark may serve on when it starts its own server."""


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError("no free port in 5600–5800")


@contextlib.contextmanager
def _own_server() -> Iterator[str]:
    """``sdpa-sim`` from this tree on loopback for a ``with`` block; its page's address."""
    port = _free_port()
    command = [sys.executable, "-m", "app.server.cli", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--address", "127.0.0.1"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=5):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sdpa-sim did not answer on {url}")
            time.sleep(0.5)  # polling a starting server: nothing to wait on but its port
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    """Serve (or take ``--servers NAME=URL``), measure and print the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", nargs="+", metavar="NAME=URL", help="pages to compare")
    parser.add_argument("--n", type=int, default=32, help="sequence length (32)")
    add_round_options(parser)
    options = parser.parse_args()
    load = os.getloadavg()[0]
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        if options.servers:
            servers = dict(entry.split("=", 1) for entry in options.servers)
        else:
            servers = {"this tree": stack.enter_context(_own_server())}
        playwright = stack.enter_context(sync_playwright())
        browser = launch(playwright)
        n = options.n
        tabs = [open_tab(browser, name, n, f"{url}?n={n}") for name, url in servers.items()]
        results = run_rounds(tabs, options.rounds, options.presses)
        browser.close()
    print_results(results, load, options.samples)


if __name__ == "__main__":
    main()
