"""Where a key's time goes: a DevTools trace of keys pressed as key_frames.py presses them.

Opens one page (an exported file or a served page's address) in Debian's headless Chromium,
presses ``--presses`` keys on one slider with key_frames.py's hook (which marks each keydown
and each painted frame in the page's user timing), and records a DevTools trace of them.
For each key, from its keydown mark to its painted mark, it adds up the page's main-thread
work by kind, and prints the medians over the keys::

    python benchmarks/trace_keys.py file:///tmp/new.html?n=128 --key temperature
    python benchmarks/trace_keys.py 'http://127.0.0.1:5601/?n=32' --key d_k

The kinds (Chromium's trace event names): the key's own event handlers (``EventDispatch``:
the page's script, and on the file the kernel's numbers), animation-frame callbacks
(``FireAnimationFrame``: BokehJS's canvas repaints), other tasks' script (timers, messages,
websocket data), style, layout, pre-paint, paint, layerize and commit; "idle" is the part of
the window no main-thread task ran in (the wait for the frame clock or for the server).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from key_frames import launch, open_tab, press

KINDS = {
    "EventDispatch": "key handlers",
    "FireAnimationFrame": "animation frames",
    "FunctionCall": "other script",
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "PrePaint": "pre-paint",
    "Paint": "paint",
    "Layerize": "layerize",
    "Commit": "commit",
}
"""The trace events counted, by what the table calls them. Each is counted only where no
other counted event encloses it (a function call inside a key handler is the handler's)."""

CATEGORIES = ["toplevel", "devtools.timeline", "blink.user_timing", "v8.execute"]
"""Trace categories: tasks, the timeline's events and the page's marks."""

TASKS = {"RunTask", "ThreadControllerImpl::RunTask"}
"""The names a main-thread task has in the trace (older and newer Chromium)."""


def _main_thread_events(trace: dict) -> tuple[list[dict], list[tuple[float, float]]]:
    """The renderer main thread's complete events and the (keydown, painted) windows, in µs."""
    events = trace["traceEvents"]
    marks = [e for e in events if str(e.get("name", "")).startswith("key-frames:")]
    pid = marks[0]["pid"]
    main = {
        e["tid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["pid"] == pid
        and e["args"].get("name") == "CrRendererMain"
    }
    work = [
        e
        for e in events
        if e.get("ph") == "X" and e["pid"] == pid and e["tid"] in main and "dur" in e
    ]
    windows, start = [], None
    for mark in sorted(marks, key=lambda e: e["ts"]):
        if mark["name"] == "key-frames:keydown":
            start = mark["ts"]
        elif start is not None:
            windows.append((start, mark["ts"]))
            start = None
    return work, windows


def _breakdown(work: list[dict], window: tuple[float, float]) -> dict[str, float]:
    """Milliseconds of each kind, and of all tasks, inside ``window``."""
    low, high = window
    inside = sorted(
        (e for e in work if e["ts"] < high and e["ts"] + e["dur"] > low),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    totals = dict.fromkeys([*KINDS.values(), "all tasks"], 0.0)
    counted_until = low
    task_until = low
    for event in inside:
        begin, end = max(event["ts"], low), min(event["ts"] + event["dur"], high)
        if event["name"] in TASKS and end > task_until:
            totals["all tasks"] += (end - max(begin, task_until)) / 1000
            task_until = end
        kind = KINDS.get(event["name"])
        # Enclosed by an event already counted: part of it.
        if kind is None or begin < counted_until:
            continue
        totals[kind] += (end - begin) / 1000
        counted_until = end
    totals["window"] = (high - low) / 1000
    totals["idle"] = totals["window"] - totals["all tasks"]
    return totals


def main() -> None:
    """Trace the keys and print the medians of each kind of work per key."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the page: file:///…html?n=128 or http://127.0.0.1:…/?n=32")
    parser.add_argument("--key", choices=["temperature", "d_k"], default="temperature")
    parser.add_argument("--presses", type=int, default=20, help="keys traced (20)")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        tab = open_tab(browser, "traced", 0, options.url)
        browser.start_tracing(page=tab.page, categories=CATEGORIES)
        press(tab.page, tab.sliders[options.key], options.presses, random.Random(0))
        trace = json.loads(browser.stop_tracing())
        browser.close()
    work, windows = _main_thread_events(trace)
    rows = [_breakdown(work, window) for window in windows]
    print(f"{options.url}, {options.key} keys, {len(rows)} traced: medians (ms) per key")
    for name in ["window", "all tasks", "idle", *KINDS.values()]:
        print(f"  {name:<18} {statistics.median(row[name] for row in rows):6.1f}")


if __name__ == "__main__":
    main()
