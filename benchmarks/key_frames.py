"""Keydown → first frame with the new heatmap, measured in the page: shared by
bench_offline_keys.py (the exported file) and bench_served_keys.py (the served page).

What one sample is (issue 46's definition): a capture-phase ``keydown`` listener on
``window``, installed before the page's own scripts run, stamps ``performance.now()``; the
heatmap's ColumnDataSource, found through BokehJS's public document API, has a listener on
its ``data`` property's change signal that requests an animation frame and stamps the time
in it. The sample is that frame's time − the keydown's. Each sample also keeps, so a table
says where the time goes: when a served page's numbers last came over a websocket, when the
data was set (the page's own work: its number source and drawing code), when Bokeh's own
listeners on the source had run, when BokehJS's heatmap plot view had repainted its canvas
(its ``repainted`` signal, in an animation frame after ours), and when the frame was
painted (a message posted from the animation frame runs once the main thread has rendered
that frame).

Nothing here reads the page's internals: the source is the ``heatmap_image`` renderer's (the
file and the served figures of every commit since 883d946 name it so), or the served
figures' record (``SdpaDrawnFigures[0].models.source``), or the visible image renderer of
the figure named ``heatmap`` (a page whose heatmap the server still drew).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_support import CHROMIUM, CHROMIUM_ARGS

FRAME_S = 1 / 60
"""One frame of a 60 Hz display (headless Chromium's frame clock)."""

SLIDERS = {"temperature": ("temperature", False), "d_k": ("d_k (key dimension)", True)}
"""Each key kind: its slider's accessible name (its label in app/simulation/spec.py), and
whether it sweeps the grid back and forth (d_k) or alternates between two positions
(temperature), as bench_export.py moves them."""

QUIET_MS = 150
"""A key waits until no Bokeh model of the page has changed for this long: the lesson and
the histograms the page draws after the heatmap are done, and the key finds an idle page."""

WARM_UP_PRESSES = 3
"""Keys of each kind pressed on a page as it opens, before any is counted."""

WAIT_MS = 60_000
"""Playwright's limit for any one wait: a stuck page fails the run instead of hanging it."""

INIT_JS = """(() => {
  // Installed before the page's scripts (add_init_script): this capture listener on window
  // runs before any of the page's own key handlers.
  const bench = { key: null, samples: [], lastChange: performance.now(), source: null };
  window.__keyFrames = bench;
  const watched = new Set();
  // Every Bokeh model change in any document (the lesson's too): the page is quiet once
  // none has come for a while.
  const watchDocuments = () => {
    const documents = [...((window.Bokeh && Bokeh.documents) || [])];
    for (const view of (window.Bokeh && Bokeh.index) || []) {
      const doc = view.model && view.model.document;
      if (doc && !documents.includes(doc)) documents.push(doc);
    }
    for (const doc of documents) {
      if (watched.has(doc)) continue;
      watched.add(doc);
      doc.on_change(() => { bench.lastChange = performance.now(); });
    }
    return documents;
  };
  // The heatmap's figure and its image's source, or null while they are not drawn.
  const heatmap = () => {
    const drawn = window.SdpaDrawnFigures && SdpaDrawnFigures[0] && SdpaDrawnFigures[0].models;
    if (drawn && drawn.source) return { figure: drawn.heatmap, source: drawn.source };
    const documents = watchDocuments();
    for (const doc of documents) {
      const figure = doc.get_model_by_name("heatmap");
      const named = doc.get_model_by_name("heatmap_image");
      const image = named || (figure && figure.renderers.find(
        (r) => r.visible && r.data_source && "weight" in r.data_source.data));
      if (figure && image) return { figure, source: image.data_source };
    }
    return null;
  };
  window.addEventListener("keydown", () => {
    bench.key = {
      t0: performance.now(), message: null, set: null, mapped: null, raf: null,
      repainted: null, painted: null,
    };
    // Marks for a DevTools trace of the same keys (blink.user_timing): where the time went.
    performance.mark("key-frames:keydown");
    watchDocuments();
  }, { capture: true });
  // A served page's numbers come over a websocket (Bokeh's or the session's channel): the
  // last message received before the data was set is when they arrived. A listener added
  // here runs before the handler the page sets later.
  const NativeSocket = window.WebSocket;
  window.WebSocket = class extends NativeSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => {
        const key = bench.key;
        if (key && key.set === null) key.message = performance.now();
      });
    }
  };
  // Returns whether the heatmap's source is there and hooked.
  bench.hook = () => {
    if (bench.source) return true;
    const found = heatmap();
    const view = found && Bokeh.index.find_one(found.figure);
    if (!view) return false;
    const source = found.source;
    bench.source = source;
    watchDocuments();
    // BokehJS's plot view signals each repaint of its canvas: the first after the data was
    // set is the heatmap's new picture drawn (the frame's own rendering follows).
    view.repainted.connect(() => {
      const key = bench.key;
      if (key && key.raf !== null && key.repainted === null) key.repainted = performance.now();
    });
    // The data property's own signal is emitted before the model's change signal, on
    // which Bokeh's glyph views listen: this stamps the page's work alone...
    source.properties.data.change.connect(() => {
      const key = bench.key;
      if (!key || key.set !== null) return;
      key.set = performance.now();
      requestAnimationFrame(() => {
        key.raf = performance.now();
        // A message posted from the animation frame runs once that frame is painted.
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          key.painted = performance.now();
          performance.mark("key-frames:painted");
          bench.samples.push(key);
        };
        channel.port2.postMessage(null);
      });
    });
    // ...and this one, connected after Bokeh's views, runs once their listeners have.
    source.change.connect(() => {
      const key = bench.key;
      if (key && key.set !== null && key.mapped === null) key.mapped = performance.now();
    });
    return true;
  };
})();"""
"""The page's timing hook: pass to ``add_init_script``, then call ``__keyFrames.hook()``."""

QUIET_JS = f"""(count) => __keyFrames.samples.length >= count
  && performance.now() - __keyFrames.lastChange >= {QUIET_MS}"""

POSITION_JS = """(element) => element.tagName === "INPUT"
  ? [Number(element.min), Number(element.max), Number(element.value)]
  : ["aria-valuemin", "aria-valuemax", "aria-valuenow"].map(
      (name) => Number(element.getAttribute(name)))"""
"""A slider's bounds and position: the page's range input, or an older page's ARIA slider."""


def launch(playwright: Any) -> Any:
    """Debian's headless Chromium (``playwright install`` cannot download one here)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


@dataclass
class Tab:
    """One page measured: its name in the table, its n, the Playwright page, its sliders."""

    name: str
    n: int
    page: Any
    sliders: dict[str, Slider]


def open_tab(browser: Any, name: str, n: int, url: str, route: Any = None) -> Tab:
    """Open ``url`` in a new tab with the timing hook (and ``route`` for every request), and
    wait until its heatmap's source is hooked and the page is quiet."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    if route is not None:
        page.route("**/*", route)
    page.add_init_script(INIT_JS)
    page.goto(url)
    page.wait_for_function("() => window.__keyFrames.hook()", timeout=WAIT_MS)
    page.wait_for_function(QUIET_JS, arg=0, timeout=WAIT_MS)
    sliders = {kind: Slider(label, sweep) for kind, (label, sweep) in SLIDERS.items()}
    # The first keys of a page pay for its first calls (compiling, caches): not counted.
    for slider in sliders.values():
        press(page, slider, WARM_UP_PRESSES, random.Random(1))
    return Tab(name, n, page, sliders)


@dataclass
class Slider:
    """How one kind of key moves a slider: ``sweep`` walks from end to end and back (d_k);
    otherwise it alternates between two neighbouring positions (temperature)."""

    label: str
    sweep: bool
    direction: str = "ArrowRight"

    def next_key(self, page: Any) -> str:
        """The key that moves the slider to a position it does not show now."""
        low, high, value = page.get_by_role("slider", name=self.label, exact=True).evaluate(
            POSITION_JS
        )
        if value >= high:
            self.direction = "ArrowLeft"
        elif value <= low:
            self.direction = "ArrowRight"
        key = self.direction
        if not self.sweep:
            self.direction = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
        return key


@dataclass
class Samples:
    """One (page, n, key kind)'s samples: each a dict of page times (ms) from the keydown."""

    rows: list[dict[str, float]] = field(default_factory=list)

    def add(self, key: dict[str, float]) -> None:
        """Keep one key's stamps as times from its keydown."""
        t0 = key["t0"]
        self.rows.append(
            {
                "raf": key["raf"] - t0,
                # No message on the offline page: its numbers are computed in the page.
                "message": (key["message"] or t0) - t0,
                "set": key["set"] - t0,
                "mapped": (key["mapped"] or key["set"]) - t0,
                "painted": key["painted"] - t0,
                # Bokeh repaints in an animation frame after ours (or, throttled, later).
                "repainted": (key["repainted"] or key["painted"]) - t0,
            }
        )

    def series(self, name: str) -> list[float]:
        """One stamp's times (ms) over the samples."""
        return [row[name] for row in self.rows]


def press(page: Any, slider: Slider, presses: int, pauses: random.Random) -> list[dict]:
    """Press keys on ``slider`` ``presses`` times, each on a quiet page; the keys' stamps."""
    page.bring_to_front()
    page.get_by_role("slider", name=slider.label, exact=True).focus()
    before = page.evaluate("__keyFrames.samples.length")
    for count in range(1, presses + 1):
        key = slider.next_key(page)
        # A key pressed as soon as the page is quiet would come at about the same point
        # between two display ticks every time; a student's comes at any point.
        time.sleep(pauses.uniform(0.0, 2 * FRAME_S))
        page.keyboard.press(key)
        page.wait_for_function(QUIET_JS, arg=before + count, timeout=WAIT_MS)
    return page.evaluate("(n) => __keyFrames.samples.slice(n)", before)


def p90(values: list[float]) -> float:
    """Nearest-rank 90th percentile: the smallest value at or above 90 % of them."""
    return sorted(values)[math.ceil(0.9 * len(values)) - 1]


TABLE_HEAD = (
    "| page | n | key | presses | keydown → rAF median | p90 | → painted median | p90 "
    "| → last socket message | → data set | Bokeh's listeners | → rAF "
    "| rAF → Bokeh repainted | repainted → painted |\n"
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)
"""The table's columns: the target's measure (keydown → rAF) and the painted frame, median
and p90, then the medians of the parts in order (a served page's numbers arriving; the data
set; Bokeh's synchronous listeners on it; the wait for the frame; Bokeh's repaint of the
heatmap's canvas in that frame; the rest of the frame's rendering)."""


def _gaps(samples: Samples, start: str, end: str) -> list[float]:
    return [b - a for a, b in zip(samples.series(start), samples.series(end), strict=True)]


def table_row(page: str, n: int, key: str, samples: Samples) -> str:
    """One markdown row of :data:`TABLE_HEAD` for one (page, n, key kind)."""
    raf, painted = samples.series("raf"), samples.series("painted")
    med = statistics.median
    parts = [
        samples.series("message"),
        samples.series("set"),
        _gaps(samples, "set", "mapped"),
        _gaps(samples, "mapped", "raf"),
        _gaps(samples, "raf", "repainted"),
        _gaps(samples, "repainted", "painted"),
    ]
    return (
        f"| {page} | {n} | {key} | {len(raf)} | {med(raf):.1f} | {p90(raf):.1f} "
        f"| {med(painted):.1f} | {p90(painted):.1f} | "
        + " | ".join(f"{med(values):.1f}" for values in parts)
        + " |"
    )


def run_rounds(tabs: list[Tab], rounds: int, presses: int) -> dict[tuple, Samples]:
    """Press ``presses`` keys of each kind in every tab, ``rounds`` times, the tabs' order
    reversed every other round, so each page sees the same spells of load; the samples by
    (page name, n, key kind)."""
    results: dict[tuple, Samples] = {}
    pauses = random.Random(0)
    for round_number in range(rounds):
        for tab in tabs if round_number % 2 == 0 else tabs[::-1]:
            for kind, slider in tab.sliders.items():
                samples = results.setdefault((tab.name, tab.n, kind), Samples())
                for key in press(tab.page, slider, presses, pauses):
                    samples.add(key)
        print(f"round {round_number + 1}/{rounds} done", file=sys.stderr)
    return results


def add_round_options(parser: argparse.ArgumentParser) -> None:
    """The options both benchmarks take: rounds and presses per round."""
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds (6)")
    parser.add_argument("--presses", type=int, default=10, help="keys per kind a round (10)")
    parser.add_argument("--samples", type=Path, help="also write every sample here (JSON)")


def print_results(
    results: dict[tuple, Samples], load_at_start: float, samples_path: Path | None = None
) -> None:
    """Print the markdown table, by n and key kind, then the machine's load; write every
    sample to ``samples_path`` if given (a list of {page, n, key, rows})."""
    if samples_path is not None:
        rows = [
            {"page": name, "n": n, "key": kind, "rows": samples.rows}
            for (name, n, kind), samples in results.items()
        ]
        samples_path.write_text(json.dumps(rows, indent=1))
    print(TABLE_HEAD)
    for (name, n, kind), samples in sorted(results.items(), key=lambda item: item[0][1:]):
        print(table_row(name, n, kind, samples))
    print(
        f"\nTimes in ms. Load average (1 min) {load_at_start:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs; Chromium {CHROMIUM}."
    )
