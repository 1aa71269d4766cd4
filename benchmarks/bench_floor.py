"""The floor Panel puts under one arriving student: server CPU and document time per arrival
of a series of Panel pages, each one layer more than the one before, up to the app itself.

What a "one drawn component for the whole first screen" design (issue 24) could reach is
bounded by what Panel costs with nothing on the page. The layers, each served by its own
``panel serve`` on a loopback port in 5600–5699, with the settings the app's script applies
(``pn.extension(apply_signatures=False)``, :func:`app.server.panel_tuning.tune_process`: Bokeh's
hot settings fixed, diagnostics and validation off, the page resources and model
definitions cached; Panel's stylesheets served locally; sessions signed as ``sdpa-sim``
signs them):

- ``empty``: an empty ``pn.Column`` page;
- ``component``: that plus one ``pn.custom.JSComponent`` with a ~20 kB ``_esm`` and a few
  ``param.Array`` / ``param.Dict`` parameters (a 32×32 float32 array among them), defined
  once per process as the app's components are;
- ``header``: that component inside a panel-material-ui ``Page`` with the app's title,
  header stylesheet and theme configuration (the full page's header and theme toggle);
- ``app-embed``: ``app/main.py`` itself, ``?embed=true`` (what ``bench_class.py --embed``
  opens), and ``app-page``: the same without ``embed`` (the Material UI Page);
- ``sdpa-sim-embed`` (``--sdpa-sim``): ``app/main.py?embed=true`` served by ``sdpa-sim``
  (request guard, quiet message log), as ``bench_class.py`` serves it.

Each student is the protocol client of ``tests/protocol_client.py`` (page GET, websocket,
PULL-DOC, the patches a painted page sends, ``document_ready``), as in ``bench_class.py``.
For every round and every layer in turn (so the machine's drifts touch every layer alike):
``--arrivals`` students one after another (each once the server is quiet after the one
before), then as many at once. Sessions stay open until the end, as a class's do, so that no
discarded session's clean-up falls into a measurement. Measured:

- server CPU per arrival: the CPU time of the server's threads (``/proc/PID/task/*/
  schedstat``, nanoseconds; psutil's 10 ms ticks where that is missing) over the phase,
  from the first request to the server being quiet again after the last ``document_ready``,
  divided by the arrivals; one after another, also split by stage: the page GET (Panel runs
  the script and renders the HTML), the websocket and its ACK, the PULL-DOC (the document
  serialised), and ``document_ready`` with the painted page's patches (onload callbacks);
- the document's arrival (page request → PULL-DOC-REPLY), p50 and p95, and the page HTML's
  p95, for the students arriving at once; the models and kilobytes of the pulled document.

The table shows, per layer, the median over the rounds. Run it from the repository root::

    python benchmarks/bench_floor.py                      # 3 rounds of 30 arrivals
    python benchmarks/bench_floor.py --arrivals 50 --rounds 2 --sdpa-sim

It prints a markdown table and writes the raw figures as JSON to ``benchmarks/results/``.
Every wait is bounded (``--timeout``); servers it started are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import browser_support  # noqa: E402
from bench_class import answers, percentile  # noqa: E402
from protocol_client import ProtocolSession, SessionTimes  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
PORTS = range(5600, 5700)
"""Ports of the servers this script starts (bench_class.py uses 5400–5499, tests 5100–5399)."""
SERVER_START_TIMEOUT = 90.0
QUIET_WINDOW = 0.15
"""Seconds without server CPU (less than :data:`QUIET_CPU`) after which it counts as quiet."""
QUIET_CPU = 0.0005
QUIET_LIMIT = 5.0
"""The longest wait for a quiet server, seconds (a busy machine's server may never be)."""
ESM_BYTES = 20_000

STAGES = ("page", "connected", "document", "ready")
"""The stages of one arrival, each ending at a stamp of :class:`CpuStampedTimes` (``ready``:
the server quiet after ``document_ready``)."""

# --- The pages -----------------------------------------------------------------------------

PARTS = '''
"""What the floor benchmark's pages share (written by benchmarks/bench_floor.py)."""

import numpy as np
import panel as pn
import panel_material_ui as pmui
import param
from panel.custom import JSComponent

from app.compat import detach_from_global_busy, quiet_refused_patches
from app.simulation.spec import TITLE
from app.served.layout import HEADER_CSS
from app.server.panel_tuning import tune_process
from app.server.local_css import serve_panel_css_locally
from app.page.views.aria import PAGE_HEADINGS_THEME


def prepare():
    """What app/main.py does for every session before it builds the page."""
    pn.extension(apply_signatures=False)
    tune_process()
    quiet_refused_patches()
    serve_panel_css_locally(pn.state.curdoc)


ESM = {esm!r}


class Drawn(JSComponent):
    """A drawn component of the size of the app's: a ~20 kB module, numbers as arrays."""

    weights = param.Array(default=None)
    counts = param.Array(default=None)
    config = param.Dict(default={{}})
    frame = param.Dict(default={{}})
    dark = param.Boolean(default=False)

    _esm = ESM


CONFIG = {{"labels": ["d_k", "temperature", "n", "scale"], "limits": [[1, 1024], [0.05, 20]]}}


def drawn():
    rng = np.random.default_rng(0)
    return Drawn(
        weights=rng.random((32, 32), dtype=np.float32),
        counts=rng.integers(0, 500, 60).astype(np.float32),
        config=CONFIG,
        frame={{"sequence": 1, "parts": ["weights", "raw", "scaled"], "state": {{"d_k": 64}}}},
        sizing_mode="stretch_width",
    )


def empty_page():
    return pn.Column(sizing_mode="stretch_width")


def component_page():
    return pn.Column(drawn(), sizing_mode="stretch_width")


def header_page():
    page = pmui.Page(
        title=TITLE,
        main=[component_page()],
        stylesheets=[HEADER_CSS],
        theme_config=PAGE_HEADINGS_THEME,
    )
    detach_from_global_busy(page)
    return page
'''

SCRIPT = """
from floor_parts import {builder}, prepare

prepare()
{builder}().servable()
"""


def esm_module(size: int = ESM_BYTES) -> str:
    """An ES module of about ``size`` characters that draws something from the parameters:
    a render function and a table of functions, as a drawing component's module holds."""
    head = textwrap.dedent(
        """
        export function render({ model, el }) {
          const box = document.createElement('div')
          const draw = () => { box.textContent = `${model.frame.sequence}: ${model.weights}` }
          model.on(['weights', 'frame'], draw)
          draw()
          return box
        }
        """
    )
    parts = [head]
    number = 0
    while sum(map(len, parts)) < size:
        parts.append(
            f"export function part{number}(values, scale) {{\n"
            f"  return values.map((value, index) => value * scale + index * {number})\n}}\n"
        )
        number += 1
    return "".join(parts)


@dataclass(frozen=True)
class Layer:
    """One page of the series and how it is served."""

    name: str
    what: str
    script: str | None
    """The builder in the shared module whose page it serves (None: app/main.py)."""
    query: str = ""
    sdpa_sim: bool = False


LAYERS = (
    Layer("empty", "empty `pn.Column`, the app's settings", "empty_page"),
    Layer("component", "+ one JSComponent (20 kB ESM, arrays, dicts)", "component_page"),
    Layer("header", "+ panel-material-ui Page header", "header_page"),
    Layer("app-embed", "app/main.py `?embed=true`", None, "?embed=true"),
    Layer("app-page", "app/main.py, full page", None),
)
SDPA_SIM_LAYER = Layer(
    "sdpa-sim-embed", "app `?embed=true` through sdpa-sim", None, "?embed=true", sdpa_sim=True
)


def write_pages(folder: Path) -> dict[str, Path]:
    """The shared module and one script per page of :data:`LAYERS` into ``folder``."""
    (folder / "floor_parts.py").write_text(PARTS.format(esm=esm_module()))
    scripts = {}
    for layer in LAYERS:
        if layer.script is not None:
            path = folder / f"{layer.name}.py"
            path.write_text(SCRIPT.format(builder=layer.script))
            scripts[layer.name] = path
    return scripts


# --- Server CPU ------------------------------------------------------------------------------


def schedstat_seconds(text: str) -> float:
    """The CPU seconds in one ``/proc/…/schedstat`` line (its first field, nanoseconds)."""
    return int(text.split()[0]) / 1e9


def process_cpu(pid: int) -> float:
    """CPU seconds of process ``pid``'s live threads and its descendants (nanosecond
    precision from schedstat; psutil's user + system times where it is unreadable)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    for process in processes:
        tasks = Path(f"/proc/{process.pid}/task")
        try:
            total += sum(
                schedstat_seconds((task / "schedstat").read_text()) for task in tasks.iterdir()
            )
        except (OSError, ValueError, IndexError):
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
    return total


async def quiet(pid: int, timeout: float = QUIET_LIMIT) -> float:
    """Wait until the server has spent less than :data:`QUIET_CPU` s of CPU in the last
    :data:`QUIET_WINDOW` s (at most ``timeout`` s); return its CPU seconds then."""
    deadline = time.monotonic() + timeout
    last = process_cpu(pid)
    while True:
        await asyncio.sleep(QUIET_WINDOW)
        now = process_cpu(pid)
        if now - last < QUIET_CPU or time.monotonic() > deadline:
            return now
        last = now


# --- Students --------------------------------------------------------------------------------


@dataclass
class CpuStampedTimes(SessionTimes):
    """A session's stamps that also read the server's CPU as each is set (the protocol
    client sets ``page`` once the HTML has come, ``connected`` at the server's ACK,
    ``document`` at the PULL-DOC-REPLY), and the bytes received by then."""

    reader: Callable[[], float] | None = None
    session: ProtocolSession | None = None
    cpu: dict[str, float] = field(default_factory=dict)
    document_bytes: int | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        reader = self.__dict__.get("reader")
        if reader is not None and value is not None and name in ("started", *STAGES):
            self.cpu[name] = reader()
            session = self.__dict__.get("session")
            if name == "document" and session is not None:
                self.document_bytes = session.bytes_received


def new_session(url: str, pid: int, timeout: float) -> tuple[ProtocolSession, CpuStampedTimes]:
    """A protocol-client session whose stamps read server ``pid``'s CPU."""
    session = ProtocolSession(url, timeout=timeout)
    times = CpuStampedTimes()
    times.session = session
    times.reader = lambda: process_cpu(pid)
    session.times = times
    return session, times


async def arrive(session: ProtocolSession) -> None:
    """What a browser does on arrival: page, websocket, document, the painted page's patches,
    ``document_ready``."""
    await session.open()
    await session.send_document_ready()


@dataclass
class Phase:
    """One phase of one layer: ``arrivals`` students, one after another or at once."""

    layer: str
    mode: str
    arrivals: int
    cpu_s: float
    wall_s: float
    documents_s: list[float]
    pages_s: list[float]
    models: list[int]
    document_kb: list[float]
    stages_s: dict[str, float] = field(default_factory=dict)
    """One after another: server CPU seconds per stage, summed over the arrivals."""
    errors: list[str] = field(default_factory=list)

    @property
    def cpu_per_arrival_ms(self) -> float:
        return self.cpu_s / self.arrivals * 1000


def times_of(sessions: Sequence[tuple[ProtocolSession, CpuStampedTimes]]) -> dict[str, Any]:
    """Document and page times, models and document sizes of ``sessions``."""
    documents, pages, models, sizes, errors = [], [], [], [], []
    for session, times in sessions:
        if times.document is not None:
            documents.append(times.document - times.started)
        if times.page is not None:
            pages.append(times.page - times.started)
        if session.document_models is not None:
            models.append(session.document_models)
        if times.document_bytes is not None:
            sizes.append(times.document_bytes / 1000)
        errors += session.errors
    return {
        "documents_s": documents,
        "pages_s": pages,
        "models": models,
        "document_kb": sizes,
        "errors": errors,
    }


async def one_after_another(
    layer: Layer, url: str, pid: int, count: int, timeout: float, kept: list[ProtocolSession]
) -> Phase:
    """``count`` students arriving one at a time, each once the server is quiet again."""
    sessions = []
    stages = dict.fromkeys(STAGES, 0.0)
    total = 0.0
    failures: list[str] = []
    begin = time.monotonic()
    for _ in range(count):
        session, times = new_session(url, pid, timeout)
        kept.append(session)
        sessions.append((session, times))
        try:
            await arrive(session)
        except Exception as error:  # report it with the figures rather than lose the run
            failures.append(f"{type(error).__name__}: {error}")
            continue
        end = await quiet(pid)
        marks = [times.cpu["started"], *(times.cpu.get(stage) for stage in STAGES[:-1]), end]
        if None in marks:
            failures.append("an arrival missed a stamp")
            continue
        for stage, start, stop in zip(STAGES, marks[:-1], marks[1:], strict=True):
            stages[stage] += stop - start
        total += end - times.cpu["started"]
    figures = times_of(sessions)
    figures["errors"] += failures
    done = count - len(failures)
    return Phase(
        layer.name,
        "one after another",
        max(done, 1),
        total,
        time.monotonic() - begin,
        stages_s=stages,
        **figures,
    )


async def at_once(
    layer: Layer, url: str, pid: int, count: int, timeout: float, kept: list[ProtocolSession]
) -> Phase:
    """``count`` students arriving at the same moment."""
    sessions = [new_session(url, pid, timeout) for _ in range(count)]
    kept.extend(session for session, _ in sessions)
    start = process_cpu(pid)
    begin = time.monotonic()
    outcomes = await asyncio.gather(
        *(asyncio.wait_for(arrive(session), timeout) for session, _ in sessions),
        return_exceptions=True,
    )
    end = await quiet(pid)
    figures = times_of(sessions)
    figures["errors"] += [
        f"{type(outcome).__name__}: {outcome}"
        for outcome in outcomes
        if isinstance(outcome, BaseException)
    ]
    return Phase(layer.name, "at once", count, end - start, time.monotonic() - begin, **figures)


# --- Servers ---------------------------------------------------------------------------------


@dataclass
class Served:
    """A server this script started for one layer."""

    layer: Layer
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        """The process whose CPU is measured (sdpa-sim with one process serves in it)."""
        return self.process.pid


def free_ports(count: int) -> list[int]:
    """``count`` ports of :data:`PORTS` nothing listens on now."""
    ports: list[int] = []
    for _ in range(count):
        start = ports[-1] + 1 if ports else PORTS.start
        ports.append(browser_support.free_port(range(start, PORTS.stop)))
    return ports


def server_command(layer: Layer, script: Path | None, port: int) -> tuple[list[str], str]:
    """The command serving ``layer`` on ``port`` and the page's URL."""
    from app.server.cli import WEBSOCKET_MAX_MESSAGE_BYTES

    address = ["--port", str(port), "--address", "127.0.0.1"]
    origin = ["--allow-websocket-origin", f"127.0.0.1:{port}"]
    if layer.sdpa_sim:
        executable = Path(sys.executable).parent / "sdpa-sim"
        command = (
            [str(executable)] if executable.exists() else [sys.executable, "-m", "app.server.cli"]
        )
        return [*command, *address, *origin], f"http://127.0.0.1:{port}/main{layer.query}"
    path = script if script is not None else REPO / "app" / "main.py"
    command = [sys.executable, "-m", "panel", "serve", str(path), *address, *origin]
    command += ["--websocket-max-message-size", str(WEBSOCKET_MAX_MESSAGE_BYTES)]
    return command, f"http://127.0.0.1:{port}/{path.stem}{layer.query}"


@contextlib.contextmanager
def servers(layers: Sequence[Layer], folder: Path) -> Iterator[list[Served]]:
    """One server per layer, all answering; stopped on the way out."""
    scripts = write_pages(folder)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), str(REPO), os.environ.get("PYTHONPATH", "")]),
        # Signed session ids, as sdpa-sim makes them (app.server.cli.sign_sessions).
        "BOKEH_SIGN_SESSIONS": "true",
        "BOKEH_SECRET_KEY": secrets.token_urlsafe(32),
    }
    started: list[Served] = []
    try:
        for layer, port in zip(layers, free_ports(len(layers)), strict=True):
            command, url = server_command(layer, scripts.get(layer.name), port)
            log_path = folder / f"{layer.name}.log"
            with log_path.open("wb") as log:
                process = subprocess.Popen(
                    command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env
                )
            started.append(Served(layer, url, process, log_path))
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        for served in started:
            while not answers(served.url):
                if served.process.poll() is not None:
                    raise RuntimeError(
                        f"{served.layer.name}'s server exited: {served.log_path.read_text()}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{served.layer.name}'s server did not answer in time")
                time.sleep(0.5)
        yield started
    finally:
        for served in started:
            served.process.terminate()
        for served in started:
            try:
                served.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait(timeout=10)


def log_errors(served: Served) -> list[str]:
    """Error lines in a server's log."""
    text = served.log_path.read_text(errors="replace") if served.log_path.exists() else ""
    return [line for line in text.splitlines() if "ERROR" in line or "Traceback" in line]


# --- The run -------------------------------------------------------------------------------


async def measure(args: argparse.Namespace, started: list[Served]) -> list[Phase]:
    """Warm up every server, then every round: each layer one after another, then at once."""
    kept: list[ProtocolSession] = []
    phases: list[Phase] = []
    try:
        for served in started:
            for _ in range(args.warm_up):
                session, _times = new_session(served.url, served.pid, args.timeout)
                kept.append(session)
                await arrive(session)
            await quiet(served.pid)
        for round_number in range(args.rounds):
            for served in started:
                for phase in (one_after_another, at_once):
                    result = await phase(
                        served.layer, served.url, served.pid, args.arrivals, args.timeout, kept
                    )
                    result.errors += [
                        line for line in log_errors(served) if line not in result.errors
                    ]
                    phases.append(result)
                    print(
                        f"  round {round_number + 1}: {served.layer.name}, {result.mode}: "
                        f"{result.cpu_per_arrival_ms:.1f} ms CPU per arrival, document p95 "
                        f"{percentile(result.documents_s, 95) or 0:.2f} s",
                        flush=True,
                    )
    finally:
        await asyncio.gather(*(session.close() for session in kept), return_exceptions=True)
    return phases


def median(values: Sequence[float | None]) -> float | None:
    """The median of the values that are there (None if none is)."""
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def summary(phases: Sequence[Phase], layers: Sequence[Layer]) -> list[dict[str, Any]]:
    """Per layer, the median over rounds of each figure of the table."""
    rows = []
    for layer in layers:
        serial = [p for p in phases if p.layer == layer.name and p.mode == "one after another"]
        burst = [p for p in phases if p.layer == layer.name and p.mode == "at once"]
        stages = {
            stage: median([p.stages_s[stage] / p.arrivals * 1000 for p in serial])
            for stage in STAGES
        }
        rows.append(
            {
                "layer": layer.name,
                "what": layer.what,
                "cpu_serial_ms": median([p.cpu_per_arrival_ms for p in serial]),
                "cpu_serial_range_ms": [
                    min(p.cpu_per_arrival_ms for p in serial),
                    max(p.cpu_per_arrival_ms for p in serial),
                ]
                if serial
                else None,
                "stages_ms": stages,
                "cpu_at_once_ms": median([p.cpu_per_arrival_ms for p in burst]),
                "document_serial_p50_s": median([percentile(p.documents_s, 50) for p in serial]),
                "document_p50_s": median([percentile(p.documents_s, 50) for p in burst]),
                "document_p95_s": median([percentile(p.documents_s, 95) for p in burst]),
                "page_p95_s": median([percentile(p.pages_s, 95) for p in burst]),
                "models": median([median(p.models) for p in serial + burst]),
                "document_kb": median([median(p.document_kb) for p in serial + burst]),
                "errors": sum(len(p.errors) for p in serial + burst),
            }
        )
    return rows


def number(value: float | None, digits: int = 1) -> str:
    """A figure for the table ("–" for none)."""
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown_table(rows: Sequence[dict[str, Any]], arrivals: int) -> str:
    """The summary as a markdown table, with each layer's CPU as a ratio to the app's."""
    reference = next((row for row in rows if row["layer"] == "app-embed"), rows[-1])
    header = (
        "| layer | page | CPU per arrival, one after another (ms) | page GET / websocket / "
        f"PULL-DOC / ready (ms) | CPU per arrival, {arrivals} at once (ms) | share of "
        f"{reference['layer']} | document p50 / p95, {arrivals} at once (s) | page HTML p95 "
        "(s) | models | document kB | errors |"
    )
    lines = [header, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        stages = " / ".join(number(row["stages_ms"][stage]) for stage in STAGES)
        share = (
            row["cpu_at_once_ms"] / reference["cpu_at_once_ms"]
            if row["cpu_at_once_ms"] and reference["cpu_at_once_ms"]
            else None
        )
        lines.append(
            f"| {row['layer']} | {row['what']} | {number(row['cpu_serial_ms'])} | {stages} | "
            f"{number(row['cpu_at_once_ms'])} | {number(share, 2)} | "
            f"{number(row['document_p50_s'], 2)} / {number(row['document_p95_s'], 2)} | "
            f"{number(row['page_p95_s'], 2)} | {number(row['models'], 0)} | "
            f"{number(row['document_kb'], 0)} | {row['errors']} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arrivals", type=int, default=30, help="students per phase and layer (30)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all layers (3)")
    parser.add_argument(
        "--warm-up", type=int, default=2, help="untimed sessions per server first (2)"
    )
    parser.add_argument(
        "--layers",
        nargs="+",
        choices=[layer.name for layer in (*LAYERS, SDPA_SIM_LAYER)],
        help="only these layers (default: all but sdpa-sim-embed)",
    )
    parser.add_argument("--sdpa-sim", action="store_true", help="add the layer served by sdpa-sim")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="limit of any one wait, seconds (60)"
    )
    parser.add_argument("--out", type=Path, help="JSON file to write (default: results/…)")
    args = parser.parse_args(argv)
    if args.arrivals < 1 or args.rounds < 1 or args.warm_up < 0:
        parser.error("--arrivals and --rounds must be positive, --warm-up not negative")
    return args


def chosen_layers(args: argparse.Namespace) -> list[Layer]:
    """The layers to measure, in the table's order."""
    every = [*LAYERS, SDPA_SIM_LAYER]
    if args.layers:
        return [layer for layer in every if layer.name in args.layers]
    return [*LAYERS, SDPA_SIM_LAYER] if args.sdpa_sim else list(LAYERS)


def main(argv: list[str] | None = None) -> None:
    """Serve the layers, measure them, print the table and write the JSON report."""
    args = parse_args(argv)
    layers = chosen_layers(args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    with (
        tempfile.TemporaryDirectory(prefix="sdpa-floor-") as folder,
        servers(layers, Path(folder)) as started,
    ):
        phases = asyncio.run(measure(args, started))
    load_after = os.getloadavg()
    rows = summary(phases, layers)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    header = (
        f"Panel's floor per arrival: {args.rounds} rounds of {args.arrivals} arrivals per "
        f"layer; {os.cpu_count()} CPUs, load average {load_before[0]:.2f} → "
        f"{load_after[0]:.2f}; commit {commit}"
    )
    print(header)
    print(markdown_table(rows, args.arrivals))
    for phase in phases:
        for error in phase.errors[:3]:
            print(f"  error ({phase.layer}, {phase.mode}): {error}")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = args.out or RESULTS / f"floor-{stamp}.json"
    report = {
        "header": header,
        "command": sys.argv,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "summary": rows,
        "phases": [{**phase.__dict__} for phase in phases],
    }
    out.write_text(json.dumps(report, indent=1, default=str))
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


if __name__ == "__main__":
    main()
