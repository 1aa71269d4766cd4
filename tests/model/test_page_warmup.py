"""A slow page's first numbers computed ahead, off the event loop (app/served/warmup.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from hostile_queries import hostile_queries

from app.served.components.training import training_figures
from app.served.warmup import slow_to_start, warm_page, warm_training
from app.simulation.model import SimulationModel
from app.simulation.parts import histograms_ready, law_of
from app.simulation.state import SimulationState
from app.simulation.training import SHARED_GRID

Result = TypeVar("Result")


def run_on_a_loop_of_its_own(scenario: Callable[[], Awaitable[Result]]) -> Result:
    """Run a scenario on a fresh event loop in a thread of its own, as a served session's.

    Another test of the suite may leave this thread's loop running; a thread of its own
    keeps this file independent of the order the suite runs in.
    """

    async def main() -> Result:
        return await scenario()

    with ThreadPoolExecutor(max_workers=1) as runner:
        return runner.submit(asyncio.run, main()).result(timeout=120)


def test_only_a_new_seed_or_a_large_matrix_is_slow_to_start() -> None:
    SimulationModel(SimulationState())  # the default seed's tables, as any session builds
    assert not slow_to_start(SimulationState())
    assert not slow_to_start(SimulationState(n=256, d_k=1024))
    assert slow_to_start(SimulationState(seed=4301))  # no session has drawn it
    assert slow_to_start(SimulationState(n=1024))  # a large matrix, whatever the seed


def test_a_new_seeds_page_is_computed_ahead_once_for_pages_arriving_together() -> None:
    seed = 4302
    target = f"/main?seed={seed}&d_k=16"

    async def scenario() -> list[object]:
        waiting = [warm_page(target) for _ in range(5)]
        assert all(pending is not None for pending in waiting)
        await asyncio.gather(*waiting)  # type: ignore[arg-type]
        return [warm_page(target)]

    assert not histograms_ready(seed)
    after = run_on_a_loop_of_its_own(scenario)
    # Its tables are built: the session's build is a lookup, and a later page waits for
    # nothing.
    assert histograms_ready(seed, law_of(SimulationState(seed=seed)))
    assert after == [None]


def test_a_page_of_the_default_scene_is_not_held_up() -> None:
    SimulationModel(SimulationState())  # the default seed's tables, as any session builds
    assert warm_page("/main") is None
    assert warm_page("/main?d_k=256&temperature=0.5") is None


def test_no_hostile_query_makes_the_warm_up_raise() -> None:
    # Whatever a link holds, the request goes on (the session explains the query): an
    # awaitable that completes, or nothing to wait for.
    cases = hostile_queries()

    async def scenario() -> int:
        read = 0
        for case in cases:
            pending = warm_page(f"/main?{case.query}")
            if pending is not None:
                await pending
            read += 1
        return read

    assert run_on_a_loop_of_its_own(scenario) == len(cases)


def test_the_first_page_builds_the_training_sections_figures_ahead() -> None:
    """A page's warm-up starts reading the shipped grid and building the training figures,
    once per process, without waiting for them: the first student who opens the section
    finds them built, and nothing was computed."""
    warm_page("/main")
    started = warm_training()
    assert warm_training() is started, "once per process"
    figures = started.result(timeout=60)
    assert figures is not None and SHARED_GRID.from_stored and SHARED_GRID.computations == 0
    assert training_figures(SHARED_GRID.grid) is figures, "the sessions' build is a lookup"
