"""Measure ``sdpa-sim --num-procs 2`` against one process: what the front costs.

    .venv-3.13/bin/python tests/server/measure_front.py [--sessions 30] [--burst 30]

Starts plain ``sdpa-sim`` (one process, no front, port 5290) and then ``sdpa-sim
--num-procs 2`` (the first free port from 5200), one at a time, and for each:
``--sessions`` sequential sessions (page, websocket, document, ``document_ready``, first
update, as :func:`procs_support.session_async` makes them), new connections for a small
file, one connection downloading BokehJS many times, and ``--burst`` sessions arriving at
once. Prints CPU seconds per process from /proc and the clients' timings. Not a test:
pytest does not collect it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# After the path: tests/ holds procs_support.
from procs_support import (
    REPO,
    cpu_seconds,
    http_status,
    sdpa_sim_command,
    session_async,
    start_front,
    stop_front,
    wait_for,
)

PORT_ONE = 5290
"""Plain sdpa-sim's port; the front takes the first free one from 5200."""


def quantiles(values: list[float]) -> str:
    """Median, p95 and max of ``values`` in seconds, as milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(ordered) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, "
        f"max {ordered[-1] * 1e3:.0f} ms"
    )


def cpu(pids: list[int]) -> list[float]:
    """CPU seconds each of ``pids`` has used."""
    return [cpu_seconds(pid) for pid in pids]


def sequential(base_url: str, count: int) -> list[dict[str, Any]]:
    """``count`` sessions, one after the other."""

    async def run() -> list[dict[str, Any]]:
        return [await session_async(base_url, timeout=120) for _ in range(count)]

    return asyncio.run(run())


def burst(base_url: str, count: int) -> list[dict[str, Any]]:
    """``count`` sessions started at the same moment."""

    async def run() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(*(session_async(base_url, timeout=300) for _ in range(count)))
        )

    return asyncio.run(run())


def connections(port: int, count: int) -> float:
    """Open ``count`` connections, each asking for /favicon.ico; seconds per connection."""
    request = b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    started = time.perf_counter()
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(request)
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:80]
    return (time.perf_counter() - started) / count


def download(port: int, count: int) -> int:
    """Fetch BokehJS ``count`` times over one keep-alive connection; bytes received."""
    request = b"GET /static/js/bokeh.min.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    total = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        reader = client.makefile("rb")
        for _ in range(count):
            client.sendall(request)
            length = None
            while line := reader.readline():
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            total += len(reader.read(length))
    return total


def measure(
    name: str,
    port: int,
    server_pids: list[int],
    front_pid: int | None,
    options: argparse.Namespace,
) -> None:
    """Run every measurement against the server on ``port`` and print them."""
    base_url = f"http://127.0.0.1:{port}"
    watched = ([front_pid] if front_pid else []) + server_pids
    labels = (["front"] if front_pid else []) + [f"server {pid}" for pid in server_pids]

    def report(what: str, before: list[float], per: int, unit: str) -> None:
        after = cpu(watched)
        parts = [
            f"{label} {(b - a) / per * 1e3:.2f} ms"
            for label, a, b in zip(labels, before, after, strict=True)
        ]
        print(f"  CPU per {unit} ({what}): " + ", ".join(parts))

    print(f"{name}:")
    # Warm-up: the first session of each process imports and fills caches.
    sequential(base_url, 2 * len(server_pids))
    before = cpu(watched)
    sessions = sequential(base_url, options.sessions)
    assert all(session["status"] == 101 for session in sessions)
    print(
        f"  {options.sessions} sequential sessions: page {quantiles([s['page'] for s in sessions])}"
        f"; document {quantiles([s['document'] for s in sessions])}"
        f"; first update {quantiles([s['update'] for s in sessions])}"
    )
    report("sequential sessions", before, options.sessions, "session")

    before = cpu(watched)
    per_connection = connections(port, options.connections)
    print(
        f"  {options.connections} connections for /favicon.ico: {per_connection * 1e3:.2f} ms each"
    )
    report("favicon connections", before, options.connections, "connection")

    before = cpu(watched)
    moved = download(port, options.downloads)
    mib = moved / 2**20
    print(f"  one connection, BokehJS {options.downloads} times: {mib:.0f} MiB")
    report(f"{mib:.0f} MiB on one connection", before, max(1, round(mib)), "MiB")

    before = cpu(watched)
    started = time.perf_counter()
    arrivals = burst(base_url, options.burst)
    elapsed = time.perf_counter() - started
    assert all(session["status"] == 101 for session in arrivals)
    print(
        f"  {options.burst} sessions at once ({elapsed:.1f} s): "
        f"page {quantiles([s['page'] for s in arrivals])}; "
        f"document {quantiles([s['document'] for s in arrivals])}"
    )
    report("burst", before, options.burst, "session")


def start_one(log_path: Path) -> subprocess.Popen[bytes]:
    """Plain ``sdpa-sim`` on :data:`PORT_ONE`, once it answers."""
    command = [*sdpa_sim_command(), "--port", str(PORT_ONE), "--address", "127.0.0.1"]
    command += ["--allow-websocket-origin", f"127.0.0.1:{PORT_ONE}"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)

    def probe() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"sdpa-sim exited:\n{log_path.read_text()}")
        try:
            return http_status(f"http://127.0.0.1:{PORT_ONE}/favicon.ico", timeout=5) == 200
        except OSError:
            return False

    wait_for(probe, 120, "sdpa-sim to answer", log_path.read_text)
    return process


def main() -> None:
    """Measure one process, then the front with two workers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--burst", type=int, default=30)
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--downloads", type=int, default=40)
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp"))
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")

    one = start_one(options.log_dir / "measure-one.log")
    try:
        measure("one process (sdpa-sim, no front)", PORT_ONE, [one.pid], None, options)
    finally:
        one.terminate()
        one.wait(timeout=30)

    front = start_front(options.log_dir / "measure-front.log", workers=2)
    try:
        pids = front.worker_pids()
        measure(
            "sdpa-sim --num-procs 2 (front + 2 workers)",
            front.port,
            pids,
            front.process.pid,
            options,
        )
        rss = Path(f"/proc/{front.process.pid}/status").read_text()
        print("  front " + next(line for line in rss.splitlines() if line.startswith("VmRSS")))
    finally:
        stop_front(front)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
