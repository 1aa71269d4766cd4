"""Benchmark of the exported page: first paint and key press → painted times in Chromium.

Exports the default page (n ≤ 128, d_k ≤ 512) into a temporary folder and opens it from
file:// in headless Chromium with the network blocked. First, ``--loads`` times, the
default page: navigation → first contentful paint, → the first frame painted after the page
computed its first screen (target ≤ 1 s), and → the first frame painted once the lesson's
document (drawn after the first screen) came and its views were all drawn. Then, for n = 32
and n = 128, it moves the d_k slider up through all its steps and back and the temperature
slider back and forth, with the keyboard. Each sample runs in the page from the keydown to
the first frame painted after the page updated its Bokeh models (requestAnimationFrame,
then a message posted from it, which runs once that frame is on screen): the frame that
shows the new heatmap. The histograms, when d_k moved, are drawn on the next frame: "d_k →
histograms" is the keydown to the first frame painted after they were updated. The lesson's
views (collapse curves, one query, the output) update on later frames; their own figure is
the keydown to the first frame painted after the last of them was updated, and the next key
waits for them. Last, the d_k slider moves as under a held arrow key (a press every 33 ms,
not waiting for the page), where the lesson is drawn during the burst. Target: median ≤
16.7 ms (one frame at 60 Hz) at n = 128 for the frame that shows the new heatmap.

The machine these run on is shared: compare medians of one run, and repeat. To compare
builds, export each (``sdpa-sim export``) and pass the files with ``--pages``: they are
measured in turn, ``--rounds`` times, so each sees the same spells of load.

    python benchmarks/bench_export.py [--repeats 20] [--loads 7] [--pages A.html B.html]

Its key samples hook the page's own methods (``SdpaExport.page.set``): issue 46's target,
keydown → the first animation frame after the heatmap's data source changed, through
BokehJS's public API only and so for any build, is bench_offline_keys.py's.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from app.export import export_html
from app.simulation.spec import CONTROL_BY_NAME

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_support import CHROMIUM, CHROMIUM_ARGS

TIMING_HOOK = """() => {
    const bench = { t0: 0, samples: [], histograms: [], lesson: [] };
    window.__bench = bench;
    document.addEventListener("keydown", () => { bench.t0 = performance.now(); }, true);
    // A message posted from the next animation frame runs once that frame is painted.
    const timeNextFrame = (samples) => {
        const t0 = bench.t0;
        requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => samples.push(performance.now() - t0);
            channel.port2.postMessage(null);
        });
    };
    const page = SdpaExport.page;
    // The page's own steps, and its lesson's (offline_lesson.js) once all views are drawn;
    // a file exported before the lesson had an object of its own kept it on the page.
    const lesson = page.lesson ?? page;
    for (const [target, method, samples] of [
        [page, "set", bench.samples],
        [page, "renderHistograms", bench.histograms],
        [lesson, "lessonDrawn", bench.lesson],
    ]) {
        const original = target[method].bind(target);
        target[method] = (...args) => {
            timeNextFrame(samples);
            return original(...args);
        };
    }
}"""


def _block_network(route: Any) -> None:
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        route.abort()


FRAME_S = 1 / 60
"""One frame of a 60 Hz display."""

HELD_KEY_S = 0.033
"""Time between two presses of a held arrow key (about 30 a second)."""

SERIES = ("samples", "histograms", "lesson")
"""What the timing hook records: the frames after the page updated its Bokeh models, after
it redrew the histograms (d_k moves only) and after it redrew the lesson."""


def _press(page: Any, slider: str, keys: list[str]) -> dict[str, list[float]]:
    """Press ``keys`` on a slider one at a time, each once the lesson has been drawn and a
    random pause later; return the keydown → painted times (ms) of each series of
    :data:`SERIES`."""
    page.get_by_role("slider", name=slider, exact=True).focus()
    before = page.evaluate(f"{list(SERIES)}.map((name) => __bench[name].length)")
    # Chromium starts a frame on the display's next tick (every 16.7 ms): pressed at once
    # after the lesson's last frame, every key would come at about the same point between
    # two ticks and wait about the same time for its frame. A student's key comes at any
    # point; a random pause of up to two frames spreads the keys over them.
    pauses = random.Random(0)
    for count, key in enumerate(keys, start=1):
        time.sleep(pauses.uniform(0.0, 2 * FRAME_S))
        page.keyboard.press(key)
        # The lesson is drawn last.
        page.wait_for_function(
            "([n, m]) => __bench.samples.length >= n && __bench.lesson.length >= m",
            arg=[before[0] + count, before[-1] + count],
        )
    after = page.evaluate(
        "([names, before]) => names.map((name, i) => __bench[name].slice(before[i]))",
        [list(SERIES), before],
    )
    return dict(zip(SERIES, after, strict=True))


def _hold(page: Any, slider: str, keys: list[str], interval_s: float) -> list[float]:
    """Press ``keys`` on a slider every ``interval_s`` without waiting for the page, as a
    held arrow key does; return the keydown → painted times (ms) of the heatmap's frames."""
    page.get_by_role("slider", name=slider, exact=True).focus()
    before = page.evaluate("[__bench.samples.length, __bench.lesson.length]")
    start = time.perf_counter()
    for count, key in enumerate(keys):
        time.sleep(max(0.0, start + count * interval_s - time.perf_counter()))
        page.keyboard.press(key)
    page.wait_for_function(
        "([n, m]) => __bench.samples.length >= n && __bench.lesson.length > m",
        arg=[before[0] + len(keys), before[1]],
    )
    return page.evaluate("(n) => __bench.samples.slice(n)", before[0])


FIRST_PAINT_HOOK = """() => {
    // Wraps the page's start (called once BokehJS has built the first document) to time
    // the frame that first shows the computed first screen, and its lesson's lessonDrawn to
    // time the frame after the lesson's document came and its views were all drawn.
    let api;
    const timeNextFrame = (name) => requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => { window[name] = performance.now(); };
        channel.port2.postMessage(null);
    });
    Object.defineProperty(window, "SdpaExport", {
        configurable: true,
        get: () => api,
        set: (value) => {
            api = value;
            const start = api.start.bind(api);
            api.start = (...args) => {
                start(...args);
                timeNextFrame("__painted");
                const page = api.page;
                const lesson = page.lesson ?? page;
                const lessonDrawn = lesson.lessonDrawn.bind(lesson);
                lesson.lessonDrawn = () => {
                    lessonDrawn();
                    if (page.sectionsReady && window.__lesson === undefined) {
                        window.__lesson = 0;
                        timeNextFrame("__lesson");
                    }
                };
            };
        },
    });
}"""


def _first_paint(browser: Any, path: Path, loads: int) -> dict[str, list[float]]:
    """Open the default page ``loads`` times; the times (ms) from navigation to its first
    contentful paint, to the first frame painted after it computed the first screen, and
    to the first frame painted with the lesson's figures drawn."""
    contentful, painted, lesson = [], [], []
    for _ in range(loads):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.route("**/*", _block_network)
        page.add_init_script(f"({FIRST_PAINT_HOOK})()")
        page.goto(path.as_uri())
        page.wait_for_function("() => window.__painted !== undefined && window.__lesson > 0")
        first, computed, drawn = page.evaluate(
            "[performance.getEntriesByName('first-contentful-paint')[0].startTime,"
            " window.__painted, window.__lesson]"
        )
        contentful.append(first)
        painted.append(computed)
        lesson.append(drawn)
        page.close()
    return {
        "first contentful paint": contentful,
        "computed page painted": painted,
        "lesson painted": lesson,
    }


def _measure(browser: Any, path: Path, n: int, repeats: int) -> dict[str, list[float]]:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.route("**/*", _block_network)
    page.goto(f"{path.as_uri()}?n={n}&d_k=1")
    page.wait_for_function("() => window.SdpaExport !== undefined && SdpaExport.page !== null")
    ready = page.evaluate("performance.now()")
    page.evaluate(TIMING_HOOK)
    steps = page.evaluate("SdpaExport.config.data.d_values.length") - 1
    # A slider's accessible name is its label in app/simulation/spec.py.
    d_k, temperature = (CONTROL_BY_NAME[name].label for name in ("d_k", "temperature"))
    d_k_moves = _press(page, d_k, ["ArrowRight"] * steps + ["ArrowLeft"] * steps)
    temperature_moves = _press(page, temperature, ["ArrowRight", "ArrowLeft"] * repeats)
    held = _hold(page, d_k, ["ArrowRight"] * steps + ["ArrowLeft"] * steps, HELD_KEY_S)
    page.close()
    return {
        "load → ready": [ready],
        "d_k slider": d_k_moves["samples"],
        "d_k → histograms": d_k_moves["histograms"],
        "d_k → lesson": d_k_moves["lesson"],
        "temperature slider": temperature_moves["samples"],
        "temperature → lesson": temperature_moves["lesson"],
        f"d_k held ({HELD_KEY_S * 1000:.0f} ms)": held,
    }


def _report(page: str, name: str, samples: list[float]) -> None:
    # Nearest rank: the smallest sample at or above 90 % of them.
    p90 = sorted(samples)[math.ceil(0.9 * len(samples)) - 1]
    print(
        f"{page}  {name:<24} median {statistics.median(samples):6.1f} ms"
        f"  p90 {p90:6.1f} ms  ({len(samples)} samples)"
    )


def _measure_page(browser: Any, path: Path, options: argparse.Namespace) -> None:
    """Print the first paints and the key presses' medians of one exported file."""
    size = path.stat().st_size
    print(f"{path.name}: {size:,} bytes ({size / 1e6:.2f} MB)")
    for name, samples in _first_paint(browser, path, options.loads).items():
        _report("default", name, samples)
    for n in options.n:
        for name, samples in _measure(browser, path, n, options.repeats).items():
            _report(f"n = {n:3d}", name, samples)


def main() -> None:
    """Export (or take ``--pages``), measure and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="temperature moves each way")
    parser.add_argument("--loads", type=int, default=7, help="first paints of the default page")
    parser.add_argument("--n", type=int, nargs="+", default=[32, 128], help="sequence lengths")
    parser.add_argument("--pages", type=Path, nargs="+", help="exported files to compare")
    parser.add_argument("--rounds", type=int, default=1, help="times each page is measured")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        pages = options.pages
        if not pages:
            pages = [Path(folder) / "sdpa-sim.html"]
            export_html(pages[0])
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for round_number in range(1, options.rounds + 1):
                for path in pages:
                    if options.rounds > 1:
                        print(f"round {round_number}: ", end="")
                    _measure_page(browser, path.resolve(), options)
            browser.close()


if __name__ == "__main__":
    main()
