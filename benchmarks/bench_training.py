"""Benchmark the backward pass and the training runs of issue 13, and print what they show.

Run it from the repository root (NumPy is the only requirement)::

    python benchmarks/bench_training.py
    python benchmarks/bench_training.py --optimizer sgd --lrs 0.03,0.1,0.3,1,3,10

It reports, each figure a median over ``--repeats`` measurements unless said otherwise:

* ``attention_backward`` against ``attention`` at n = d_k = d_v = 256, float64 and float32
  (target: backward ≤ 3× the forward);
* one Train run at one setting (``GRID_STEPS`` steps) at d_k = 64 and 1024, scaled and not:
  seconds, steps per second and the longest wait between two streamed steps (targets:
  ≤ 2 s a run, ≥ 5 updates a second);
* the default experiment grid, once: CPU seconds of this process and wall seconds
  (target: ≤ 10 s CPU), then its summary table, scaled against unscaled at each d_k with
  the best learning rate of each, and the sentence :func:`describe_summary` makes of it.

With the app installed it also measures the lesson's section (``--skip-app`` leaves it out):

* the shared grid of app/simulation/training.py: CPU seconds of its one computation, and what
  30 more sessions asking for it cost (target: computed once);
* one Train run through the app's runner at its pace (d_k = 1024, unscaled): seconds from
  the press to the last step and batches a second handed to the session (targets: ≤ 2 s,
  ≥ 5 updates a second);
* with ``--browser``, the same run pressed in Chromium on a served app: batches a second
  as the page receives them (the run source's new lengths, looked at every 5 ms).

Timings depend on the machine and on its load; this is a report, not a gate (exit 0).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

# Run as a plain script from anywhere: make sdpa_core and bench_core importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import format_time, machine_line, median_times

from sdpa_core.attention import attention
from sdpa_core.backward import attention_backward
from sdpa_core.training import (
    GRID_LRS,
    GRID_STEPS,
    TrainingGrid,
    TrainingSettings,
    describe_summary,
    iter_training,
    training_grid,
)

SIDE = 256
BACKWARD_TARGET = 3.0
RUN_TARGET_SECONDS = 2.0
UPDATES_TARGET = 5.0
GRID_TARGET_CPU = 10.0
RUN_D_VALUES = (64, 1024)


def backward_table(repeats: int, min_time: float) -> None:
    """Print forward and backward medians and their ratio at n = d_k = d_v = SIDE."""
    print(f"Backward pass at n = d_k = d_v = {SIDE} (median of {repeats})")
    print()
    print("| dtype | attention | attention_backward | ratio | target |")
    print("|---|---:|---:|---:|---|")
    for dtype in (np.float64, np.float32):
        rng = np.random.default_rng(SIDE)
        q, k, v, grad_out = rng.standard_normal((4, SIDE, SIDE)).astype(dtype)
        times = median_times(
            {
                "forward": lambda q=q, k=k, v=v: attention(q, k, v),
                "backward": lambda q=q, k=k, v=v, g=grad_out: attention_backward(q, k, v, g),
            },
            repeats,
            min_time,
        )
        ratio = times["backward"] / times["forward"]
        verdict = "meets" if ratio <= BACKWARD_TARGET else "MISSES"
        print(
            f"| {np.dtype(dtype).name} | {format_time(times['forward'])} | "
            f"{format_time(times['backward'])} | {ratio:.2f}× | {verdict} ≤ {BACKWARD_TARGET}× |"
        )
    print()


def time_run(settings: TrainingSettings) -> tuple[float, float]:
    """Seconds for a whole streamed run, and the longest wait for one of its steps."""
    start = previous = time.perf_counter()
    longest = 0.0
    for _ in iter_training(settings):
        now = time.perf_counter()
        longest = max(longest, now - previous)
        previous = now
    return previous - start, longest


def run_table(repeats: int, optimizer: str, lr: float) -> None:
    """Print the time of one Train run, its update rate and its longest step."""
    print(f"One Train run of {GRID_STEPS} steps ({optimizer}, lr {lr:g}; median of {repeats})")
    print()
    print("| d_k | scaled | run | updates/s | longest step | target |")
    print("|---:|---|---:|---:|---:|---|")
    for d_k in RUN_D_VALUES:
        for scaled in (True, False):
            settings = TrainingSettings(
                d_k=d_k, scaled=scaled, steps=GRID_STEPS, lr=lr, optimizer=optimizer
            )
            time_run(settings)  # warm-up
            samples = [time_run(settings) for _ in range(repeats)]
            seconds = float(np.median([sample[0] for sample in samples]))
            longest = float(np.median([sample[1] for sample in samples]))
            rate = GRID_STEPS / seconds
            meets = seconds <= RUN_TARGET_SECONDS and rate >= UPDATES_TARGET
            print(
                f"| {d_k} | {scaled} | {seconds:.3f} s | {rate:.0f} | {format_time(longest)} | "
                f"{'meets' if meets else 'MISSES'} ≤ {RUN_TARGET_SECONDS} s, "
                f"≥ {UPDATES_TARGET:g}/s |"
            )
    print()


def steps_text(steps: int | None) -> str:
    return "not reached" if steps is None else str(steps)


def grid_table(grid: TrainingGrid, cpu: float, wall: float) -> None:
    """Print the grid's cost, its summary table and its sentence."""
    summary = grid.summary
    verdict = "meets" if cpu <= GRID_TARGET_CPU else "MISSES"
    print(
        f"Grid ({grid.optimizer}, lrs {', '.join(f'{lr:g}' for lr in grid.lrs)}, "
        f"seeds {grid.seeds}, {summary.steps} steps): {cpu:.2f} s CPU, {wall:.2f} s wall, "
        f"{verdict} the ≤ {GRID_TARGET_CPU:g} s CPU target"
    )
    print()
    print(
        f"| d_k | best lr scaled | best lr unscaled | steps to loss {summary.target_loss:g} "
        "scaled | unscaled | final loss scaled | unscaled |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in summary.rows:
        print(
            f"| {row.d_k} | {row.scaled_lr:g} | {row.unscaled_lr:g} | "
            f"{steps_text(row.scaled_steps)} | {steps_text(row.unscaled_steps)} | "
            f"{row.scaled_final_loss:.2g} | {row.unscaled_final_loss:.2g} |"
        )
    print()
    print("Mean final loss over the seeds at each lr (scaled / unscaled):")
    for scaled_cell, unscaled_cell in zip(grid.cells[::2], grid.cells[1::2], strict=True):
        pairs = ", ".join(
            f"{lr:g}: {scaled:.2g} / {unscaled:.2g}"
            for lr, scaled, unscaled in zip(
                grid.lrs, scaled_cell.final_loss_by_lr, unscaled_cell.final_loss_by_lr, strict=True
            )
        )
        print(f"  d_k = {scaled_cell.d_k}: {pairs}")
    print()
    print("Start of the best runs (mean over seeds; entropy in nats, log 16 = 2.77):")
    for cell in grid.cells:
        entropy = np.mean([run.entropy[0] for run in cell.runs])
        jacobian = np.median([run.jacobian_norm[0] for run in cell.runs])
        grad = np.mean([run.grad_norm[0] for run in cell.runs])
        label = "scaled" if cell.scaled else "unscaled"
        print(
            f"  d_k = {cell.d_k:4d} {label:8s}: entropy {entropy:.3f}, median-row softmax "
            f"Jacobian norm {jacobian:.2g}, ‖grad W‖ {grad:.3g}"
        )
    print()
    print(describe_summary(summary))


def app_grid_table(sessions: int = 30) -> None:
    """CPU of the shared grid's one computation, and of ``sessions`` more asking for it."""
    from app.simulation.training import SharedGrid

    shared = SharedGrid()
    cpu_start = time.process_time()
    shared.request(background=False).result()
    first = time.process_time() - cpu_start
    cpu_start = time.process_time()
    for _ in range(sessions):
        shared.request(background=False).result()
    rest = time.process_time() - cpu_start
    verdict = "meets" if shared.computations == 1 else "MISSES"
    print(
        f"Shared grid (app/simulation/training.py): {first:.2f} s CPU for the first section, "
        f"{rest * 1e3:.2f} ms CPU for {sessions} more; computed {shared.computations}× "
        f"({verdict} once per process)"
    )
    print()


def app_run_table(repeats: int) -> None:
    """One Train run through the app's runner at its pace, as a session receives it."""
    import queue

    from app.simulation.training import DONE, RUN_SECONDS, UPDATE_INTERVAL_S, TrainingRunner

    settings = TrainingSettings(d_k=1024, scaled=False, steps=GRID_STEPS, lr=0.003)
    print(
        f"Train through the app's runner (d_k = 1024, unscaled, {GRID_STEPS} steps, paced "
        f"over ≥ {RUN_SECONDS:g} s, batches ≥ {UPDATE_INTERVAL_S:g} s apart; median of {repeats})"
    )
    print()
    print("| run | batches | batches/s | longest gap | target |")
    print("|---:|---:|---:|---:|---|")
    runner = TrainingRunner()
    seconds, rates, gaps, counts = [], [], [], []
    for _ in range(repeats):
        posted: queue.Queue = queue.Queue()
        arrivals: list[float] = []

        def on_update(job: object, arrivals: list[float] = arrivals) -> None:
            if job.take():
                arrivals.append(time.perf_counter())

        job = runner.job(settings, post=posted.put, on_update=on_update)
        start = time.perf_counter()
        runner.start(job)
        # This thread plays the session's event loop: it runs what the worker posts.
        while job.active or not posted.empty():
            try:
                posted.get(timeout=5)()
            except queue.Empty:
                break
        assert job.status == DONE, job.status
        end = arrivals[-1]
        seconds.append(end - start)
        counts.append(len(arrivals))
        rates.append(len(arrivals) / (end - start))
        gaps.append(float(np.max(np.diff([start, *arrivals]))))
    run, rate = float(np.median(seconds)), float(np.median(rates))
    meets = run <= RUN_TARGET_SECONDS and rate >= UPDATES_TARGET
    print(
        f"| {run:.2f} s | {int(np.median(counts))} | {rate:.1f} | "
        f"{format_time(float(np.median(gaps)))} | {'meets' if meets else 'MISSES'} "
        f"≤ {RUN_TARGET_SECONDS} s, ≥ {UPDATES_TARGET:g}/s |"
    )
    print()


def browser_run_table(repeats: int) -> None:
    """Train pressed in Chromium on a served app: batches a second the page receives."""
    import tempfile

    tests = Path(__file__).resolve().parent.parent / "tests"
    sys.path[:0] = [str(tests), str(tests / "browser")]
    from browser_support import CHROMIUM, CHROMIUM_ARGS, served_app
    from playwright.sync_api import sync_playwright
    from test_training import GRID_DRAWN_JS, RUN_LENGTH_JS, WATCH_RUN_JS

    from app.served.components.first_screen import GATE_LABEL
    from app.served.components.training_session import TRAIN_LABEL

    print(f"Train in Chromium on a served app (d_k = 1024, unscaled; median of {repeats})")
    print()
    print("| press → last step | batches | batches/s as received | target |")
    print("|---:|---:|---:|---|")
    with (
        tempfile.TemporaryDirectory() as folder,
        served_app(Path(folder) / "serve.log") as app,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        seconds, rates, counts = [], [], []
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(60_000)
            page.goto(app.url + "?d_k=1024&scaled=false")
            page.get_by_role("button", name=GATE_LABEL).dispatch_event("click")
            page.wait_for_function(GRID_DRAWN_JS)
            page.evaluate(WATCH_RUN_JS)
            button = page.get_by_role("button", name=TRAIN_LABEL, exact=True)
            pressed = page.evaluate("performance.now()")
            button.dispatch_event("click")
            page.wait_for_function(RUN_LENGTH_JS, arg=GRID_STEPS)
            times = page.evaluate("window.__sdpaRun.times")[1:]
            run = (times[-1] - pressed) / 1e3
            seconds.append(run)
            counts.append(len(times))
            rates.append(len(times) / run)
            page.close()
        browser.close()
    run, rate = float(np.median(seconds)), float(np.median(rates))
    meets = run <= RUN_TARGET_SECONDS and rate >= UPDATES_TARGET
    print(
        f"| {run:.2f} s | {int(np.median(counts))} | {rate:.1f} | "
        f"{'meets' if meets else 'MISSES'} ≤ {RUN_TARGET_SECONDS} s, ≥ {UPDATES_TARGET:g}/s |"
    )
    print()


def main(argv: list[str] | None = None) -> int:
    """Measure the backward pass, one run and the grid; print tables and target verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="measurements per figure")
    parser.add_argument(
        "--min-time", type=float, default=0.05, help="seconds each backward measurement lasts"
    )
    parser.add_argument("--optimizer", default="adam", choices=("adam", "sgd"))
    parser.add_argument(
        "--lrs",
        default=",".join(f"{lr:g}" for lr in GRID_LRS),
        help="comma-separated learning rates of the grid",
    )
    parser.add_argument("--skip-grid", action="store_true", help="only time the passes and runs")
    parser.add_argument(
        "--skip-app", action="store_true", help="leave out the app's shared grid and runner"
    )
    parser.add_argument(
        "--browser", action="store_true", help="also press Train in Chromium on a served app"
    )
    args = parser.parse_args(argv)
    lrs = tuple(float(lr) for lr in args.lrs.split(","))

    print(machine_line())
    # BLAS spreads the products over both cores: a busy neighbour inflates every figure.
    print("Load average at start: " + ", ".join(f"{load:.2f}" for load in os.getloadavg()))
    print()
    backward_table(args.repeats, args.min_time)
    run_table(args.repeats, args.optimizer, lrs[len(lrs) // 2])
    if not args.skip_grid:
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        grid = training_grid(lrs=lrs, optimizer=args.optimizer)
        cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
        grid_table(grid, cpu, wall)
        print()
    if not args.skip_app:
        app_grid_table()
        app_run_table(args.repeats)
    if args.browser:
        browser_run_table(max(1, args.repeats // 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
