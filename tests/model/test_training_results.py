"""The default training grid's shipped results (app/simulation/training_results.py): the file
is the default experiment's, a slice of it computed again gives the same numbers, it is
package data, and the process's shared grid reads it instead of computing."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from app.simulation import training_results
from app.simulation.training import SharedGrid
from app.simulation.training_results import (
    RESULTS_PATH,
    default_experiment,
    grid_experiment,
    load_grid,
    save_grid,
    shipped_grid,
)
from sdpa_core import TrainingGrid, training_grid
from sdpa_core import training as core_training

ROOT = Path(__file__).resolve().parents[2]
REBUILD = "python -m app.simulation.training_results"

RTOL = 1e-9
"""How close a curve computed again must be to the shipped one. NumPy 2.4 (Python 3.11) and
2.5 (3.13) give the same bits here; the margin is for another machine's BLAS."""

SLICE_STEPS = 20
"""Steps of the largest d_k computed again (its 200 are most of the grid's ~10 s)."""

SMALL = {"d_values": (4, 64), "seeds": (0, 1), "steps": 12, "lrs": (0.01, 0.03)}
"""A grid small enough to compute in a fraction of a second."""


@pytest.fixture(scope="module")
def shipped() -> TrainingGrid:
    grid, _ = load_grid()
    return grid


def assert_same_curves(computed: TrainingGrid, stored: TrainingGrid, steps: int) -> None:
    """Every run of ``computed`` against the first ``steps`` steps of ``stored``'s run at
    the same d_k, scale and seed, metric by metric."""
    for cell in computed.cells:
        stored_cell = stored.cell(cell.d_k, cell.scaled)
        for run, stored_run in zip(cell.runs, stored_cell.runs, strict=True):
            assert run.settings.seed == stored_run.settings.seed
            for name in training_results.METRICS:
                np.testing.assert_allclose(
                    getattr(run, name),
                    getattr(stored_run, name)[:steps],
                    rtol=RTOL,
                    atol=1e-12,
                    err_msg=f"d_k={cell.d_k} scaled={cell.scaled} {name}: rebuild: {REBUILD}",
                )


# --- the shipped file ---------------------------------------------------------------------


def test_the_shipped_file_is_of_the_codes_default_experiment() -> None:
    """Fails when a default of sdpa_core.training_grid (or a constant shaping its runs)
    changed and the file was not rebuilt."""
    _, experiment = load_grid()
    assert experiment == default_experiment(), f"stale: rebuild with {REBUILD}"
    assert shipped_grid() is not None


def test_the_shipped_grid_holds_the_default_grids_shape(shipped: TrainingGrid) -> None:
    assert [row.d_k for row in shipped.summary.rows] == list(core_training.GRID_D_VALUES)
    assert shipped.seeds == core_training.GRID_SEEDS
    assert shipped.lrs == tuple(sorted(core_training.GRID_LRS))
    assert shipped.summary.steps == core_training.GRID_STEPS
    assert grid_experiment(shipped) == default_experiment()
    for cell in shipped.cells:
        assert cell.lr in shipped.lrs
        assert cell.final_loss_by_lr[shipped.lrs.index(cell.lr)] == min(cell.final_loss_by_lr)
        for run in cell.runs:
            assert run.loss.shape == (core_training.GRID_STEPS,)
            assert not run.loss.flags.writeable, "read-only, as a computed run's curves"


def test_the_smallest_d_k_computed_again_gives_the_shipped_cells(shipped: TrainingGrid) -> None:
    """d_k = 4, scaled and unscaled, every seed and learning rate, all its steps: the same
    learning rate kept, the same final losses at every rate, the same curves."""
    d_k = core_training.GRID_D_VALUES[0]
    computed = training_grid(d_values=(d_k,))
    for cell in computed.cells:
        stored = shipped.cell(d_k, cell.scaled)
        assert cell.lr == stored.lr, f"rebuild: {REBUILD}"
        np.testing.assert_allclose(cell.final_loss_by_lr, stored.final_loss_by_lr, rtol=RTOL)
    assert_same_curves(computed, shipped, core_training.GRID_STEPS)
    assert computed.summary.rows[0] == shipped.summary.rows[0]


def test_the_largest_d_k_computed_again_starts_as_shipped(shipped: TrainingGrid) -> None:
    """d_k = 1024's first steps at each cell's learning rate, every seed."""
    d_k = core_training.GRID_D_VALUES[-1]
    for scaled in (True, False):
        lr = shipped.cell(d_k, scaled).lr
        computed = training_grid(d_values=(d_k,), steps=SLICE_STEPS, lrs=(lr,))
        only = TrainingGrid(
            lrs=computed.lrs,
            seeds=computed.seeds,
            optimizer=computed.optimizer,
            cells=(computed.cell(d_k, scaled),),
            summary=computed.summary,
        )
        assert_same_curves(only, shipped, SLICE_STEPS)


def test_the_file_is_package_data() -> None:
    """pyproject.toml's package data takes the file into a wheel (a `pip install` has it)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = pyproject["tool"]["setuptools"]["package-data"]
    package = RESULTS_PATH.parent.relative_to(ROOT)
    patterns = package_data[".".join(package.parts)]
    assert any(Path(RESULTS_PATH.name).match(pattern) for pattern in patterns)
    assert RESULTS_PATH.stat().st_size < 250_000, "small: the five curves of 30 runs"


# --- writing, reading, and what a stale file does -----------------------------------------


def test_a_grid_written_and_read_back_is_the_same_grid(tmp_path: Path) -> None:
    grid = training_grid(**SMALL)
    path = tmp_path / "grid.npz"
    save_grid(grid, path)
    read, experiment = load_grid(path)
    assert experiment == grid_experiment(grid)
    assert read.summary == grid.summary
    assert (read.lrs, read.seeds, read.optimizer) == (grid.lrs, grid.seeds, grid.optimizer)
    for cell, read_cell in zip(grid.cells, read.cells, strict=True):
        assert (cell.d_k, cell.scaled, cell.lr) == (read_cell.d_k, read_cell.scaled, read_cell.lr)
        assert cell.final_loss_by_lr == read_cell.final_loss_by_lr
        for run, read_run in zip(cell.runs, read_cell.runs, strict=True):
            assert run.settings == read_run.settings
            for name in training_results.METRICS:
                np.testing.assert_array_equal(getattr(run, name), getattr(read_run, name))
    again = tmp_path / "again.npz"
    save_grid(grid, again)
    assert again.read_bytes() == path.read_bytes(), "the same grid gives the same file"


def test_a_file_of_another_experiment_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "small.npz"
    save_grid(training_grid(**SMALL), path)
    assert load_grid(path)[1] != default_experiment()
    assert shipped_grid(path) is None


def test_a_changed_constant_makes_the_shipped_file_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_training, "BATCH", core_training.BATCH * 2)
    assert load_grid()[1] != default_experiment()
    assert shipped_grid() is None


def test_a_missing_or_broken_file_is_not_used(tmp_path: Path) -> None:
    assert shipped_grid(tmp_path / "none.npz") is None
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip file")
    assert shipped_grid(broken) is None


def test_the_command_writes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(training_results, "training_grid", lambda: training_grid(**SMALL))
    out = tmp_path / "grid.npz"
    assert training_results.main(["--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert load_grid(out)[0].summary == training_grid(**SMALL).summary


# --- the process's shared grid ------------------------------------------------------------


def test_a_stored_grid_is_read_at_once_and_never_computed() -> None:
    grid = training_grid(**SMALL)
    computed: list[int] = []

    def compute() -> TrainingGrid:
        computed.append(1)
        return grid

    shared = SharedGrid(compute, stored=lambda: grid)
    future = shared.request(background=True)
    assert future.done() and future.result() is grid and shared.grid is grid
    assert shared.from_stored and shared.computations == 0 and not computed
    assert shared.request() is future


def test_without_a_stored_grid_it_is_computed_as_before() -> None:
    grid = training_grid(**SMALL)
    shared = SharedGrid(lambda: grid, stored=lambda: None)
    assert shared.ready_grid() is None, "a warm-up computes nothing"
    assert shared.computations == 0
    assert shared.request(background=False).result() is grid
    assert shared.computations == 1 and not shared.from_stored


def test_a_stored_grid_that_raises_is_computed_instead() -> None:
    grid = training_grid(**SMALL)

    def broken() -> TrainingGrid:
        raise OSError("unreadable")

    shared = SharedGrid(lambda: grid, stored=broken)
    assert shared.request(background=False).result() is grid
    assert shared.computations == 1


def test_ready_grid_reads_the_stored_grid() -> None:
    grid = training_grid(**SMALL)
    shared = SharedGrid(lambda: pytest.fail("computed"), stored=lambda: grid)
    assert shared.ready_grid() is grid
    assert shared.request().result() is grid and shared.computations == 0
