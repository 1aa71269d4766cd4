"""Memory of one served process while clients send huge ``Location.href`` values.

Starts ``sdpa-sim`` (one process) or ``panel serve app/main.py`` on a free port, opens
``--sessions`` pages with the protocol client, and on each sends one PATCH-DOC changing the
page's ``Location.href`` to ``--megabytes`` MB of text, then closes it. Prints the server's
resident memory (``VmRSS``) before, the highest seen while they arrive (``VmHWM``), and
once the sessions are gone (Bokeh discards an unused session after about 15–35 s)::

    .venv-3.13/bin/python benchmarks/bench_big_messages.py --sessions 8 --megabytes 19
    .venv-3.13/bin/python benchmarks/bench_big_messages.py --plain   # panel serve app/main.py
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from procs_support import free_port, http_status, wait_for  # noqa: E402
from protocol_client import LOCATION_TYPE, ProtocolError, ProtocolSession  # noqa: E402


def memory_mib(pid: int) -> dict[str, float]:
    """The process's ``VmRSS`` and ``VmHWM`` in MiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) / 1024
    return values


async def send_huge_href(url: str, size: int) -> str:
    """Open a page, send its Location a ``size``-character href, close; what happened."""
    session = ProtocolSession(url, echo=False)
    await session.open()
    location = next(session.index.find(lambda record: record.type == LOCATION_TYPE))
    href = "http://localhost/main?x=" + "a" * size
    event = {"kind": "ModelChanged", "model": {"id": location.id}, "attr": "href", "new": href}
    try:
        await session.send_events([event])
        await asyncio.sleep(1)
        outcome = "closed by the server" if session.closed else "kept open"
    except ProtocolError as error:
        outcome = f"refused: {error}"
    await session.close()
    return outcome


def _answers(url: str) -> bool:
    try:
        return http_status(url, timeout=5) == 200
    except OSError:
        return False


def main() -> None:
    """Run the measurement the options describe and print it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--megabytes", type=float, default=19)
    parser.add_argument("--plain", action="store_true", help="plain panel serve app/main.py")
    parser.add_argument("--settle", type=float, default=60, help="seconds to wait after")
    options = parser.parse_args()
    port = free_port()
    bin_dir = Path(sys.executable).parent
    if options.plain:
        command = [str(bin_dir / "panel"), "serve", str(ROOT / "app/main.py"), "--port", str(port)]
    else:
        command = [str(bin_dir / "sdpa-sim"), "--port", str(port), "--address", "127.0.0.1"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://localhost:{port}/main"
        wait_for(lambda: _answers(url), 120, "the server to answer")
        before = memory_mib(server.pid)["VmRSS"]
        size = int(options.megabytes * 1e6)
        outcomes = [asyncio.run(send_huge_href(url, size)) for _ in range(options.sessions)]
        during = memory_mib(server.pid)
        time.sleep(options.settle)
        after = memory_mib(server.pid)["VmRSS"]
        print(f"{' '.join(command[:2])}: {options.sessions} x {options.megabytes} MB href")
        print(f"  outcomes: {sorted(set(outcomes))}")
        print(
            f"  RSS before {before:.0f} MiB, after sending {during['VmRSS']:.0f} MiB, "
            f"peak {during['VmHWM']:.0f} MiB, {options.settle:.0f} s later {after:.0f} MiB"
        )
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
