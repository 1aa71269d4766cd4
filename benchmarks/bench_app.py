"""Benchmarks of the served app: first render, slider → painted, server update time, bytes.

Starts ``panel serve app/main.py`` on a free local port (5100–5199), drives it with Debian's
Chromium through Playwright, times the server-side work in-process, and prints medians as
a markdown table for docs/performance.md::

    python benchmarks/bench_app.py            # about two minutes on two cores
    python benchmarks/bench_app.py --runs 5   # quicker, noisier

What is measured:

- first render: navigation start → the first-screen figures have drawn the session's first
  frame (app/page/assets/drawn_figures.js) and the heatmap's canvas is painted (a non-background
  pixel at the centre of its frame), stamped in the page.
- slider → painted: a keyboard press on the temperature slider → the first animation frame
  at which the heatmap has repainted with a new weights array, both stamped in the page.
- keydown → frame after the new heatmap data: the same press → the first frame painted after
  the heatmap's source received the new weights (an animation frame requested when they
  arrive, then a message posted from it, which runs once that frame is painted), as
  benchmarks/bench_export.py times the offline file: the two pages compare.

The first screen's figures are not models of the session's document: the page embeds them
in documents of their own and draws the session's frames into them. Their models are read
from the record the component pushes onto ``window.SdpaDrawnFigures`` (``models`` by
figures.js's names, ``frames`` drawn); the lesson's in ``window.SdpaDrawnLessons``
(app/page/assets/drawn_lesson.js).
- server update: a slider's move handed in-process to the drawn controls, as the page's
  message is (``DrawnControls.take_message``) → model refresh → the first screen's frame
  (the app's own ``pn.io.hold``, the page attached to a Bokeh ``Document`` with a change
  listener, as in a session without its channel) → its PATCH-DOC message built; then the
  same for the update after the plots (the controls the move did not come from, the
  lesson's views and the URL), which a session sends on its next tick.
  d_k moves run with the app's derived-data caches cleared (a d_k no session has used yet)
  and, separately, between two d_k already used (cache hits); temperature moves reuse the
  cached raw scores, as in the app, and are timed with the lesson's collapse curves cached
  and, separately, computed (a temperature not used yet).
- bytes per update: websocket frame payloads the browser receives for one temperature move.

Only loopback addresses are used, and every loop and wait is bounded.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from browser_support import CHROMIUM, CHROMIUM_ARGS, served_app  # noqa: E402

sys.path.insert(0, str(REPO))
from app.served.components.first_screen import GATE_LABEL  # noqa: E402

WAIT_MS = 60_000
"""Playwright's limit for any one wait: a stuck page fails the run instead of hanging it."""

TEMPERATURE_SLIDER = "temperature"
TEMPERATURE_STEPS = (("ArrowRight", "1.25"), ("ArrowLeft", "1"))
"""Alternate between two slider positions, so every press changes the weights."""

FIRST_PAINT_INIT_JS = """(() => {
  const painted = () => {
    const record = window.SdpaDrawnFigures && window.SdpaDrawnFigures[0];
    if (!record || !record.models || !(record.frames > 0)) return false;
    const figure = record.models.heatmap;
    const shown = record.models.source.data.shown;
    if (!shown || !shown[0] || !shown[0].length) return false;
    const view = Bokeh.index.find_one(figure);
    if (!view || !view.has_finished()) return false;
    const frame = view.frame.bbox;
    const ratio = view.canvas_view.pixel_ratio;
    const [r, g, b, a] = view.canvas_view.compose().canvas.getContext('2d').getImageData(
      Math.floor((frame.x + frame.width / 2) * ratio),
      Math.floor((frame.y + frame.height / 2) * ratio), 1, 1).data;
    return a > 0 && !(r === 255 && g === 255 && b === 255);
  };
  const poll = () => {
    let done = false;
    try { done = painted(); } catch (error) { done = false; }
    if (done) window.__sdpaFirstPaint = performance.now();
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})();"""
"""Stamps ``window.__sdpaFirstPaint`` (ms since navigation start) once the heatmap is painted."""

READY_JS = """() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle
  && window.SdpaDrawnFigures && SdpaDrawnFigures[0] && SdpaDrawnFigures[0].frames > 0
  && window.SdpaDrawnLessons && SdpaDrawnLessons.some((lesson) => lesson.models
    && lesson.models.row_figure)"""
"""The whole page is up: the first screen and the lesson (see :func:`open_lesson`)."""

ARM_JS = """() => {
  const {models} = SdpaDrawnFigures[0];
  // The weights image: each frame that carries weights gives the source a new array.
  const source = models.source;
  const view = Bokeh.index.find_one(models.heatmap);
  const before = source.data.weight[0];
  const bench = window.__sdpaBench = {start: null, painted: null, frame: null};
  window.addEventListener('keydown', () => { bench.start = performance.now(); },
                          {capture: true, once: true});
  const arrived = () => {
    if (bench.arrived || source.data.weight[0] === before) return;
    bench.arrived = true;
    // A message posted from the next animation frame runs once that frame is painted.
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { bench.frame = performance.now(); };
      channel.port2.postMessage(null);
    });
  };
  source.change.connect(arrived);
  let repainted = false;
  const slot = () => { if (source.data.weight[0] !== before) repainted = true; };
  view.repainted.connect(slot);
  const poll = () => {
    if (repainted) {
      bench.painted = performance.now();
      view.repainted.disconnect(slot);
    } else {
      requestAnimationFrame(poll);
    }
  };
  requestAnimationFrame(poll);
}"""
"""Arms one measurement: the key press starts the clock; the first animation frame after a
repaint that shows a new weights array stops it."""

FRAME_ROW = "keydown → the frame after the new heatmap data (temperature)"

FRAME_TARGETS = {32: "≤ 20 ms", 256: "≤ 30 ms", 1024: "≤ 120 ms"}
"""Issue 24's targets for a served page's key press, by n."""

BYTES_TARGETS = {1024: "≤ 2 B"}
"""Issue 24's target for what a temperature move sends at n = 1024, per heatmap cell."""

FOLLOW_UP_ROW = "  … and the update after the plots (other controls, lesson, URL) sent"

URL_HAS_JS = """(expected) => new URLSearchParams(window.location.search).get(expected[0])
  === expected[1]"""


@dataclass
class Row:
    """One line of the results table."""

    measurement: str
    n: int
    d_k: int
    values: list[float]
    unit: str
    target: str = ""

    def median(self) -> str:
        """The median, formatted in this row's unit."""
        value = statistics.median(self.values)
        if self.unit == "s":
            return f"{value:.2f} s"
        if self.unit == "ms":
            return f"{value:.1f} ms"
        if self.unit == "B":
            return f"{value:.2f} B"
        return f"{value / 1024:.0f} KiB"


def measure_first_render(browser: object, url: str, runs: int) -> list[float]:
    """Seconds from navigation start to the painted heatmap, one fresh context per run."""
    seconds = []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(FIRST_PAINT_INIT_JS)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("() => window.__sdpaFirstPaint !== undefined", timeout=WAIT_MS)
        seconds.append(page.evaluate("() => window.__sdpaFirstPaint") / 1000)
        context.close()
    return seconds


def open_lesson(page: object) -> None:
    """Open the lesson below the plots, as a student who reaches it does: a move then also
    updates the lesson's views, as it would for that student."""
    page.get_by_role("button", name=GATE_LABEL).dispatch_event("click", timeout=WAIT_MS)


def measure_slider(
    browser: object, url: str, n: int, runs: int, warmup: int = 2
) -> tuple[list[float], list[float], list[float]]:
    """Key press → painted (ms), key press → the frame after the new heatmap data (ms) and
    websocket bytes received, per temperature move at ``n``."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    received = [0]

    def count(payload: str | bytes) -> None:
        received[0] += len(payload.encode() if isinstance(payload, str) else payload)

    page.on("websocket", lambda socket_: socket_.on("framereceived", count))
    page.goto(f"{url}?n={n}&d_k=64&temperature=1")
    open_lesson(page)
    page.wait_for_function(READY_JS, timeout=WAIT_MS)
    slider = page.get_by_role("slider", name=TEMPERATURE_SLIDER, exact=True)
    slider.focus()
    latencies: list[float] = []
    frames: list[float] = []
    sizes: list[float] = []
    for index in range(warmup + runs):
        key, temperature = TEMPERATURE_STEPS[index % 2]
        page.evaluate(ARM_JS)
        received[0] = 0
        slider.press(key)
        page.wait_for_function(
            "() => window.__sdpaBench.painted !== null && window.__sdpaBench.start !== null"
            " && window.__sdpaBench.frame !== null",
            timeout=WAIT_MS,
        )
        # The URL is written in the same update: once it shows the value, all has arrived.
        page.wait_for_function(URL_HAS_JS, arg=["temperature", temperature], timeout=WAIT_MS)
        bench = page.evaluate("() => window.__sdpaBench")
        if index >= warmup:
            latencies.append(bench["painted"] - bench["start"])
            frames.append(bench["frame"] - bench["start"])
            sizes.append(float(received[0]))
    context.close()
    return latencies, frames, sizes


def measure_server(n: int, d_k: int, runs: int) -> dict[str, list[float]]:
    """Milliseconds of server work per slider move, in-process, for a d_k and a temperature move.

    Each move is timed in two parts, as a served session sends them: the first screen (state
    change → refresh → heatmap, histograms, readouts → PATCH-DOC built), then the update
    after the plots on the next tick (the other controls showing the value, the lesson's
    views and the URL → PATCH-DOC built).
    """
    from bokeh.document import Document
    from bokeh.document.events import DocumentPatchedEvent
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc
    from panel.io.state import state as pn_state

    import app.simulation.parts as derived
    import sdpa_core.metrics
    from app.served.session import Session
    from app.server.panel_tuning import tune_process
    from app.simulation.spec import CONTROL_BY_NAME, D_K_GRID

    tune_process()  # as app/main.py does for a served session
    later_updates: list[Callable[[], None]] = []
    simulation = Session({"n": str(n), "d_k": str(d_k)}, defer=later_updates.append)
    document = Document()
    document.add_root(simulation.page.get_root(document))
    # A session sends the whole document once when the page connects; later messages
    # only reference the models it already has.
    document.to_json()
    # As a served session is once its page is ready (Panel's ``state._on_load``), on the
    # thread that owns the document: otherwise ``pn.io.hold`` drops the changes it
    # collected (unconnected: the document would still go out in full) or leaves them to
    # a next tick nothing runs here (another thread), and no frame would be built.
    pn_state._connected[document] = True
    pn_state._thread_id_[document] = threading.get_ident()
    events: list[object] = []
    document.on_change(events.append)
    protocol = Protocol()
    score_caches = tuple(
        function
        for function in vars(derived).values()
        if callable(function) and hasattr(function, "cache_clear")
    )
    # A temperature no session has used: the lesson's collapse curves are computed.
    curve_cache = (sdpa_core.metrics._collapse_curve,)
    neighbour = D_K_GRID[D_K_GRID.index(d_k) - 1]

    def timed(step: Callable[[], None]) -> float:
        events.clear()
        start = time.perf_counter()
        # The app wraps each message in pn.io.hold() itself; the session's document
        # listener (here: ``events.append``) is what a served session has too.
        with set_curdoc(document):
            step()
        # What a session sends: the model changes (not its callbacks). The move itself came
        # as a message, which changes no model.
        patched = [event for event in events if isinstance(event, DocumentPatchedEvent)]
        protocol.create("PATCH-DOC", patched)
        return 1e3 * (time.perf_counter() - start)

    def run_later_updates() -> None:
        while later_updates:
            later_updates.pop()()

    def move(change: Callable[[], None], clear: Sequence[object] = ()) -> tuple[float, float]:
        for cache in clear:
            cache.cache_clear()
        first = timed(change)
        lesson = timed(run_later_updates)
        return first, first + lesson

    results: dict[str, list[float]] = {
        "d_k": [],
        "d_k+lesson": [],
        "d_k warm": [],
        "temperature": [],
        "temperature+lesson": [],
        "temperature+lesson new": [],
    }
    # Moves go through the drawn controls, as a student's do (the message a slider's page
    # sends, on the session's channel or over Bokeh's websocket).
    controls = simulation.layout.drawn_controls

    def slide(name: str, value: float) -> None:
        controls.take_message({"name": name, "index": CONTROL_BY_NAME[name].grid.index(value)})

    try:
        _time_moves(slide, d_k, neighbour, runs, move, results, score_caches, curve_cache)
    finally:
        document.clear()
    return results


def _time_moves(
    slide: Callable[[str, float], None],
    d_k: int,
    neighbour: int,
    runs: int,
    move: Callable[..., tuple[float, float]],
    results: dict[str, list[float]],
    score_caches: Sequence[object],
    curve_cache: Sequence[object],
) -> None:
    for index in range(runs + 2):
        target = neighbour if index % 2 == 0 else d_k
        first, total = move(lambda target=target: slide("d_k", target), clear=score_caches)
        temperature = 1.25 if index % 2 == 0 else 1.0
        warm = move(lambda t=temperature: slide("temperature", t))
        back_to = 1.0 if temperature != 1.0 else 1.25
        new = move(lambda t=back_to: slide("temperature", t), clear=curve_cache)
        move(lambda t=temperature: slide("temperature", t))
        # Back and forth between two d_k some session has already used: cache hits.
        back = d_k if target == neighbour else neighbour
        move(lambda back=back: slide("d_k", back))
        again = move(lambda target=target: slide("d_k", target))
        if index >= 2:  # the first moves pay for imports and first-call setup
            results["d_k"].append(first)
            results["d_k+lesson"].append(total)
            results["d_k warm"].append(again[0])
            results["temperature"].append(warm[0])
            results["temperature+lesson"].append(warm[1])
            results["temperature+lesson new"].append(new[1])


def _table(rows: list[Row]) -> str:
    lines = [
        "| measurement | n | d_k | median | runs | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {row.measurement} | {row.n} | {row.d_k} | {row.median()} | {len(row.values)} "
        f"| {row.target} |"
        for row in rows
    ]
    return "\n".join(lines)


def _environment() -> str:
    import bokeh
    import panel

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"Python {platform.python_version()}, Panel {panel.__version__}, Bokeh "
        f"{bokeh.__version__}, {os.cpu_count()} CPUs, load average {load:.1f} at start, "
        f"Chromium {CHROMIUM}"
    )


def main(argv: list[str] | None = None) -> None:
    """Run every benchmark and print the markdown table and how to reproduce it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per measurement (15)")
    options = parser.parse_args(argv)
    runs = max(3, options.runs)
    environment = _environment()
    rows: list[Row] = []

    for n, d_k, target in ((256, 64, "≤ 5 ms"), (1024, 1024, "≤ 60 ms")):
        server = measure_server(n, d_k, runs)
        rows += [
            Row(
                "server: d_k move, first screen sent (cold caches)",
                n,
                d_k,
                server["d_k"],
                "ms",
                target,
            ),
            Row(FOLLOW_UP_ROW, n, d_k, server["d_k+lesson"], "ms"),
            Row(
                "server: d_k move to a d_k already used, first screen sent",
                n,
                d_k,
                server["d_k warm"],
                "ms",
                target,
            ),
            Row(
                "server: temperature move, first screen sent",
                n,
                d_k,
                server["temperature"],
                "ms",
                target,
            ),
            Row(FOLLOW_UP_ROW, n, d_k, server["temperature+lesson"], "ms"),
            Row(
                "  … the same to a temperature not used yet (collapse curves computed)",
                n,
                d_k,
                server["temperature+lesson new"],
                "ms",
            ),
        ]

    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as scratch,
        served_app(Path(scratch) / "server.log") as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        first = measure_first_render(browser, server.url, max(3, runs // 2))
        rows.insert(
            0, Row("first render: navigation → heatmap painted", 32, 64, first, "s", "≤ 1 s")
        )
        for n in (32, 256, 1024):
            latencies, frames, sizes = measure_slider(browser, server.url, n, runs)
            target = "≤ 150 ms" if n == 256 else ""
            rows.append(
                Row("slider → painted (temperature, keyboard)", n, 64, latencies, "ms", target)
            )
            rows.append(Row(FRAME_ROW, n, 64, frames, "ms", FRAME_TARGETS.get(n, "")))
            rows.append(Row("bytes received per temperature move", n, 64, sizes, "bytes"))
            per_cell = [size / (n * n) for size in sizes]
            rows.append(Row("  … per heatmap cell", n, 64, per_cell, "B", BYTES_TARGETS.get(n, "")))
        browser.close()

    print(_table(rows))
    print()
    print(f"Measured with {environment}.")
    print("Reproduce: python benchmarks/bench_app.py")


if __name__ == "__main__":
    main()
