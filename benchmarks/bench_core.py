"""Benchmark sdpa_core.attention against the bare ``q @ k.T`` matmul it cannot avoid.

Run it from the repository root (NumPy is the only requirement)::

    python benchmarks/bench_core.py            # the table in docs/performance.md, ~1 minute
    python benchmarks/bench_core.py --repeats 15 --min-time 0.05

For n ∈ {64, 256, 1024} tokens and d_k ∈ {64, 1024} it times, in float64 and float32:

* ``q @ k.T`` alone, the (n, n) score matmul every attention implementation pays for;
* ``attention(q, k, v)`` with d_v = 64, a typical head size (the target column);
* ``attention(q, k, v)`` with d_v = d_k, reported honestly as a second ratio: its
  ``weights @ v`` is a second matmul as large as ``q @ k.T``, so it costs ~2× by itself.

Each figure is the median over ``--repeats`` measurements taken after a warm-up, the three
functions interleaved so that drift in clock speed hits them alike; each measurement times
enough back-to-back calls to last ``--min-time`` seconds, so microsecond calls are not lost
in timer noise. Ratios are medians of attention over medians of the matmul from the same
run. The target is attention ≤ 1.5× the matmul at n = 1024, d_k = 1024, d_v = 64.

The output is a markdown table for docs/performance.md, preceded by the machine it ran on.

``--moves`` instead times what a slider move asks of the core at n = 256, d_k = 64 (sample
Q and K, the raw scores, the softmax, the dot-product pool): a d_k move against a move of
σ_q, σ_k, ρ or the precision (float16 ↔ bfloat16), each alternating between two values so
nothing is served from a result cache. The target: none costs more than the d_k move.
Run it on an otherwise idle machine: BLAS spreads the matmul over every core, so a busy
neighbour slows the matmul and attention unevenly and the small cases (tens of
microseconds, mostly Python overhead) become noise.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np

# Run as a plain script from anywhere: make the repository's sdpa_core importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sdpa_core import (
    attention,
    dot_product_pool,
    sample_qk,
    scores_logits,
    softmax,
)

TOKENS = (64, 256, 1024)
DIMS = (64, 1024)
DTYPES = (np.float64, np.float32)
D_V = 64
TARGET = 1.5


def calls_per_measurement(func: Callable[[], object], min_time: float) -> int:
    """How many back-to-back calls of ``func`` last at least ``min_time`` seconds."""
    number = 1
    while True:
        if timeit.timeit(func, number=number) >= min_time:
            return number
        number *= 2


def median_times(
    funcs: dict[str, Callable[[], object]], repeats: int, min_time: float
) -> dict[str, float]:
    """Median seconds per call of each function, measurements interleaved across functions."""
    for func in funcs.values():
        func()  # warm-up: first-touch page faults, BLAS thread start-up
    numbers = {name: calls_per_measurement(func, min_time) for name, func in funcs.items()}
    samples: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, func in funcs.items():
            samples[name].append(timeit.timeit(func, number=numbers[name]) / numbers[name])
    return {name: statistics.median(values) for name, values in samples.items()}


def format_time(seconds: float) -> str:
    """Seconds as milliseconds with three significant digits."""
    milliseconds = seconds * 1e3
    if milliseconds >= 100:
        return f"{milliseconds:.0f} ms"
    if milliseconds >= 10:
        return f"{milliseconds:.1f} ms"
    if milliseconds >= 1:
        return f"{milliseconds:.2f} ms"
    return f"{milliseconds:.3f} ms"


def measure(n: int, d_k: int, dtype: type, repeats: int, min_time: float) -> dict[str, float]:
    """Median times of the matmul and of attention with d_v = 64 and d_v = d_k."""
    rng = np.random.default_rng([n, d_k])
    q, k = rng.standard_normal((2, n, d_k)).astype(dtype)
    v_head = rng.standard_normal((n, D_V)).astype(dtype)
    v_full = rng.standard_normal((n, d_k)).astype(dtype)
    return median_times(
        {
            "matmul": lambda: q @ k.T,
            "attention": lambda: attention(q, k, v_head),
            "attention_full": lambda: attention(q, k, v_full),
        },
        repeats,
        min_time,
    )


MOVE_N = 256
MOVE_D_K = 64


def core_move(d_k: int, law: dict[str, float], dtype: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The core's share of one slider move: Q and K, raw scores, weights, pooled dot products."""
    q, k = sample_qk(MOVE_N, d_k, 0, **law)
    raw = scores_logits(q, k, scale=1.0)
    weights = softmax(raw * (1.0 / np.sqrt(d_k)), dtype=dtype)
    return weights, dot_product_pool(d_k, 0, **law)


def alternating(settings: list[tuple[int, dict[str, float], str | None]]) -> Callable[[], object]:
    """A move that goes back and forth between the given (d_k, law, dtype) settings."""
    cycle = itertools.cycle(settings)
    return lambda: core_move(*next(cycle))


def measure_moves(repeats: int, min_time: float) -> dict[str, float]:
    """Median seconds of a d_k move and of σ_q, σ_k, ρ and precision moves at n = 256."""
    d = MOVE_D_K
    return median_times(
        {
            "d_k 64 ↔ 65": alternating([(d, {}, None), (d + 1, {}, None)]),
            "σ_q 1 ↔ 1.5": alternating([(d, {"sigma_q": 1.0}, None), (d, {"sigma_q": 1.5}, None)]),
            "σ_k 1 ↔ 0.5": alternating([(d, {"sigma_k": 1.0}, None), (d, {"sigma_k": 0.5}, None)]),
            "ρ 0.3 ↔ 0.6": alternating([(d, {"rho": 0.3}, None), (d, {"rho": 0.6}, None)]),
            "float16 ↔ bfloat16": alternating([(d, {}, "float16"), (d, {}, "bfloat16")]),
        },
        repeats,
        min_time,
    )


def report_moves(repeats: int, min_time: float) -> None:
    """Print the move medians, each one's ratio to the d_k move, and the verdict."""
    times = measure_moves(repeats, min_time)
    baseline = times["d_k 64 ↔ 65"]
    print(machine_line())
    print(f"Core work per move at n={MOVE_N}, d_k={MOVE_D_K}: median of {repeats} runs.")
    print()
    print("| move | median | ratio to d_k move |")
    print("|---|---:|---:|")
    for name, seconds in times.items():
        print(f"| {name} | {format_time(seconds)} | {seconds / baseline:.2f}× |")
    worst = max(seconds / baseline for seconds in times.values())
    verdict = "meets" if worst <= 1.0 else "MISSES"
    print()
    print(f"slowest move: {worst:.2f}× the d_k move, {verdict} the ≤ 1.0× target")


def machine_line() -> str:
    """Python, NumPy, BLAS and CPU count, so figures can be compared across machines."""
    blas = "unknown BLAS"
    try:
        config = np.show_config(mode="dicts")
        blas_info = config["Build Dependencies"]["blas"]
        blas = f"{blas_info['name']} {blas_info.get('version', '')}".strip()
    except (TypeError, KeyError):  # NumPy < 1.25 has no dict mode
        pass
    return (
        f"Python {platform.python_version()}, NumPy {np.__version__} ({blas}), "
        f"{os.cpu_count()} CPUs, {platform.machine()}"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure every (n, d_k, dtype) and print the markdown table and the target verdict.

    Always exits 0: timings depend on the machine, so this is a report, not a gate.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11, help="measurements per figure")
    parser.add_argument(
        "--min-time", type=float, default=0.02, help="seconds each measurement lasts at least"
    )
    parser.add_argument(
        "--moves", action="store_true", help="time σ_q, σ_k, ρ and precision moves instead"
    )
    args = parser.parse_args(argv)
    if args.moves:
        report_moves(args.repeats, args.min_time)
        return 0

    results = {
        (n, d_k, dtype): measure(n, d_k, dtype, args.repeats, args.min_time)
        for n in TOKENS
        for d_k in DIMS
        for dtype in DTYPES
    }

    print(machine_line())
    print(f"Median of {args.repeats} runs; ratio = attention() / bare q @ k.T, same run.")
    print()
    header = ["n", "d_k"]
    for dtype in DTYPES:
        name = np.dtype(dtype).name
        header += [
            f"{name} q @ k.T",
            f"{name} attention (d_v=64)",
            f"{name} ratio d_v=64",
            f"{name} ratio d_v=d_k",
        ]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for n in TOKENS:
        for d_k in DIMS:
            row = [str(n), str(d_k)]
            for dtype in DTYPES:
                times = results[n, d_k, dtype]
                row += [
                    format_time(times["matmul"]),
                    format_time(times["attention"]),
                    f"{times['attention'] / times['matmul']:.2f}×",
                    f"{times['attention_full'] / times['matmul']:.2f}×",
                ]
            print("| " + " | ".join(row) + " |")

    print()
    for dtype in DTYPES:
        times = results[TOKENS[-1], DIMS[-1], dtype]
        ratio = times["attention"] / times["matmul"]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(
            f"{np.dtype(dtype).name}: n={TOKENS[-1]}, d_k={DIMS[-1]}, d_v={D_V}: {ratio:.2f}× "
            f"the matmul, {verdict} the ≤ {TARGET}× target"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
