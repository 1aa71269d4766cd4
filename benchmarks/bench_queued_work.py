"""Another student's moves while one page asks for CSV files again and again (issue 45).

Starts ``sdpa-sim`` (one process) from this tree and, with ``--before REV``, from that
commit's tree too (``git archive``, served with the same interpreter), and on each:

1. opens a student's page at ``--n`` (512: its refreshes run in the refresh pool) and times
   ``--moves`` moves of d_k alone, one after the other (sent → the heatmap's frame);
2. opens a flooding page at ``--flood-n`` (1024) with its assumptions section, connects its
   channel and sends ``--downloads`` matrix downloads on it without ever reading (with
   ``--kind resample``, as many Resample presses: each a seed never drawn, whose tables
   take ~0.5 s);
3. times the student's moves again, one after the other, for ``--seconds`` after the flood
   was sent (a count of moves would hide the flood: before the gate one move waited ~16 s
   for it and the next were quick once it had been written).

Prints each series' median, 90th percentile and longest move, the flood's ratio to the
quiet series, how many moves the student made in the window, and the server's resident
memory (``VmRSS``) with the student alone, once the flooding page is open (before its
presses), at the window's end and at its highest (``VmHWM``)::

    .venv-3.11/bin/python benchmarks/bench_queued_work.py --before 3a434bd
    .venv-3.11/bin/python benchmarks/bench_queued_work.py --moves 30 --downloads 16
    .venv-3.11/bin/python benchmarks/bench_queued_work.py --kind resample --downloads 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bench_big_messages import memory_mib  # noqa: E402
from procs_support import PANEL_SERVING, free_port, wait_for  # noqa: E402
from protocol_client import (  # noqa: E402
    ProtocolSession,
    SliderWalk,
    channel_url,
    open_lesson,
    page_url,
)

TIMEOUT = 300.0
"""Seconds any one wait may take: a move behind a flood took 26–35 s before the gate."""


def serve(tree: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """``sdpa-sim`` (one process) from ``tree``; the process and its page's address."""
    port = free_port()
    command = [sys.executable, "-m", "app.server.cli", "--port", str(port)]
    command += ["--address", "127.0.0.1"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        # From ``tree``: ``-m`` puts the working directory first on the path.
        server = subprocess.Popen(command, cwd=tree, stdout=out, stderr=subprocess.STDOUT, env=env)
    wait_for(lambda: PANEL_SERVING.search(log.read_text(errors="replace")), 120, "the server")
    return server, f"http://127.0.0.1:{port}/main"


async def timed_moves(
    page: ProtocolSession, walk: SliderWalk, count: int, until: float = math.inf
) -> list[float]:
    """Seconds from each of ``count`` d_k moves (or as many as start before ``until``, on
    ``time.monotonic()``), one after the other, to its frame."""
    times: list[float] = []
    while len(times) < count and time.monotonic() < until:
        move = await page.move(walk.slider, walk.next())
        await page.wait_for(lambda move=move: move.answered is not None, "a frame", TIMEOUT)
        times.append(move.answered - move.sent)
    return times


PRESSES = {
    "downloads": {"to": "lesson", "msg": {"assumptions": {"download": "matrix"}}},
    "resample": {"to": "controls", "msg": {"name": "resample", "value": True}},
}
"""What the flooding page sends, by ``--kind``."""


async def flood(
    url: str, downloads: int, pid: int, kind: str = "downloads"
) -> tuple[ProtocolSession, object, float]:
    """A page at ``url`` with its assumptions section open, whose channel was sent
    ``downloads`` presses of ``kind`` and is never read (close both), and the server's RSS
    once the page was open, before its presses."""
    page = ProtocolSession(url, timeout=TIMEOUT, channel=False)
    await page.open()
    await page.send_document_ready()
    await open_lesson(page)
    await page.open_sections("assumptions")

    def built() -> bool:
        sent = [json.dumps(data) for data in page.index.messages.values()]
        return any("readouts" in text for text in sent)

    await page.wait_for(built, "the assumptions section")
    address = channel_url(url, page.index.channel_key())
    channel = await websocket_connect(HTTPRequest(address, headers={"Origin": page.origin}))
    opened = memory_mib(pid)["VmRSS"]
    press = json.dumps(PRESSES[kind])
    for _ in range(downloads):
        await channel.write_message(press)
    return page, channel, opened


def percentiles(times: list[float]) -> tuple[float, float, float]:
    """The median, the 90th percentile and the longest of ``times``, in milliseconds."""
    ordered = sorted(times)
    p90 = ordered[round(0.9 * (len(ordered) - 1))]
    return 1e3 * statistics.median(ordered), 1e3 * p90, 1e3 * ordered[-1]


async def measure(url: str, pid: int, options: argparse.Namespace) -> dict:
    """The quiet and flooded series of one server, and its memory."""
    student = ProtocolSession(page_url(url, n=options.n, d_k=64), timeout=TIMEOUT)
    await student.open()
    await student.send_document_ready()
    walk = SliderWalk.around(student.index.slider("d_k"), 4, 6)
    await timed_moves(student, walk, 3)  # the caches of the positions walked
    quiet = await timed_moves(student, walk, options.moves)
    before = memory_mib(pid)["VmRSS"]
    sent = time.monotonic()
    address = page_url(url, n=options.flood_n, d_k=64)
    flooder, channel, opened = await flood(address, options.downloads, pid, options.kind)
    flooded = await timed_moves(student, walk, 10**6, sent + options.seconds)
    after = memory_mib(pid)
    channel.close()
    await flooder.close()
    await student.close()
    memory = (before, opened, after["VmRSS"], after["VmHWM"])
    return {"quiet": quiet, "flooded": flooded, "rss": memory}


def report(name: str, result: dict) -> None:
    """Print one server's series."""
    quiet, flooded = percentiles(result["quiet"]), percentiles(result["flooded"])
    before, opened, after, peak = result["rss"]
    print(f"{name}:")
    for label, (median, p90, most), count in (
        ("alone", quiet, len(result["quiet"])),
        ("beside flood", flooded, len(result["flooded"])),
    ):
        print(
            f"  {label + ':':14}median {median:7.0f} ms   p90 {p90:7.0f} ms   "
            f"max {most:7.0f} ms   ({count} moves)"
        )
    ratios = [late / alone for late, alone in zip(flooded, quiet, strict=True)]
    print("  ratio:        median {:7.1f}      p90 {:7.1f}      max {:7.1f}".format(*ratios))
    print(
        f"  RSS: {before:.0f} MiB alone, {opened:.0f} with the flooding page open, "
        f"{after:.0f} at the window's end, {peak:.0f} at most"
    )


def main() -> None:
    """Run the measurement the options describe and print it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512, help="the timed student's n")
    parser.add_argument("--flood-n", type=int, default=1024, help="the flooding page's n")
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--downloads", type=int, default=8, help="how many presses")
    parser.add_argument("--kind", choices=sorted(PRESSES), default="downloads")
    parser.add_argument("--seconds", type=float, default=30, help="the flooded window")
    parser.add_argument("--before", help="a commit to measure too (the behaviour before)")
    options = parser.parse_args()
    trees = {"this tree": ROOT}
    with tempfile.TemporaryDirectory(prefix="bench-queued-") as scratch:
        if options.before:
            old = Path(scratch) / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", options.before],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            trees = {f"before ({options.before})": old, **trees}
        results = {}
        for name, tree in trees.items():
            server, url = serve(tree, Path(scratch) / f"{len(results)}.log")
            try:
                results[name] = asyncio.run(measure(url, server.pid, options))
            finally:
                server.terminate()
                server.wait(timeout=60)
    print(
        f"d_k moves of a student at n = {options.n}, alone and beside a page at "
        f"n = {options.flood_n} that sent {options.downloads} {options.kind} presses unread "
        f"(moves made for {options.seconds:g} s after it sent them):"
    )
    for name, result in results.items():
        report(name, result)
    if len(results) == 2:
        (old, new) = results.values()
        before, after = percentiles(old["flooded"]), percentiles(new["flooded"])
        ratios = [was / now for was, now in zip(before, after, strict=True)]
        print(
            "beside the flood, before / this tree: median {:.1f}×, p90 {:.1f}×, max {:.1f}×".format(
                *ratios
            )
        )


if __name__ == "__main__":
    main()
