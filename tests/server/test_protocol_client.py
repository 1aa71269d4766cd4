"""The protocol-level client the class-load benchmark drives (tests/protocol_client.py).

Against a real ``panel serve app/main.py``: two sessions open as a browser's would, each
gets its document and, once opened, its lesson, and a slider move comes back as a frame of
the first-screen figures carrying the heatmap's image. If the page changes so that the
client no longer finds what it needs (slider labels, model names, the figures' data model,
the lesson's gate), this fails instead of the benchmark silently measuring nothing. No
assertion on time: every wait is on state, bounded by a generous timeout.

The attribution of heatmap images to moves is checked without a server, on event orders
seen on this machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import browser_support
import pytest
from browser_support import AppServer, start_server, stop_server
from procs_support import run_async
from protocol_client import (
    FRAME_ATTRIBUTE,
    HEATMAP_PART,
    LESSON_MODELS,
    Move,
    ProtocolSession,
    SliderWalk,
    attribute_moves,
    frame_parts,
    open_lesson,
    page_url,
)

TIMEOUT = 90.0
"""Seconds any one wait may take on a loaded CI machine."""

PORTS = range(5400, 5500)
"""This module's server stays clear of the browser tests' ports (5100–5199)."""


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """One ``panel serve app/main.py`` for this module."""
    log_path = tmp_path_factory.mktemp("protocol-client") / "server.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(browser_support, "PORTS", PORTS)
        try:
            server = start_server(log_path)
        except RuntimeError as error:
            pytest.fail(str(error), pytrace=False)
    yield server
    stop_server(server)


async def _student(url: str, slider_key: str, channel: bool) -> tuple[ProtocolSession, Move]:
    session = ProtocolSession(url, timeout=TIMEOUT, channel=channel)
    try:
        await session.open()
        await session.send_document_ready()
        await open_lesson(session)
        slider = session.index.slider(slider_key)
        start = slider.position(64 if slider_key == "d_k" else 1.0)
        move = await session.move(slider, SliderWalk.around(slider, start, 8).next())
        assert session.on_channel == channel
        await session.wait_answered(timeout=TIMEOUT)
    finally:
        await session.close()
    return session, move


@pytest.mark.parametrize("channel", [True, False], ids=["channel", "bokeh-websocket"])
def test_two_sessions_get_their_document_lesson_and_heatmap(
    app_server: AppServer, channel: bool
) -> None:
    url = page_url(app_server.url, n=16, d_k=64)

    async def scenario() -> list[tuple[ProtocolSession, Move]]:
        return await asyncio.gather(
            _student(url, "d_k", channel), _student(url, "temperature", channel)
        )

    # In a thread of its own: Playwright's sync API keeps an event loop in this one.
    for session, move in run_async(scenario(), 120):
        assert session.errors == []
        times = session.times
        assert times.page is not None and times.document is not None
        assert times.started <= times.page <= times.document
        assert times.lesson is not None and times.lesson >= times.document
        assert all(session.index.named(name) is not None for name in LESSON_MODELS)
        (data_id,) = session.index.figures_data()
        assert session.index.channel_key()
        assert move.acked is not None and move.error is None
        assert move.answered is not None and move.answered >= move.sent
        assert session.heatmap_times, f"no patch set a {FRAME_ATTRIBUTE} naming {HEATMAP_PART}"
        # The newest frame answered the move's parts; it came on the channel when asked.
        changed = {"scores", HEATMAP_PART} if session.moves[0].slider == "d_k" else {HEATMAP_PART}
        assert changed <= session.newest_frame_parts
        if not channel:
            newest = session.index.models[data_id].attributes[FRAME_ATTRIBUTE]
            assert changed <= newest["parts"]
    assert "Traceback" not in app_server.log_text()


def test_frame_parts_reads_a_frame_as_bokeh_serializes_it() -> None:
    frame = {
        "type": "map",
        "entries": [
            ["sequence", 2],
            ["parts", ["histograms", "scores", "weights"]],
            ["numbers", {"type": "map", "entries": []}],
        ],
    }
    assert frame_parts(frame) == {"histograms", "scores", "weights"}
    assert frame_parts({"parts": ["view"]}) == {"view"}
    assert frame_parts({"type": "map"}) == set()
    assert frame_parts(None) == set()


def _moves(*stamps: tuple[float, float | None]) -> list[Move]:
    return [Move("d_k", i, f"m{i}", sent, acked) for i, (sent, acked) in enumerate(stamps)]


def test_one_move_at_a_time_is_shown_by_the_next_image_before_or_after_its_ok() -> None:
    moves = _moves((0.0, 0.05), (1.0, 1.08))
    # The first image follows its move's OK, the second races ahead of it.
    attribute_moves(moves, [0.06, 1.07])
    assert [move.answered for move in moves] == [0.06, 1.07]


def test_moves_acknowledged_before_an_image_fold_into_it() -> None:
    moves = _moves((0.0, 0.01), (0.02, 0.03), (0.04, 0.30))
    attribute_moves(moves, [0.10, 0.35])
    assert [move.answered for move in moves] == [0.10, 0.10, 0.35]


def test_an_image_with_no_move_left_takes_the_last_move_of_the_one_before() -> None:
    # Both OKs came before the first image, but the second change was handled after it.
    moves = _moves((0.0, 0.01), (0.02, 0.03))
    attribute_moves(moves, [0.05, 0.09])
    assert [move.answered for move in moves] == [0.05, 0.09]


def test_once_settled_the_moves_still_waiting_were_shown_by_the_last_image() -> None:
    # The last image raced ahead of the last OK: the last move is unanswered until settled.
    moves = _moves((0.0, 0.01), (0.02, 0.08))
    attribute_moves(moves, [0.07])
    assert [move.answered for move in moves] == [0.07, None]
    attribute_moves(moves, [0.07], settled=True)
    assert [move.answered for move in moves] == [0.07, 0.07]


def test_a_move_sent_after_the_last_image_stays_unanswered() -> None:
    moves = _moves((0.0, 0.01), (0.5, 0.51))
    attribute_moves(moves, [0.05], settled=True)
    assert [move.answered for move in moves] == [0.05, None]
