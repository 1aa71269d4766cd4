"""Benchmark of the exported page: slider change → painted time in Chromium, and file size.

Exports the default page (n ≤ 128, d_k ≤ 512) into a temporary folder, opens it from
file:// in headless Chromium with the network blocked, and for n = 32 and n = 128 moves
the d_k slider up through all its steps and back (new raw scores and histograms each step
up, cached ones on the way down) and the temperature slider back and forth, with the
keyboard. Each sample runs in the page from the keydown to the first frame painted after
the page updated its Bokeh models (requestAnimationFrame, then a message posted from it,
which runs once that frame is on screen). The lesson's views (collapse curves, one query,
the output) update on a later frame; their own figure is the keydown to the first frame
painted after they were updated, and the next key waits for them. Target: median ≤ 16.7 ms
(one frame at 60 Hz) at n = 128 for the frame that shows the new heatmap.

    python benchmarks/bench_export.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from app.controls_spec import CONTROL_BY_NAME
from app.export import export_html

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_support import CHROMIUM, CHROMIUM_ARGS

TIMING_HOOK = """() => {
    const bench = { t0: 0, samples: [] };
    window.__bench = bench;
    document.addEventListener("keydown", () => { bench.t0 = performance.now(); }, true);
    const page = SdpaExport.page;
    const set = page.set.bind(page);
    page.set = (changes) => {
        const t0 = bench.t0;
        // A message posted from the next animation frame runs once that frame is painted.
        requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => bench.samples.push(performance.now() - t0);
            channel.port2.postMessage(null);
        });
        set(changes);
    };
    bench.lesson = [];
    const renderLesson = page.renderLesson.bind(page);
    page.renderLesson = () => {
        const t0 = bench.t0;
        renderLesson();
        requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => bench.lesson.push(performance.now() - t0);
            channel.port2.postMessage(null);
        });
    };
}"""


def _block_network(route: Any) -> None:
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        route.abort()


def _press(page: Any, slider: str, keys: list[str]) -> tuple[list[float], list[float]]:
    """Press ``keys`` on a slider one at a time, each once the lesson has been drawn;
    return the change → painted times (ms) of the first screen and of the lesson."""
    page.get_by_role("slider", name=slider, exact=True).focus()
    before = page.evaluate("[__bench.samples.length, __bench.lesson.length]")
    for count, key in enumerate(keys, start=1):
        page.keyboard.press(key)
        page.wait_for_function(
            "([n, m]) => __bench.samples.length >= n && __bench.lesson.length >= m",
            arg=[before[0] + count, before[1] + count],
        )
    return page.evaluate("([n, m]) => [__bench.samples.slice(n), __bench.lesson.slice(m)]", before)


def _measure(browser: Any, path: Path, n: int, repeats: int) -> dict[str, list[float]]:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.route("**/*", _block_network)
    page.goto(f"{path.as_uri()}?n={n}&d_k=1")
    page.wait_for_function("() => window.SdpaExport !== undefined && SdpaExport.page !== null")
    ready = page.evaluate("performance.now()")
    page.evaluate(TIMING_HOOK)
    steps = page.evaluate("SdpaExport.config.data.d_values.length") - 1
    # A slider's accessible name is its label in app/controls_spec.py.
    d_k, temperature = (CONTROL_BY_NAME[name].label for name in ("d_k", "temperature"))
    d_k_samples, d_k_lesson = _press(page, d_k, ["ArrowRight"] * steps + ["ArrowLeft"] * steps)
    temperature_samples, temperature_lesson = _press(
        page, temperature, ["ArrowRight", "ArrowLeft"] * repeats
    )
    page.close()
    return {
        "load → ready": [ready],
        "d_k slider": d_k_samples,
        "d_k → lesson": d_k_lesson,
        "temperature slider": temperature_samples,
        "temperature → lesson": temperature_lesson,
    }


def main() -> None:
    """Export, measure and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="temperature moves each way")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sdpa-sim.html"
        size = export_html(path)
        print(f"file size: {size:,} bytes ({size / 1e6:.2f} MB)")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for n in (32, 128):
                for name, samples in _measure(browser, path, n, options.repeats).items():
                    ordered = sorted(samples)
                    p90 = ordered[int(0.9 * (len(ordered) - 1))]
                    print(
                        f"n = {n:3d}  {name:<20} median {statistics.median(samples):6.1f} ms"
                        f"  p90 {p90:6.1f} ms  ({len(samples)} samples)"
                    )
            browser.close()


if __name__ == "__main__":
    main()
