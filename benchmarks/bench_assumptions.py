"""Server time of a move of σ_q, σ_k, ρ, QK-norm or the softmax's precision against a d_k move.

In-process, as ``bench_app.py --server`` times a move: a session's page attached to a Bokeh
``Document`` with a change listener; the control set on the state → model refresh → the
first screen's views → PATCH-DOC built, then the update after the plots (the other widgets
showing the value, the lesson's views, the URL) → PATCH-DOC built. Each move alternates
between two values, with the app's derived-data caches cleared before it (a value no
session has used yet: the matmul, the histograms and the images are computed) and, in a
second series, without (cache hits). Prints medians and each control's ratio to d_k::

    python benchmarks/bench_assumptions.py            # n = 256, 15 runs per move
    python benchmarks/bench_assumptions.py --n 1024 --runs 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MOVES: dict[str, tuple[object, object]] = {
    "d_k": (64, 57),
    "sigma_q": (1.0, 1.2),
    "sigma_k": (1.0, 0.8),
    "rho": (0.0, 0.05),
    "qk_norm": (False, True),
    "precision": ("float64", "float16"),
    "subtract_max": (True, False),
}
"""Each control timed, and the two values its moves alternate between."""


def measure(n: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per move: ``{control: {"plots": …, "total": …, "warm total": …}}``."""
    from bokeh.document import Document
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc

    import app.simulation.parts as derived
    from app.served.session import Session
    from app.server.panel_tuning import tune_process

    tune_process()
    later: list[Callable[[], None]] = []
    session = Session({"n": str(n), "d_k": "64"}, defer=later.append)
    session.add_lesson()
    document = Document()
    document.add_root(session.page.get_root(document))
    document.to_json()
    events: list[object] = []
    document.on_change(events.append)
    protocol = Protocol()
    caches = [
        function
        for function in vars(derived).values()
        if callable(function)
        and hasattr(function, "cache_clear")
        # The k·k table of QK-norm's histogram (0.3 s, once per seed) is timed apart.
        and function is not derived._key_square_norms
    ]

    def timed(step: Callable[[], None]) -> float:
        events.clear()
        start = time.perf_counter()
        with set_curdoc(document):
            step()
        if events:
            protocol.create("PATCH-DOC", list(events))
        return 1e3 * (time.perf_counter() - start)

    def run_later() -> None:
        while later:
            later.pop()()

    def move(name: str, value: object, *, cold: bool) -> tuple[float, float]:
        if cold:
            for cache in caches:
                cache.cache_clear()
        plots = timed(lambda: session.state.set_controls(**{name: value}))
        lesson = timed(run_later)
        return plots, plots + lesson

    results = {name: {"plots": [], "total": [], "warm total": []} for name in MOVES}
    try:
        for index in range(runs + 2):
            for name, values in MOVES.items():
                first, total = move(name, values[(index + 1) % 2], cold=True)
                again = move(name, values[index % 2], cold=False)
                warm = move(name, values[(index + 1) % 2], cold=False)
                move(name, values[0], cold=False)  # back to the lesson's value
                del again
                if index >= 2:  # the first runs pay for imports and first calls
                    results[name]["plots"].append(first)
                    results[name]["total"].append(total)
                    results[name]["warm total"].append(warm[1])
    finally:
        document.clear()
    return results


def key_table_ms() -> float:
    """Milliseconds to build QK-norm's k·k table for a new seed (once per seed)."""
    import app.simulation.parts as derived

    derived._key_square_norms.cache_clear()
    start = time.perf_counter()
    derived._key_square_norms(12345)
    return 1e3 * (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    results = measure(args.n, args.runs)
    base = statistics.median(results["d_k"]["total"])
    base_warm = statistics.median(results["d_k"]["warm total"])
    print(f"n = {args.n}, d_k = 64, {args.runs} runs, medians in ms ", end="")
    print(f"(load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs)\n")
    print("| move | first screen (cold) | total (cold) | ratio to d_k | total (warm) | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, series in results.items():
        total = statistics.median(series["total"])
        warm = statistics.median(series["warm total"])
        print(
            f"| {name} | {statistics.median(series['plots']):.1f} | {total:.1f} | "
            f"{total / base:.2f} | {warm:.1f} | {warm / base_warm:.2f} |"
        )
    print(f"\nQK-norm's k·k table for a new seed (once per seed): {key_table_ms():.0f} ms")


if __name__ == "__main__":
    main()
