"""The default training grid's results, shipped with the package so no server computes them.

:func:`sdpa_core.training_grid` with its defaults (the comparison the lesson's "Does the
scale matter for learning?" draws) takes about 10 s of CPU. It is computed once, by

    python -m app.simulation.training_results

which writes :data:`RESULTS_PATH` (about 190 KB: every run's five curves at the learning
rate its cell kept, float64, so the grid read back equals the one computed). A server or an
export reads it with :func:`shipped_grid`; the file records the parameters it was computed
with (:func:`grid_experiment`), and a file whose parameters are not the code's current
defaults (:func:`default_experiment`) is not used: the grid is then computed as before.
tests/model/test_training_results.py fails when the file is stale and reruns a slice of it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import time
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from sdpa_core import GridCell, TrainingGrid, TrainingRun, grid_of_cells, training_grid
from sdpa_core import training as core_training

log = logging.getLogger(__name__)

RESULTS_PATH = Path(__file__).with_name("default_training_grid.npz")
"""The default grid's results, package data (pyproject.toml's package-data)."""

FORMAT = 1
"""The layout of the file: bump it when :func:`save_grid` writes something else."""

METRICS = core_training.METRICS
"""The curves every run holds, in the order of :class:`sdpa_core.TrainingStep`'s fields."""


def _constants() -> dict[str, Any]:
    """The module constants of :mod:`sdpa_core.training` that change a grid's numbers but
    are no argument of :func:`sdpa_core.training_grid`."""
    return {
        "batch": core_training.BATCH,
        "value_dim": core_training.VALUE_DIM,
        "adam_betas": list(core_training.ADAM_BETAS),
        "adam_epsilon": core_training.ADAM_EPSILON,
        "final_fraction": core_training.FINAL_FRACTION,
    }


def default_experiment() -> dict[str, Any]:
    """The parameters of the default grid as the code defines them now: the defaults of
    :func:`sdpa_core.training_grid`'s arguments and the constants that shape its runs, as
    JSON values (what :func:`grid_experiment` records for a grid computed with them)."""
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(training_grid).parameters.items()
    }
    return _as_json(
        {
            "format": FORMAT,
            **defaults,
            "lrs": sorted(defaults["lrs"]),
            **_constants(),
        }
    )


def grid_experiment(grid: TrainingGrid) -> dict[str, Any]:
    """The parameters ``grid`` was computed with, read from the grid and its runs (with the
    constants of :mod:`sdpa_core.training` now), as JSON values: for the default grid,
    :func:`default_experiment`."""
    settings = grid.cells[0].runs[0].settings
    return _as_json(
        {
            "format": FORMAT,
            "d_values": [row.d_k for row in grid.summary.rows],
            "seeds": list(grid.seeds),
            "steps": grid.summary.steps,
            "lrs": list(grid.lrs),
            "n": settings.n,
            "d_model": settings.d_model,
            "optimizer": grid.optimizer,
            "temperature": settings.temperature,
            "target_loss": grid.summary.target_loss,
            **_constants(),
        }
    )


def _as_json(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as JSON would give them back (tuples become lists), so two compare."""
    return json.loads(json.dumps(values))


def save_grid(grid: TrainingGrid, path: Path = RESULTS_PATH) -> None:
    """Write ``grid`` to ``path`` (.npz): its parameters, each cell's learning rate and mean
    final loss at every rate, and every run's curves, float64 as computed. The same grid
    gives the same bytes, so a rebuild that changes no number changes no file."""
    arrays = {
        "experiment": np.array(json.dumps(grid_experiment(grid), sort_keys=True)),
        "lr": np.array([cell.lr for cell in grid.cells]),
        "final_loss_by_lr": np.array([cell.final_loss_by_lr for cell in grid.cells]),
        **{
            name: np.array([[getattr(run, name) for run in cell.runs] for cell in grid.cells])
            for name in METRICS
        },
    }
    # np.savez_compressed stamps each member with the time of writing: fixed here.
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, values in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(member, "w") as file:
                np.lib.format.write_array(file, values, allow_pickle=False)


def load_grid(path: Path = RESULTS_PATH) -> tuple[TrainingGrid, dict[str, Any]]:
    """The grid :func:`save_grid` wrote to ``path``, and the parameters it records.

    The summary is counted afresh from the runs (:func:`sdpa_core.grid_of_cells`), as
    :func:`sdpa_core.training_grid` counts it.

    Raises:
        OSError: if the file cannot be read.
        ValueError, KeyError: if it is not such a file.
    """
    with np.load(path, allow_pickle=False) as stored:
        experiment = json.loads(str(stored["experiment"]))
        if experiment.get("format") != FORMAT:
            raise ValueError(f"{path}: format {experiment.get('format')!r}, not {FORMAT}")
        lrs, final_by_lr = stored["lr"], stored["final_loss_by_lr"]
        curves = {name: stored[name] for name in METRICS}
    d_values, seeds = experiment["d_values"], experiment["seeds"]
    shape = (2 * len(d_values), len(seeds), experiment["steps"])
    for name, values in curves.items():
        if values.shape != shape:
            raise ValueError(f"{path}: {name} has shape {values.shape}, not {shape}")
    first = core_training.TrainingSettings(
        d_k=d_values[0],
        scaled=True,
        steps=experiment["steps"],
        lr=float(lrs[0]),
        n=experiment["n"],
        d_model=experiment["d_model"],
        seed=seeds[0],
        optimizer=experiment["optimizer"],
        temperature=experiment["temperature"],
    )
    cells = []
    for index, (d_k, scaled) in enumerate((d, s) for d in d_values for s in (True, False)):
        lr = float(lrs[index])
        runs = tuple(
            TrainingRun(
                settings=replace(first, d_k=d_k, scaled=scaled, lr=lr, seed=seed),
                **{name: _read_only(curves[name][index, s]) for name in METRICS},
            )
            for s, seed in enumerate(seeds)
        )
        by_lr = tuple(float(loss) for loss in final_by_lr[index])
        cells.append(GridCell(d_k=d_k, scaled=scaled, lr=lr, final_loss_by_lr=by_lr, runs=runs))
    grid = grid_of_cells(
        cells,
        lrs=experiment["lrs"],
        seeds=seeds,
        optimizer=experiment["optimizer"],
        steps=experiment["steps"],
        target_loss=experiment["target_loss"],
    )
    return grid, experiment


def _read_only(values: np.ndarray) -> np.ndarray:
    """A read-only copy of one run's curve, as a computed run's curves are."""
    copy = np.array(values, dtype=float)
    copy.setflags(write=False)
    return copy


def shipped_grid(path: Path = RESULTS_PATH) -> TrainingGrid | None:
    """The default grid from the shipped results, or None (logged) when the file is
    missing, unreadable or stale: computed with other parameters than the code's
    defaults (:func:`default_experiment`). A caller then computes the grid itself."""
    try:
        grid, experiment = load_grid(path)
    except (OSError, ValueError, KeyError):
        log.warning("sdpa-sim: the shipped training results %s cannot be read", path, exc_info=True)
        return None
    if experiment != default_experiment():
        log.warning(
            "sdpa-sim: the shipped training results %s are stale (rebuild them with "
            "`python -m app.simulation.training_results`); computing the grid instead",
            path,
        )
        return None
    return grid


def main(argv: list[str] | None = None) -> int:
    """Compute the default grid and write it to :data:`RESULTS_PATH` (or ``--out``)."""
    parser = argparse.ArgumentParser(
        prog="python -m app.simulation.training_results",
        description="Compute the default training grid (about 10 s of CPU) and write the "
        "results the package ships, so no server computes them.",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_PATH, help=f"({RESULTS_PATH})")
    args = parser.parse_args(argv)
    started = time.process_time()
    grid = training_grid()
    save_grid(grid, args.out)
    print(
        f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
        f"{time.process_time() - started:.1f} s CPU"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
