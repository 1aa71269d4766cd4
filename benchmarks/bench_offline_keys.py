"""Benchmark of the exported file: keydown → first frame with the new heatmap (issue 46).

Opens exported files from file:// in Debian's headless Chromium (network blocked), one tab
per (file, n), and presses keys on the d_k and temperature sliders with the keyboard: d_k
sweeps its whole grid back and forth, temperature alternates between two positions. A
sample is the first animation frame after the heatmap's ColumnDataSource got its new data,
minus the capture-phase keydown (benchmarks/key_frames.py says exactly how, and what the
other columns are). Target: p90 ≤ 16.7 ms at n = 32 and n = 128 for both keys.

The files are measured in interleaved rounds (each round presses ``--presses`` keys of each
kind in every tab, the order reversed every other round), so each sees the same spells of
load on a shared machine: compare the files' medians of one run. Without ``--pages`` it
exports the working tree's page; to compare builds, export each commit with its own code::

    git worktree add /tmp/ref-883d946 883d946
    (cd /tmp/ref-883d946 && PYTHONPATH=. python -m app.cli export /tmp/883d946.html)
    python -m app.server.cli export /tmp/new.html
    python benchmarks/bench_offline_keys.py --pages /tmp/883d946.html /tmp/new.html
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from key_frames import add_round_options, launch, open_tab, print_results, run_rounds


def _block_network(route: Any) -> None:
    # The file must need no request: anything but file:// fails.
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        route.abort()


def main() -> None:
    """Export (or take ``--pages``), measure and print the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, nargs="+", help="exported files to compare")
    parser.add_argument("--n", type=int, nargs="+", default=[32, 128], help="sequence lengths")
    add_round_options(parser)
    options = parser.parse_args()
    load = os.getloadavg()[0]
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        pages = options.pages
        if not pages:
            from app.export import export_html

            pages = [Path(folder) / "sdpa-sim.html"]
            export_html(pages[0])
        browser = launch(playwright)
        tabs = [
            open_tab(browser, path.stem, n, f"{path.resolve().as_uri()}?n={n}", _block_network)
            for path in pages
            for n in options.n
        ]
        results = run_rounds(tabs, options.rounds, options.presses)
        browser.close()
    print_results(results, load, options.samples)


if __name__ == "__main__":
    main()
