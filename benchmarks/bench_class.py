"""Class-load benchmark: a class of students on one server, without browsers.

Each student is a protocol-level client (``tests/protocol_client.py``): it requests the
page, opens its websocket, pulls the document, replays what a painted page sends back,
sends ``document_ready``, opens the lesson (``--lesson-fraction`` of them), then moves the
d_k and temperature sliders at ``--rate`` moves per second for ``--duration`` seconds:
arriving at once, the class starts moving together once everyone has arrived (so arrivals
and moves are measured apart); with ``--ramp``, each student as soon as it has arrived (so
arrivals show in the moves of those already working). The server builds and updates each
session exactly as for Chromium. Run it from the repository root::

    python benchmarks/bench_class.py --students 30            # starts its own server
    python benchmarks/bench_class.py --students 50 --ramp 30  # arriving over 30 s
    python benchmarks/bench_class.py --students 30 --flood    # plus one student flooding
    python benchmarks/bench_class.py --students 0 --churn 20 10
    python benchmarks/bench_class.py --url http://127.0.0.1:8080/main --students 50

Without ``--url`` it starts ``sdpa-sim --port P --address 127.0.0.1`` on a free port in
5400–5499 (``--num-procs N`` is passed on, 0 included: one worker per core, as
``sdpa-sim`` counts them; the workers started are printed) and measures its CPU and memory
(the process and its children); with ``--url`` it measures the server process given by
``--server-pid`` or, on a loopback address, the one listening on the port.

What is measured, per run (``time.monotonic()`` in every process, so stamps compare):

- document arrival: page request → PULL-DOC-REPLY (the first screen can be drawn: its
  figures come with the page, their first frame of numbers in the document), and how many
  models that document holds; lesson arrival: page request → the PATCH-DOC that completes
  the lesson's models.
- move latency: a slider change sent → the PATCH-DOC carrying the new heatmap numbers (the
  frame of the first-screen figures with the weights, its image buffers received; see
  ``protocol_client.attribute_moves``: exact while one move of a student is in flight,
  possibly one update early when several are); "never answered": moves the heatmap never
  showed once the server had gone quiet. Moves are split by when they were
  sent: while students were still arriving, in steady state, during the flood.
- server CPU per arriving session (arrival window, less the moves made in it) and per move
  (steady state, both parts of a move: the plots and the update after them); RSS per
  session (after all arrived, over the RSS after a warm-up session per server process,
  which stays open so that no session is discarded during the run).
- ``--flood``: after everyone has arrived, one more student at n = d_k = 1024 sends 500 d_k
  changes in 2 s; when does its heatmap show the last one, and what happens meanwhile to
  the others' moves (p95 in steady state before it vs during it). With ``--flood-kind
  resample`` the extra student is at the class's scene and presses Resample
  :data:`RESAMPLE_PRESSES` times, once a second, each a seed no session has drawn (its
  histograms' tables of pooled pairs are built then, ~0.5 s each).
- ``--churn S C``: C cycles of S sessions opened (lesson and two moves each) and closed;
  after each, the server's RSS once it has discarded them (Bokeh discards a closed
  session within ~32 s: ``--churn-wait``), and the least-squares slope in MiB per cycle.

The figures are printed as a table beside the targets and written as JSON (with the raw
per-student data) to ``benchmarks/results/``. Client CPU is reported too: the clients share
the machine with the server, and must not be what limits the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import platform
import queue as queue_module
import random
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import browser_support  # noqa: E402
from protocol_client import (  # noqa: E402
    ProtocolSession,
    SliderWalk,
    open_lesson,
    page_url,
    session_summary,
)

RESULTS = REPO / "benchmarks" / "results"
PORTS = range(5400, 5500)
"""Ports for the server this script starts (other engineers' servers use 5100–5399)."""
SERVER_START_TIMEOUT = 90.0
SAMPLE_INTERVAL = 0.25
"""Seconds between samples of the server's CPU time and RSS."""
MIB = 1024 * 1024

D_K_WINDOW = 16
"""d_k slider positions a student's moves go round (two octaves around the scene's d_k)."""
TEMPERATURE_WINDOW = 8
"""Temperature slider positions a student's moves go round (around the scene's value)."""

FLOOD_CHANGES = 500
FLOOD_SECONDS = 2.0
FLOOD_SCENE = {"n": 1024, "d_k": 1024}
FLOOD_WINDOW = 16
"""The flood goes round the 16 d_k positions below 1024 and ends on 1024, a value the
round never shows: its last change always makes a new image."""

RESAMPLE_PRESSES = 6
RESAMPLE_EVERY_S = 1.0
RESAMPLE_SEED = 9000
"""The resampling student starts at this seed, which no other student draws, and each press
moves to the next: every press asks for a seed the server has not drawn."""


@dataclass(frozen=True)
class Target:
    """A figure's target, as issue 17 states it."""

    label: str
    limit: float
    unit: str

    def met(self, value: float | None) -> bool | None:
        """Whether ``value`` is within the target (None if there is no value)."""
        return None if value is None else value <= self.limit

    def text(self) -> str:
        """The target as printed next to the figure."""
        return f"≤ {self.limit:g} {self.unit}".strip()


TARGETS = {
    "document_p95": Target("document p95", 3.0, "s"),
    "lesson_p95": Target("lesson p95", 6.0, "s"),
    "move_p95": Target("moves p95 at 2 moves/s", 250.0, "ms"),
    "errors": Target("errors", 0, ""),
    "rss_per_session": Target("memory per session", 3.0, "MiB"),
    "churn_slope": Target("churn RSS slope", 0.5, "MiB/cycle"),
    "flood_last": Target("flood: last value shown", 1.0, "s"),
    "flood_ratio": Target("flood: others' p95 with / without", 1.5, "×"),
}
"""Issue 17's targets, for 50 students arriving at once on one process."""


# --- Configuration passed to worker processes ----------------------------------------------


@dataclass(frozen=True)
class Student:
    """One simulated student: when it arrives and how it moves."""

    index: int
    arrive: float
    """Seconds after the start at which it requests the page."""
    opens_lesson: bool
    seed: int


@dataclass(frozen=True)
class Plan:
    """What every client process needs to know (picklable for ``spawn``)."""

    url: str
    origin: str | None
    rate: float
    duration: float
    timeout: float
    grace: float
    echo: bool
    render_delay: float
    d_k: int
    together: bool
    """Students start moving together once all have arrived (else each once it arrived)."""
    lesson_delay: float = 0.0
    """Openers open the lesson a random 0–lesson_delay s after their document arrived."""
    temperature: float = 1.0
    flood_delay: float = 3.0
    n: int = 32
    """The class's sequence length (in ``url`` too)."""
    flood_kind: str = "d_k"
    """What the flooding student does: ``d_k`` (500 changes at n = d_k = 1024) or
    ``resample`` (Resample pressed once a second at the class's scene)."""
    channel: bool = True
    """Moves go on the session's own channel where the page offers one (else over Bokeh's
    websocket, as before the channel)."""


# --- Students, in worker processes -----------------------------------------------------------


async def sleep_until(when: float) -> None:
    """Sleep until ``time.monotonic()`` reaches ``when``."""
    delay = when - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


async def run_student(
    plan: Plan,
    student: Student,
    start: float,
    report: multiprocessing.Queue,
    everyone_here: asyncio.Event,
) -> dict[str, Any]:
    """Arrive, open the lesson if the student does, move for ``plan.duration`` seconds
    (once ``everyone_here`` is set if the class moves together)."""
    rng = random.Random(student.seed)
    await sleep_until(start + student.arrive)
    session = ProtocolSession(
        plan.url, origin=plan.origin, timeout=plan.timeout, echo=plan.echo, channel=plan.channel
    )
    arrived = False
    lags: list[float] = []
    failure = None
    try:
        await session.open()
        if plan.render_delay:
            # A browser paints the first screen before it reports the page ready.
            await asyncio.sleep(plan.render_delay)
        await session.send_document_ready()
        if student.opens_lesson:
            await asyncio.sleep(rng.uniform(0, plan.lesson_delay))
            await open_lesson(session)
        arrived = True
        report.put(("arrived", student.index, time.monotonic()))
        if plan.together:
            await everyone_here.wait()
        lags = await make_moves(session, plan, rng)
        await session.wait_answered(timeout=plan.grace)
    except Exception as error:  # ProtocolError, tornado's HTTP and websocket errors…
        failure = f"{type(error).__name__}: {error}"
    finally:
        if not arrived:
            report.put(("failed", student.index, time.monotonic()))
    summary = session_summary(session)
    summary.update(
        index=student.index,
        opens_lesson=student.opens_lesson,
        arrived=arrived,
        failure=failure,
        send_lag_max=max(lags, default=0.0),
        send_lag_p95=percentile(lags, 95),
        session=session,
    )
    return summary


async def make_moves(session: ProtocolSession, plan: Plan, rng: random.Random) -> list[float]:
    """Move d_k or temperature (at random) every 1/rate s; return how late each move was
    sent after its schedule (a client that cannot keep up shows here)."""
    d_k = session.index.slider("d_k")
    temperature = session.index.slider("temperature")
    walks = [
        SliderWalk.around(d_k, d_k.position(plan.d_k), D_K_WINDOW),
        SliderWalk.around(temperature, temperature.position(plan.temperature), TEMPERATURE_WINDOW),
    ]
    interval = 1.0 / plan.rate
    begin = time.monotonic()
    due = begin + rng.random() * interval
    lags = []
    while due < begin + plan.duration:
        await sleep_until(due)
        lags.append(time.monotonic() - due)
        walk = rng.choice(walks)
        await session.move(walk.slider, walk.next())
        due += interval
    return lags


def student_worker(
    plan: Plan,
    students: list[Student],
    ready: multiprocessing.Queue,
    go: Any,
    start_at: Any,
    all_arrived: Any,
    report: multiprocessing.Queue,
) -> None:
    """A client process: run ``students`` concurrently and report each one's summary."""
    ready.put(os.getpid())
    go.wait()
    cpu = time.process_time()
    wall = time.monotonic()

    async def everyone() -> list[dict[str, Any]]:
        everyone_here = asyncio.Event()

        async def watch() -> None:
            # One thread waits on the other processes' news for all of this process.
            loop = asyncio.get_running_loop()
            if await loop.run_in_executor(None, all_arrived.wait, plan.timeout * 4):
                everyone_here.set()

        watcher = asyncio.create_task(watch())
        summaries = await asyncio.gather(
            *(
                run_student(plan, student, start_at.value, report, everyone_here)
                for student in students
            )
        )
        watcher.cancel()
        # Sessions stay open until every student of this process is done: no session is
        # discarded (and garbage-collected by the server) while others still move.
        for summary in summaries:
            await summary.pop("session").close()
        return summaries

    summaries = asyncio.run(everyone())
    report.put(
        (
            "worker",
            os.getpid(),
            {
                "students": summaries,
                "cpu": time.process_time() - cpu,
                "wall": time.monotonic() - wall,
            },
        )
    )


# --- The flooding student --------------------------------------------------------------------


async def run_flood(plan: Plan, all_arrived: Any) -> dict[str, Any]:
    """Once everyone has arrived: one more student at n = d_k = 1024 sends
    :data:`FLOOD_CHANGES` d_k changes in :data:`FLOOD_SECONDS` s; when is the last shown?"""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, all_arrived.wait, plan.timeout * 4)
    await asyncio.sleep(plan.flood_delay)
    base = plan.url.split("?")[0]
    resample = plan.flood_kind == "resample"
    scene = {"n": plan.n, "d_k": plan.d_k, "seed": RESAMPLE_SEED} if resample else FLOOD_SCENE
    session = ProtocolSession(
        page_url(base, **scene),
        origin=plan.origin,
        timeout=plan.timeout,
        echo=plan.echo,
        channel=plan.channel,
    )
    result: dict[str, Any] = {"failure": None}
    try:
        result["open"] = time.monotonic()
        await session.open()
        await session.send_document_ready()
        await open_lesson(session)
        result["arrived"] = time.monotonic()
        await asyncio.sleep(1.0)
        patches_before = len(session.heatmap_times)
        first = time.monotonic()
        if resample:
            for press in range(RESAMPLE_PRESSES):
                await sleep_until(first + press * RESAMPLE_EVERY_S)
                await session.press("resample")
        else:
            d_k = session.index.slider("d_k")
            final = d_k.position(FLOOD_SCENE["d_k"])
            walk = SliderWalk(d_k, final - FLOOD_WINDOW, final - 1, final - 1)
            for change in range(FLOOD_CHANGES):
                await sleep_until(first + change * FLOOD_SECONDS / (FLOOD_CHANGES - 1))
                last = change == FLOOD_CHANGES - 1
                await session.move(d_k, final if last else walk.next())
        sent = time.monotonic()
        await session.wait_answered(timeout=plan.grace + 30)
        images = session.heatmap_times[patches_before:]
        result.update(
            first_send=first,
            last_send=sent,
            # The last change (a press: a new seed; a d_k change: a value the round never
            # shows) makes an image no other change makes: the last image shows it.
            last_shown=images[-1] if images and images[-1] > sent else None,
            images=len(images),
            bytes=session.bytes_received,
        )
    except Exception as error:  # report it with the figures rather than lose the run
        result["failure"] = f"{type(error).__name__}: {error}"
    finally:
        result["errors"] = list(session.errors)
        await session.close()
    return result


def flood_worker(plan: Plan, go: Any, all_arrived: Any, report: multiprocessing.Queue) -> None:
    """The flooding student's own process, so its 500 sends do not delay the others'."""
    go.wait()
    cpu = time.process_time()
    result = asyncio.run(run_flood(plan, all_arrived))
    result["cpu"] = time.process_time() - cpu
    report.put(("flood", os.getpid(), result))


# --- The server ------------------------------------------------------------------------------


@dataclass
class Server:
    """The server measured: its process (and children) and, if started here, its command."""

    url: str
    pid: int | None
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    def tree(self) -> list[psutil.Process]:
        """The server process and all its descendants (``--num-procs`` workers)."""
        if self.pid is None:
            return []
        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def workers(self) -> int:
        """How many processes build sessions: the front's workers (its children, with
        ``--num-procs`` above 1), else the server process itself; 0 if it is unknown."""
        if self.pid is None:
            return 0
        try:
            children = psutil.Process(self.pid).children()
        except psutil.NoSuchProcess:
            return 0
        return len(children) or 1

    def sample(self) -> tuple[float, float, float] | None:
        """(time, CPU seconds, RSS bytes) of the whole tree, or None if not measurable."""
        processes = self.tree()
        if not processes:
            return None
        cpu = rss = 0.0
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                times = process.cpu_times()
                cpu += times.user + times.system
                rss += process.memory_info().rss
        return time.monotonic(), cpu, rss

    def log_errors(self) -> list[str]:
        """Log records of the server this script started that report an error."""
        if self.log_path is None or not self.log_path.exists():
            return []
        text = self.log_path.read_text(errors="replace")
        return [
            line
            for line in text.splitlines()
            if ("ERROR" in line or "Traceback" in line)
            and "WebSocketClosedError" not in line
            and "StreamClosedError" not in line
        ]


def free_port() -> int:
    """The first port of :data:`PORTS` nothing listens on now."""
    return browser_support.free_port(PORTS)


def answers(url: str) -> bool:
    """Whether ``url`` is served (HTTP 200) right now."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def start_server(num_procs: int | None, log_path: Path, arguments: Sequence[str] = ()) -> Server:
    """Start ``sdpa-sim`` on a free loopback port, with ``arguments`` added to its command
    line, and wait until the page answers."""
    port = free_port()
    script = Path(sys.executable).parent / "sdpa-sim"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "app.server.cli"]
    command += ["--port", str(port), "--address", "127.0.0.1"]
    command += ["--allow-websocket-origin", f"127.0.0.1:{port}"]
    # 0 is a request too (one worker per core), not "no option": pass on any number given.
    if num_procs is not None:
        command += ["--num-procs", str(num_procs)]
    command += list(arguments)
    log = log_path.open("wb")
    process = subprocess.Popen(
        command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env={**os.environ}
    )
    log.close()
    server = Server(f"http://127.0.0.1:{port}/main", process.pid, process, log_path)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if answers(server.url):
            return server
        try:
            code = process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"{' '.join(command)} exited with {code}:\n{log_path.read_text()}")
    stop_server(server)
    raise RuntimeError(f"the server did not answer within {SERVER_START_TIMEOUT:.0f} s")


def stop_server(server: Server) -> None:
    """Stop a server this script started (terminate, then kill after 10 s)."""
    if server.process is None:
        return
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)


def external_server(url: str, pid: int | None) -> Server:
    """The server at ``url``: measured through ``pid``, or the local process listening on
    the URL's port when the host is a loopback address (else CPU and RSS are not measured)."""
    if pid is None:
        parts = urlsplit(url)
        if parts.hostname in ("127.0.0.1", "localhost", "::1"):
            port = parts.port or (443 if parts.scheme == "https" else 80)
            with contextlib.suppress(psutil.AccessDenied):
                for connection in psutil.net_connections("tcp"):
                    if connection.status == psutil.CONN_LISTEN and connection.laddr.port == port:
                        pid = connection.pid
                        break
    return Server(url, pid)


# --- Statistics ----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation), or None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: Sequence[float], scale: float = 1.0) -> dict[str, Any]:
    """Count, p50, p95, p99 and max of ``values`` times ``scale``."""
    scaled = [value * scale for value in values]
    return {
        "count": len(scaled),
        "p50": percentile(scaled, 50),
        "p95": percentile(scaled, 95),
        "p99": percentile(scaled, 99),
        "max": max(scaled, default=None),
    }


def in_ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds (None stays None)."""
    return None if seconds is None else seconds * 1000


def slope(values: Sequence[float]) -> float | None:
    """Least-squares slope of ``values`` against 0, 1, 2, … (None for fewer than 2)."""
    if len(values) < 2:
        return None
    xs = range(len(values))
    mean_x = statistics.fmean(xs)
    mean_y = statistics.fmean(values)
    numerator = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values, strict=True))
    return numerator / sum((x - mean_x) ** 2 for x in xs)


@dataclass
class Samples:
    """The server's (time, CPU seconds, RSS bytes) samples, in time order."""

    rows: list[tuple[float, float, float]] = field(default_factory=list)

    def at(self, when: float) -> tuple[float, float] | None:
        """(CPU, RSS) linearly interpolated at ``when`` (clamped to the sampled span)."""
        if not self.rows:
            return None
        if when <= self.rows[0][0]:
            return self.rows[0][1], self.rows[0][2]
        for (t0, c0, r0), (t1, c1, r1) in zip(self.rows, self.rows[1:], strict=False):
            if t0 <= when <= t1:
                share = (when - t0) / (t1 - t0) if t1 > t0 else 0.0
                return c0 + (c1 - c0) * share, r0 + (r1 - r0) * share
        return self.rows[-1][1], self.rows[-1][2]

    def cpu_between(self, start: float, end: float) -> float | None:
        """Server CPU seconds spent between ``start`` and ``end``."""
        first, last = self.at(start), self.at(end)
        return None if first is None or last is None else last[0] - first[0]


async def sample_forever(server: Server, samples: Samples) -> None:
    """Sample the server every :data:`SAMPLE_INTERVAL` s until cancelled."""
    while True:
        row = server.sample()
        if row is not None:
            samples.rows.append(row)
        await asyncio.sleep(SAMPLE_INTERVAL)


# --- A class -----------------------------------------------------------------------------


async def warm_up(url: str, plan: Plan) -> ProtocolSession:
    """One full session with a few moves: imports, caches and the first page built before
    anything is timed. It is kept open until the end (see the module docstring)."""
    session = ProtocolSession(
        url, origin=plan.origin, timeout=plan.timeout, echo=plan.echo, channel=plan.channel
    )
    await session.open()
    await session.send_document_ready()
    await open_lesson(session)
    for key, value in (("d_k", plan.d_k), ("temperature", plan.temperature)):
        slider = session.index.slider(key)
        walk = SliderWalk.around(slider, slider.position(value), 4)
        for _ in range(2):
            await session.move(slider, walk.next())
            await session.wait_answered(timeout=plan.timeout)
    return session


def schedule(count: int, ramp: float, lesson_fraction: float, seed: int) -> list[Student]:
    """``count`` students arriving at once (``ramp`` 0) or evenly over ``ramp`` seconds; the
    first ``lesson_fraction`` of them in a shuffled order open the lesson."""
    rng = random.Random(seed)
    openers = set(rng.sample(range(count), round(count * lesson_fraction)))
    return [
        Student(i, ramp * i / count if ramp else 0.0, i in openers, seed * 100_003 + i)
        for i in range(count)
    ]


async def drain(report: multiprocessing.Queue) -> Any:
    """The next message of the client processes, or None within 0.2 s."""
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(None, report.get, True, 0.2)
    except queue_module.Empty:
        return None


async def run_class(args: argparse.Namespace, server: Server, plan: Plan) -> dict[str, Any]:
    """Warm up, run the class (and the flood), and summarise it."""
    context = multiprocessing.get_context("spawn")
    samples = Samples()
    sampler = asyncio.create_task(sample_forever(server, samples))
    # One warm-up session per worker process: a new page goes to the least loaded
    # worker, so each builds its first page untimed.
    warm = [await warm_up(plan.url, plan) for _ in range(max(1, server.workers()))]
    await asyncio.sleep(1.0)
    baseline = server.sample()

    students = schedule(args.students, args.ramp, args.lesson_fraction, args.seed)
    workers = args.workers or max(1, math.ceil(args.students / 40))
    ready, report = context.Queue(), context.Queue()
    go, all_arrived = context.Event(), context.Event()
    start_at = context.Value("d", 0.0)
    processes = [
        context.Process(
            target=student_worker,
            args=(plan, students[w::workers], ready, go, start_at, all_arrived, report),
            daemon=True,
        )
        for w in range(workers)
    ]
    if args.flood:
        processes.append(
            context.Process(target=flood_worker, args=(plan, go, all_arrived, report), daemon=True)
        )
    for process in processes:
        process.start()
    loop = asyncio.get_running_loop()
    for _ in range(workers):
        await loop.run_in_executor(None, ready.get, True, 120)
    start = time.monotonic() + 0.5
    start_at.value = start
    go.set()

    arrivals: dict[int, float] = {}
    failed: set[int] = set()
    results: dict[int, dict[str, Any]] = {}
    flood: dict[str, Any] | None = None
    expected = workers + (1 if args.flood else 0)
    all_arrived_at = None
    while len(results) + (flood is not None) < expected:
        message = await drain(report)
        if message is None:
            if not any(process.is_alive() for process in processes):
                break
            continue
        kind, key, payload = message
        if kind == "arrived":
            arrivals[key] = payload
        elif kind == "failed":
            failed.add(key)
        elif kind == "worker":
            results[key] = payload
        elif kind == "flood":
            flood = payload
        if all_arrived_at is None and len(arrivals) + len(failed) >= len(students):
            all_arrived_at = max(arrivals.values(), default=time.monotonic())
            all_arrived.set()
    for process in processes:
        process.join(timeout=30)
    for session in warm:
        await session.close()
    sampler.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sampler
    return summarise(args, server, plan, start, baseline, samples, results, flood, all_arrived_at)


def summarise(
    args: argparse.Namespace,
    server: Server,
    plan: Plan,
    start: float,
    baseline: tuple[float, float, float] | None,
    samples: Samples,
    results: dict[int, dict[str, Any]],
    flood: dict[str, Any] | None,
    all_arrived_at: float | None,
) -> dict[str, Any]:
    """The report of one run: figures, client load and the raw data behind them."""
    students = sorted(
        (student for worker in results.values() for student in worker["students"]),
        key=lambda student: student["index"],
    )
    documents = [
        s["times"]["document"] - s["times"]["started"]
        for s in students
        if s["times"]["document"] is not None
    ]
    lessons = [
        s["times"]["lesson"] - s["times"]["started"]
        for s in students
        if s["opens_lesson"] and s["times"]["lesson"] is not None
    ]
    requested = [
        s["times"]["lesson"] - s["times"]["lesson_requested"]
        for s in students
        if s["times"]["lesson"] is not None and s["times"]["lesson_requested"] is not None
    ]
    pages = [
        s["times"]["page"] - s["times"]["started"]
        for s in students
        if s["times"]["page"] is not None
    ]
    document_models = [
        s["document_models"] for s in students if s.get("document_models") is not None
    ]
    moves = [move for s in students for move in s["moves"]]
    answered = [move for move in moves if move["answered"] is not None]
    arrived_at = all_arrived_at or math.inf
    flood_start = flood.get("open", math.inf) if flood else math.inf
    flood_window = (
        (flood["first_send"], flood.get("last_shown") or flood["last_send"] + 10)
        if flood and flood.get("first_send")
        else None
    )

    def latencies(selected: list[dict[str, Any]]) -> list[float]:
        return [move["answered"] - move["sent"] for move in selected if move["answered"]]

    arriving = [move for move in moves if move["sent"] < arrived_at]
    steady = [move for move in moves if arrived_at <= move["sent"] < flood_start]
    flood_arriving = (
        [move for move in moves if flood_start <= move["sent"] < flood_window[0]]
        if flood_window
        else []
    )
    flooded = (
        [move for move in moves if flood_window[0] <= move["sent"] <= flood_window[1]]
        if flood_window
        else []
    )
    errors = [
        f"student {s['index']}: {problem}"
        for s in students
        for problem in ([s["failure"]] if s["failure"] else []) + s["errors"]
    ]
    missing = args.students - len(students)
    if missing:
        errors.append(f"{missing} students never reported (a client process died)")
    server_errors = server.log_errors()

    # Server CPU: the arrival window less the moves made in it, then the steady state.
    cpu_per_move = cpu_per_session = rss_per_session = None
    # Until the server has shown the last of these moves (or the flooding student comes).
    steady_end = min(
        flood_start,
        max((move["answered"] or move["sent"] for move in steady), default=arrived_at),
    )
    if all_arrived_at is not None and steady and steady_end - arrived_at > 2:
        steady_cpu = samples.cpu_between(arrived_at, steady_end)
        if steady_cpu is not None:
            cpu_per_move = steady_cpu / len(steady)
    if all_arrived_at is not None and students:
        arrival_cpu = samples.cpu_between(start, arrived_at)
        if arrival_cpu is not None:
            cpu_per_session = (arrival_cpu - len(arriving) * (cpu_per_move or 0)) / len(students)
        after = samples.at(arrived_at)
        if after is not None and baseline is not None:
            rss_per_session = (after[1] - baseline[2]) / len(students) / MIB
    flood_figures = None
    if flood:
        shown = flood.get("last_shown")
        flood_figures = {
            "last_shown_s": shown - flood["last_send"] if shown else None,
            "images": flood.get("images"),
            "mib_received": (flood.get("bytes") or 0) / MIB,
            "failure": flood.get("failure"),
            "errors": flood.get("errors"),
            "others_p95_without_ms": in_ms(percentile(latencies(steady), 95)),
            "others_p95_with_ms": in_ms(percentile(latencies(flooded), 95)),
            "others_moves_during": len(flooded),
            "server_cpu_s": samples.cpu_between(*flood_window) if flood_window else None,
            "client_cpu_s": flood.get("cpu"),
        }
        if flood_figures["others_p95_without_ms"] and flood_figures["others_p95_with_ms"]:
            flood_figures["ratio"] = (
                flood_figures["others_p95_with_ms"] / flood_figures["others_p95_without_ms"]
            )
    client_cpu = [worker["cpu"] for worker in results.values()]
    client_busiest = max(
        (worker["cpu"] / worker["wall"] for worker in results.values() if worker["wall"]),
        default=None,
    )
    return {
        "documents_s": spread(documents),
        "lessons_s": spread(lessons),
        "lessons_after_request_s": spread(requested),
        "pages_s": spread(pages),
        "document_models": statistics.median(document_models) if document_models else None,
        "moves_ms": spread(latencies(moves), 1000),
        "moves_arriving_ms": spread(latencies(arriving), 1000),
        "moves_steady_ms": spread(latencies(steady), 1000),
        "moves_flood_arriving_ms": spread(latencies(flood_arriving), 1000),
        "moves_flood_ms": spread(latencies(flooded), 1000),
        "moves_sent": len(moves),
        "moves_never_answered": len(moves) - len(answered),
        "server_cpu_per_session_s": cpu_per_session,
        "server_cpu_per_move_ms": in_ms(cpu_per_move),
        "rss_per_session_mib": rss_per_session,
        "rss_baseline_mib": baseline and baseline[2] / MIB,
        "errors": errors,
        "server_log_errors": server_errors,
        "arrival_window_s": (all_arrived_at - start) if all_arrived_at else None,
        "students_arrived": sum(1 for s in students if s["arrived"]),
        "flood": flood_figures,
        "client": {
            "processes": len(results),
            "cpu_s": sum(client_cpu),
            "busiest_share_of_a_core": client_busiest,
            "send_lag_p95_ms": in_ms(percentile([s["send_lag_p95"] or 0.0 for s in students], 95)),
            "send_lag_max_ms": max((s["send_lag_max"] for s in students), default=0) * 1000,
        },
        "raw": {
            "students": students,
            "samples": samples.rows,
            "start": start,
            "all_arrived_at": all_arrived_at,
            "flood": flood,
        },
    }


# --- Churn ---------------------------------------------------------------------------------


async def churn(server: Server, plan: Plan, sessions: int, cycles: int, wait: float) -> dict:
    """``cycles`` × (open ``sessions`` sessions with their lesson and two moves, close them,
    wait ``wait`` s for the server to discard them); RSS after each, and its slope."""

    async def one() -> str | None:
        session = ProtocolSession(
            plan.url, origin=plan.origin, timeout=plan.timeout, echo=plan.echo, channel=plan.channel
        )
        try:
            await session.open()
            await session.send_document_ready()
            await open_lesson(session)
            slider = session.index.slider("d_k")
            walk = SliderWalk.around(slider, slider.position(plan.d_k), D_K_WINDOW)
            for _ in range(2):
                await session.move(slider, walk.next())
            await session.wait_answered(timeout=plan.grace)
            return None
        except Exception as error:  # counted, and the cycle goes on
            return f"{type(error).__name__}: {error}"
        finally:
            await session.close()

    def rss_now() -> float | None:
        readings = []
        for _ in range(4):
            row = server.sample()
            if row is not None:
                readings.append(row[2] / MIB)
            time.sleep(0.25)
        return statistics.median(readings) if readings else None

    before = rss_now()
    series: list[float] = []
    errors: list[str] = []
    # Cycle 0 warms up (imports, shared caches, the allocator's arenas at this many
    # sessions) and is left out of the slope: it is not what repeats every lesson.
    for cycle in range(cycles + 1):
        outcomes = await asyncio.gather(*(one() for _ in range(sessions)))
        errors += [f"cycle {cycle}: {outcome}" for outcome in outcomes if outcome]
        await asyncio.sleep(wait)
        rss = rss_now()
        if rss is not None:
            series.append(rss)
        label = "warm-up cycle" if cycle == 0 else f"churn cycle {cycle}/{cycles}"
        print(f"  {label}: RSS {rss and round(rss, 1)} MiB", flush=True)
    return {
        "sessions": sessions,
        "cycles": cycles,
        "wait_s": wait,
        "rss_before_mib": before,
        "rss_after_warm_up_mib": series[0] if series else None,
        "rss_mib": series[1:],
        "slope_mib_per_cycle": slope(series[1:]),
        "errors": errors,
    }


# --- Report ----------------------------------------------------------------------------------


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for the table ("–" for none)."""
    if value is None:
        return "–"
    return f"{value:.{digits}f}"


def mark(target: str, value: float | None) -> str:
    """✓ or ✗ against the named target, with the target itself."""
    met = TARGETS[target].met(value)
    sign = "" if met is None else ("✓" if met else "✗")
    return f"{TARGETS[target].text()} {sign}".strip()


def table(report: dict[str, Any]) -> str:
    """The run's figures as a readable table, targets beside them."""
    rows = [("measure", "p50", "p95", "p99", "max", "n", "target")]

    def spread_row(label: str, figures: dict[str, Any], target: str = "", digits: int = 2) -> None:
        if not figures or not figures["count"]:
            rows.append((label, "–", "–", "–", "–", "0", ""))
            return
        rows.append(
            (
                label,
                fmt(figures["p50"], digits),
                fmt(figures["p95"], digits),
                fmt(figures["p99"], digits),
                fmt(figures["max"], digits),
                str(figures["count"]),
                mark(target, figures["p95"]) if target else "",
            )
        )

    values: list[tuple[str, str, str]] = []

    def value_row(label: str, text: str, target: str = "", value: float | None = None) -> None:
        values.append((label, text, mark(target, value) if target else ""))

    class_run = report.get("class")
    if class_run:
        spread_row("page HTML (s)", class_run["pages_s"])
        spread_row("document arrival (s)", class_run["documents_s"], "document_p95")
        spread_row("lesson arrival (s)", class_run["lessons_s"], "lesson_p95")
        if class_run["lessons_after_request_s"]["count"]:
            spread_row("  after the student opened it", class_run["lessons_after_request_s"])
        spread_row("moves, all (ms)", class_run["moves_ms"], "move_p95", 0)
        spread_row("  sent while others arrived", class_run["moves_arriving_ms"], "", 0)
        spread_row("  sent after all arrived", class_run["moves_steady_ms"], "move_p95", 0)
        if class_run["flood"]:
            spread_row(
                "  sent as the flooding student arrived",
                class_run["moves_flood_arriving_ms"],
                "",
                0,
            )
            spread_row("  sent during the flood", class_run["moves_flood_ms"], "", 0)
        value_row(
            "models in the pulled document (median)",
            fmt(class_run.get("document_models"), 0),
        )
        value_row(
            f"moves never answered (within {report['grace_s']:g} s)",
            f"{class_run['moves_never_answered']} of {class_run['moves_sent']}",
        )
        value_row(
            "server CPU per arriving session",
            f"{fmt(class_run['server_cpu_per_session_s'], 3)} s",
        )
        value_row("server CPU per move", f"{fmt(class_run['server_cpu_per_move_ms'], 1)} ms")
        value_row(
            "RSS per session",
            f"{fmt(class_run['rss_per_session_mib'], 1)} MiB",
            "rss_per_session",
            class_run["rss_per_session_mib"],
        )
        errors = len(class_run["errors"]) + len(class_run["server_log_errors"])
        value_row("errors (clients + server log)", str(errors), "errors", errors)
        flood = class_run["flood"]
        if flood:
            value_row(
                "flood: last value shown after",
                f"{fmt(flood['last_shown_s'])} s ({flood['images']} images, "
                f"{fmt(flood['mib_received'], 0)} MiB; its client "
                f"{fmt(flood['client_cpu_s'], 1)} s CPU)",
                "flood_last",
                flood["last_shown_s"],
            )
            value_row(
                "flood: others' p95 without → with",
                f"{fmt(flood['others_p95_without_ms'], 0)} → "
                f"{fmt(flood['others_p95_with_ms'], 0)} ms",
                "flood_ratio",
                flood.get("ratio"),
            )
        client = class_run["client"]
        value_row(
            "client CPU",
            f"{fmt(client['cpu_s'], 1)} s in {client['processes']} process(es), busiest "
            f"{fmt((client['busiest_share_of_a_core'] or 0) * 100, 0)} % of a core; "
            f"send lag p95 {fmt(client['send_lag_p95_ms'], 1)} ms",
        )
    churn_run = report.get("churn")
    if churn_run:
        value_row(
            "churn RSS slope",
            f"{fmt(churn_run['slope_mib_per_cycle'])} MiB/cycle "
            f"({churn_run['sessions']} × {churn_run['cycles']})",
            "churn_slope",
            churn_run["slope_mib_per_cycle"],
        )
    first = max([len(row[0]) for row in rows] + [len(row[0]) for row in values])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    if len(rows) > 1:
        for number, row in enumerate(rows):
            cells = [row[0].ljust(first)]
            cells += [cell.rjust(width) for cell, width in zip(row[1:6], widths[1:6], strict=True)]
            cells.append(row[6])
            lines.append("  ".join(cells).rstrip())
            if number == 0:
                lines.append("-" * len(lines[0]))
    text_width = max((len(text) for _, text, target in values if target), default=0)
    for label, text, target in values:
        line = f"{label.ljust(first)}  {text.ljust(text_width) if target else text}"
        lines.append(f"{line}  {target}".rstrip())
    return "\n".join(lines)


def worker_text(server: Server) -> str:
    """How many worker processes serve, as printed: "2 worker processes behind a front"."""
    workers = server.workers()
    if not workers:
        return "the server process is unknown"
    if len(server.tree()) > workers:
        return f"{workers} worker process{'es' if workers > 1 else ''} behind a front"
    return "1 process"


def environment(server: Server) -> dict[str, Any]:
    """The machine and the code measured."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "app"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    return {
        "commit": commit,
        "app_has_uncommitted_changes": bool(dirty),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
        "server_processes": len(server.tree()),
        "server_workers": server.workers(),
        "server_set_up": worker_text(server),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30, help="students in the class (30)")
    parser.add_argument(
        "--ramp", type=float, default=0.0, help="seconds over which they arrive (0: at once)"
    )
    parser.add_argument("--rate", type=float, default=2.0, help="moves per second each (2)")
    parser.add_argument(
        "--duration", type=float, default=20.0, help="seconds each student moves (20)"
    )
    parser.add_argument("--n", type=int, default=32, help="sequence length in the URL (32)")
    parser.add_argument("--d-k", type=int, default=64, help="d_k in the URL (64)")
    parser.add_argument(
        "--embed",
        action="store_true",
        help="open the page as a course page's iframe does (?embed=true)",
    )
    parser.add_argument(
        "--lesson-fraction",
        type=float,
        default=1.0,
        help="share of students who open the lesson (1.0)",
    )
    parser.add_argument(
        "--lesson-delay",
        type=float,
        default=0.0,
        help="openers open the lesson a random 0–X s after their document arrived "
        "(0: at once, the most demanding)",
    )
    parser.add_argument(
        "--move-start",
        choices=("together", "arrival"),
        help="students start moving together once all have arrived, or each once it has "
        "(default: together when arriving at once, on arrival with --ramp)",
    )
    parser.add_argument(
        "--flood", action="store_true", help="one more student floods d_k at n = d_k = 1024"
    )
    parser.add_argument(
        "--flood-kind",
        choices=("d_k", "resample"),
        default="d_k",
        help="what the flooding student does: d_k changes at n = d_k = 1024, or Resample "
        "pressed once a second to seeds never drawn (d_k)",
    )
    parser.add_argument(
        "--flood-delay",
        type=float,
        default=8.0,
        help="seconds after everyone arrived before the flooding student arrives (8)",
    )
    parser.add_argument(
        "--churn",
        type=int,
        nargs=2,
        metavar=("S", "C"),
        help="C cycles of S sessions opened and closed, RSS after each",
    )
    parser.add_argument(
        "--churn-wait",
        type=float,
        default=40.0,
        help="seconds after closing a cycle's sessions before RSS is read (40: Bokeh "
        "discards a closed session within 15 + 17 s, then Panel collects garbage)",
    )
    parser.add_argument("--url", help="an external server's page, e.g. http://host:port/main")
    parser.add_argument("--server-pid", type=int, help="with --url: the server process to measure")
    parser.add_argument("--origin", help="Origin header of the websockets (default: the URL's)")
    parser.add_argument(
        "--num-procs",
        type=int,
        help="passed on to the server started here (0: one worker per core; "
        "default: the server's own, one process)",
    )
    parser.add_argument(
        "--workers", type=int, help="client processes (default: one per 40 students)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="limit of any one wait, seconds (120)"
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=15.0,
        help="seconds to wait for the last moves' heatmaps after moving (15)",
    )
    parser.add_argument(
        "--render-delay",
        type=float,
        default=0.0,
        help="seconds between the document's arrival and document_ready (a browser "
        "paints first; 0)",
    )
    parser.add_argument(
        "--no-echo",
        action="store_true",
        help="leave out the theme and layout patches a painted page sends back",
    )
    parser.add_argument(
        "--bokeh-moves",
        action="store_true",
        help="send moves over Bokeh's websocket even where the page offers the session's own "
        "channel (the path before the channel, and a page whose channel was refused)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the students' choices (0)")
    parser.add_argument("--out", type=Path, help="JSON file to write (default: results/…)")
    args = parser.parse_args(argv)
    if args.students < 0 or (args.students == 0 and not args.churn):
        parser.error("--students must be positive (or 0 with --churn)")
    if not 0.0 <= args.lesson_fraction <= 1.0:
        parser.error("--lesson-fraction must be between 0 and 1")
    if args.rate <= 0:
        parser.error("--rate must be positive")
    if args.move_start is None:
        args.move_start = "arrival" if args.ramp else "together"
    return args


@contextlib.contextmanager
def target_server(args: argparse.Namespace, log_path: Path) -> Iterator[Server]:
    """The server to measure: the one at ``--url``, or one started here for the run."""
    if args.url:
        yield external_server(args.url, args.server_pid)
        return
    server = start_server(args.num_procs, log_path)
    requested = "" if args.num_procs is None else f" (--num-procs {args.num_procs})"
    print(f"server started{requested}: {worker_text(server)}", flush=True)
    try:
        yield server
    finally:
        stop_server(server)


async def run(args: argparse.Namespace, server: Server) -> dict[str, Any]:
    """The class run and/or the churn run against ``server``."""
    base = args.url.split("?")[0] if args.url else server.url
    plan = Plan(
        url=page_url(base, n=args.n, d_k=args.d_k, embed="true" if args.embed else None),
        origin=args.origin,
        rate=args.rate,
        duration=args.duration,
        timeout=args.timeout,
        grace=args.grace,
        echo=not args.no_echo,
        render_delay=args.render_delay,
        d_k=args.d_k,
        together=args.move_start == "together",
        lesson_delay=args.lesson_delay,
        flood_delay=args.flood_delay,
        flood_kind=args.flood_kind,
        n=args.n,
        channel=not args.bokeh_moves,
    )
    report: dict[str, Any] = {"grace_s": args.grace}
    if args.students:
        report["class"] = await run_class(args, server, plan)
    if args.churn:
        if args.students:
            # Let the class's sessions be discarded first: their memory coming back during
            # the first cycles would pass for a downward slope.
            await asyncio.sleep(args.churn_wait)
        report["churn"] = await churn(server, plan, *args.churn, args.churn_wait)
    return report


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark, print the table and write the JSON report."""
    args = parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = f"class-{stamp}-s{args.students}" + (f"-flood-{args.flood_kind}" if args.flood else "")
    log_path = RESULTS / f"{name}-server.log"
    load_before = os.getloadavg()
    with target_server(args, log_path) as server:
        if server.pid is None:
            print("note: the server process is unknown: CPU and RSS are not measured")
        report = asyncio.run(run(args, server))
        env = environment(server)
    env["load_average_before"] = load_before
    scene = (
        f"{args.students} students "
        + (f"arriving over {args.ramp:g} s" if args.ramp else "arriving at once")
        + f", {args.rate:g} moves/s each for {args.duration:g} s from "
        + ("when all have arrived" if args.move_start == "together" else "their arrival")
        + f", lesson opened by {args.lesson_fraction:.0%}"
        + (f" + flood ({args.flood_kind})" if args.flood else "")
        if args.students
        else "churn only"
    )
    header = (
        f"sdpa-sim class load: {scene}; n = {args.n}, d_k = {args.d_k}; "
        f"{env['server_set_up']}, {env['cpus']} CPUs, load average "
        f"{load_before[0]:.2f} → {env['load_average'][0]:.2f}; commit {env['commit']}"
        + (" + uncommitted app changes" if env["app_has_uncommitted_changes"] else "")
    )
    print(header)
    print(table(report))
    class_run = report.get("class")
    if class_run:
        for problem in (class_run["errors"] + class_run["server_log_errors"])[:10]:
            print(f"  error: {problem}")
    out = args.out or RESULTS / f"{name}.json"
    document = {
        "header": header,
        "command": sys.argv,
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "environment": env,
        "targets": {key: asdict(target) for key, target in TARGETS.items()},
        "server_log": str(log_path) if not args.url else None,
        **report,
    }
    out.write_text(json.dumps(document, indent=1, default=str))
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


if __name__ == "__main__":
    main()
