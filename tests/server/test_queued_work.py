"""One page floods the server with heavy work; another student's moves still answer (issue 45).

Each case of :func:`hostile_messages.queued_work_floods` (CSV downloads pressed again and
again between moves of σ_q, Resample, Train and Stop, and all of them mixed) is sent at once
on one session's channel at n = 1024 (a matrix file: 50 MB written in ~1.4 s), while a
second session at n = 512 (its refreshes run in the refresh pool the downloads used to
share) moves d_k: each of its moves must come
back within :data:`ANSWER_WITHIN` seconds, a bound far above an idle move (~0.15 s) and
below what the flood cost before its work went through a gate (tens of seconds). The
flooding page then gets a file for each button it pressed, never more files than presses,
and its own next move; the server logs no traceback. One process, and ``--num-procs 2``.
Every wait is on a message, bounded.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hostile_messages import CSV_BUTTONS, queued_work_floods
from procs_support import FrontServer, run_async, running_front, tracebacks
from protocol_client import ProtocolSession, SliderWalk, open_lesson, page_url

TIMEOUT = 60.0
"""Seconds any one wait may take on a loaded machine (the training grid is computed once
per process, on the first page that opens its section)."""

ANSWER_WITHIN = 15.0
"""Seconds another student's move may take while a page floods the server."""

N = 512
"""The other student's n: from n = 512 a refresh runs in the refresh pool (OFF_LOOP_CELLS)."""

FLOOD_N = 1024
"""The flooding page's n, the issue's."""

VICTIM_MOVES = 3

CASES = list(queued_work_floods(seed=4501, cases=1, length=40))


@pytest.fixture(scope="module", params=[1, 2], ids=["one process", "num-procs 2"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """``sdpa-sim`` in one process, then with ``--num-procs 2``."""
    log_path = tmp_path_factory.mktemp("queued") / "server.log"
    try:
        with running_front(log_path, workers=request.param) as front:
            yield front
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


async def flooding_page(server: FrontServer) -> ProtocolSession:
    """A page with its lesson and both heavy sections open, ready to press their buttons."""
    page = ProtocolSession(page_url(server.url, n=FLOOD_N, d_k=64), timeout=TIMEOUT)
    await page.open()
    await page.send_document_ready()
    await open_lesson(page)
    await page.open_sections("training", "assumptions")

    def sections_built() -> bool:
        sent = page.lesson_values
        built = any("readouts" in values.get("assumptions", {}) for values in sent)
        grid = any("figures" in values.get("training", {}) for values in sent)
        return built and grid

    await page.wait_for(sections_built, "the assumptions and training sections")
    return page


async def answered_move(page: ProtocolSession, walk: SliderWalk, within: float) -> float:
    """Move d_k one step; the seconds until the heatmap showed it (at most ``within``)."""
    move = await page.move(walk.slider, walk.next())
    await page.wait_for(lambda: move.answered is not None, "the move's frame", within)
    return move.answered - move.sent


@pytest.mark.parametrize(("family", "messages"), CASES, ids=[family for family, _ in CASES])
def test_another_students_moves_answer_while_a_page_floods_heavy_work(
    server: FrontServer, family: str, messages: list
) -> None:
    since = server.log_size()
    downloads = [msg for _, msg in messages if "download" in msg.get("assumptions", {})]

    async def scenario() -> dict:
        victim = ProtocolSession(page_url(server.url, n=N, d_k=64), timeout=TIMEOUT)
        flooder = None
        try:
            await victim.open()
            await victim.send_document_ready()
            walk = SliderWalk.around(victim.index.slider("d_k"), 4, 6)
            await answered_move(victim, walk, TIMEOUT)  # the first, before the flood
            flooder = await flooding_page(server)
            for target, msg in messages:
                await flooder.send_to(target, msg)
            during = [await answered_move(victim, walk, ANSWER_WITHIN) for _ in range(VICTIM_MOVES)]
            pressed = {msg["assumptions"]["download"] for msg in downloads}
            await flooder.wait_for(
                lambda: pressed <= {file["which"] for file in flooder.downloads()},
                "a file for each button pressed",
            )
            own = SliderWalk.around(flooder.index.slider("d_k"), 4, 6)
            await answered_move(flooder, own, TIMEOUT)
            return {"during": during, "pressed": pressed, "files": flooder.downloads()}
        finally:
            await victim.close()
            if flooder is not None:
                await flooder.close()

    result = run_async(scenario(), 300)
    assert len(result["files"]) <= len(downloads)
    assert {file["which"] for file in result["files"]} == result["pressed"] <= set(CSV_BUTTONS)
    found = tracebacks(server.log_text(since))
    assert not found, found
