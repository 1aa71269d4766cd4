"""Class mode under a class: how fast a presenter's scene reaches every student's page.

One presenter and ``--students`` students, all protocol-level clients
(``tests/protocol_client.py``) on one ``sdpa-sim`` started here with a presenter key. Each
round the presenter moves d_k (its own move's latency is measured as in bench_class.py),
then either presses **Send my scene** (``--mode send``) or, with **Students follow me** on
(``--mode live``), just moves. For every student the latency is the time from the
presenter's send (the press, or the move itself when live) to the arrival of the student's
new heatmap numbers. Run it from the repository root::

    python benchmarks/bench_class_mode.py --students 100 --rounds 20
    python benchmarks/bench_class_mode.py --students 100 --rounds 20 --mode live

Targets (issue 28): a presenter's move reaches 95 % of the pages within 250 ms and 99 %
within 500 ms; the presenter's own move p95 stays within 150 ms. The clients share the
machine (and, here, one event loop) with the server: their own delay is in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_class import percentile, start_server, stop_server
from protocol_client import ProtocolError, ProtocolSession, SliderWalk

KEY = "bench-class-mode-presenter"
CLASS_BAR_TYPE = "ClassBar"
"""Start of the type name of the class bar's data model (app/served/components/class_bar.py)."""


async def arrive(url: str, timeout: float) -> ProtocolSession:
    """One page, opened and ready (its onload has run: it is in the class)."""
    session = ProtocolSession(url, timeout=timeout)
    await session.open()
    await session.send_document_ready()
    return session


async def class_bar_id(session: ProtocolSession, timeout: float) -> str:
    """The id of the class bar's data model once the page holds it."""

    def bar() -> str | None:
        found = next(session.index.find(lambda r: r.type.startswith(CLASS_BAR_TYPE)), None)
        return found.id if found is not None else None

    await session.wait_for(lambda: bar() is not None, "the class bar", timeout)
    found = bar()
    assert found is not None
    return found


async def set_bar(session: ProtocolSession, bar: str, attribute: str, value: object) -> float:
    """Set the bar's ``attribute`` as its page does; return when it was sent."""
    await session.send_events(
        [{"kind": "ModelChanged", "model": {"id": bar}, "attr": attribute, "new": value}]
    )
    return time.monotonic()


async def reached(
    students: list[ProtocolSession], counts: list[int], sent: float, timeout: float
) -> list[float | None]:
    """Each student's latency from ``sent`` to its next heatmap frame (None if none came)."""

    async def one(student: ProtocolSession, before: int) -> float | None:
        try:
            await student.wait_for(lambda: len(student.heatmap_times) > before, "scene", timeout)
        except ProtocolError:
            return None
        return student.heatmap_times[before] - sent

    return await asyncio.gather(*(one(s, c) for s, c in zip(students, counts, strict=True)))


async def run(args: argparse.Namespace, url: str) -> dict[str, list]:
    """Open the class, run the rounds; every latency measured."""
    presenter = await arrive(f"{url}?present={KEY}", args.timeout)
    bar = await class_bar_id(presenter, args.timeout)
    students: list[ProtocolSession] = []
    for start in range(0, args.students, args.batch):
        students += await asyncio.gather(
            *(
                arrive(url, args.timeout)
                for _ in range(start, min(args.students, start + args.batch))
            )
        )
    slider = presenter.index.slider("d_k")
    walk = SliderWalk.around(slider, slider.position(64), 4)
    if args.mode == "live":
        await set_bar(presenter, bar, "live", True)
        await asyncio.sleep(1.0)  # the first live scene (sent on going live) settles
    scenes: list[float | None] = []
    own: list[float] = []
    presses = 0
    for _ in range(args.rounds):
        counts = [len(s.heatmap_times) for s in students]
        move = await presenter.move(slider, walk.next())
        if args.mode == "live":
            sent = move.sent or time.monotonic()
        else:
            await presenter.wait_answered(timeout=args.timeout)
            counts = [len(s.heatmap_times) for s in students]
            presses += 1
            sent = await set_bar(presenter, bar, "send_presses", presses)
        scenes += await reached(students, counts, sent, args.timeout)
        await presenter.wait_answered(timeout=args.timeout)
        if move.latency is not None:
            own.append(move.latency)
        await asyncio.sleep(args.pause)
    for session in [presenter, *students]:
        await session.close()
    return {"scenes": scenes, "own": own}


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, start the server, measure, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100, help="students (100)")
    parser.add_argument("--rounds", type=int, default=20, help="scenes sent (20)")
    parser.add_argument("--mode", choices=["send", "live"], default="send", help="(send)")
    parser.add_argument("--batch", type=int, default=10, help="students arriving at once (10)")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between rounds (0.5)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per wait (30)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        log_path = Path(folder) / "server.log"
        server = start_server(None, log_path, ["--presenter-key", KEY])
        try:
            started = time.monotonic()
            results = asyncio.run(run(args, server.url))
            took = time.monotonic() - started
            errors = server.log_errors()
        finally:
            stop_server(server)
    scenes = results["scenes"]
    arrived = [value for value in scenes if value is not None]
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{platform.python_version()}, {os.cpu_count()} cores, load average {load}")
    print(
        f"{args.students} students, {args.rounds} rounds, --mode {args.mode}, {took:.0f} s; "
        f"server errors: {len(errors)}"
    )
    print("| scene → student's heatmap | p50 | p95 | p99 | max | never arrived |")
    print("|---|---:|---:|---:|---:|---:|")
    figures = [percentile(arrived, q) for q in (50, 95, 99)] + [max(arrived, default=None)]
    shown = " | ".join("–" if value is None else f"{value * 1000:.0f} ms" for value in figures)
    print(f"| {len(scenes)} deliveries | {shown} | {len(scenes) - len(arrived)} |")
    own = results["own"]
    if own:
        print(
            f"presenter's own move: p50 {statistics.median(own) * 1000:.0f} ms, "
            f"p95 {percentile(own, 95) * 1000:.0f} ms"
        )
    for line in errors[:5]:
        print(line, file=sys.stderr)


if __name__ == "__main__":
    main()
