"""Class mode across two processes behind nginx, over a Redis of the test's own: a presenter
on one process, students on both; the scene and the answers' counts arrive on both; when
Redis stops every page works alone and says so, and the class comes back with Redis; a
student who closes the tab on the other process leaves the presenter's roll within
:data:`COUNTED_OUT_S`, and a quick correction there counts (issue 48)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Locator, expect
from proxy_support import Cluster, start_cluster, stop_cluster
from redis_support import RedisServer

from app.page.views.quiz import DIVISOR_LABEL
from app.served.class_bus import BUS_ENV
from app.served.class_seat import ANSWER_INTERVAL_S
from app.served.classroom import PRESENT_PARAMETER, PRESENTER_KEY_ENV
from app.served.components.class_bar import CLASS_TEXTS
from app.simulation.spec import CONTROL_BY_NAME

if TYPE_CHECKING:
    from conftest import ClusterPages

pytestmark = pytest.mark.browser

KEY = "proxy-test-presenter-key"
D_K = CONTROL_BY_NAME["d_k"].label
BUS_WAIT_MS = 30_000
"""How long a page may take to show the bus going down or coming back (the processes
notice within a few seconds: a reconnect each second, a heartbeat each second)."""
COUNTED_OUT_S = 5.0
"""The longest a closed student's page may still count in the presenter's roll."""


@pytest.fixture
def class_cluster(
    nginx_binary: Path, tmp_path: Path, redis_server: RedisServer
) -> Iterator[Cluster]:
    """Two processes with the presenter key and the class bus, behind nginx."""
    env = {PRESENTER_KEY_ENV: KEY, BUS_ENV: redis_server.url}
    try:
        running = start_cluster(nginx_binary, tmp_path / "cluster", env=env)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield running
    stop_cluster(running)


def _bar(app: Any) -> Locator:
    """The class bar on an AppPage."""
    return app.page.get_by_role("region", name=CLASS_TEXTS["region"])


def test_a_class_across_two_processes_and_a_redis_outage(
    class_cluster: Cluster, cluster_pages: ClusterPages, redis_server: RedisServer
) -> None:
    keys = class_cluster.route_keys()
    first, second = list(keys.values())
    presenter = cluster_pages.open(class_cluster, f"?{PRESENT_PARAMETER}={KEY}", route_key=first)
    here = cluster_pages.open(class_cluster, "", route_key=first)
    there = cluster_pages.open(class_cluster, "", route_key=second)
    panel = _bar(presenter)
    expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=2), timeout=BUS_WAIT_MS)
    for student in (here, there):
        expect(_bar(student)).to_contain_text(CLASS_TEXTS["following"], timeout=BUS_WAIT_MS)

    # The scene reaches the students of both processes.
    presenter.press(D_K, "End")
    presenter.wait_url(d_k="1024")
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    here.wait_url(d_k="1024")
    there.wait_url(d_k="1024")

    # An answer on the other process shows on the presenter's chart.
    there.open_lesson()
    box = there.page.get_by_label(DIVISOR_LABEL)
    box.fill("8")
    box.press("Enter")
    right = panel.locator('[data-question="divisor"] [data-choice="right"] .sdpa-class-count')
    expect(right).to_have_text("1", timeout=BUS_WAIT_MS)
    # Each process's voters cross the bus: two browsers, one on each process.
    expect(panel.locator(".sdpa-class-voters")).to_have_text(
        CLASS_TEXTS["voters"].format(browsers=2, pages=2), timeout=BUS_WAIT_MS
    )

    # Redis stops: every page works alone and says so.
    redis_server.stop()
    for app in (presenter, there):
        expect(_bar(app)).to_contain_text(CLASS_TEXTS["bus_down"], timeout=BUS_WAIT_MS)
    presenter.press(D_K, "Home")
    presenter.wait_url(d_k="1")
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    here.wait_url(d_k="1")  # the presenter's own process still has its students
    assert "d_k=1024" in there.page.url

    # Redis comes back: so does the class.
    redis_server.start()
    for app in (presenter, there):
        expect(_bar(app)).not_to_contain_text(CLASS_TEXTS["bus_down"], timeout=BUS_WAIT_MS)
    expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=2), timeout=BUS_WAIT_MS)
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    there.wait_url(d_k="1")


def test_a_closed_tab_on_another_process_leaves_the_roll(
    class_cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    first, second = list(class_cluster.route_keys().values())
    presenter = cluster_pages.open(class_cluster, f"?{PRESENT_PARAMETER}={KEY}", route_key=first)
    cluster_pages.open(class_cluster, "", route_key=first)
    staying = cluster_pages.open(class_cluster, "", route_key=second)
    leaving = cluster_pages.open(class_cluster, "", route_key=second)
    panel = _bar(presenter)
    expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=3), timeout=BUS_WAIT_MS)
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    reached = CLASS_TEXTS["sent_many"].format(count=3)
    expect(panel).to_contain_text(reached)

    # Counted out by its own process, whose status reaches the presenter's.
    closed_at = time.monotonic()
    leaving.page.close()
    expect(panel).to_contain_text(
        CLASS_TEXTS["students_many"].format(count=2), timeout=int(COUNTED_OUT_S * 1000)
    )
    counted_out_s = time.monotonic() - closed_at
    expect(panel).not_to_contain_text(reached)
    print(f"counted out {counted_out_s:.2f} s after the tab closed on the other process")
    assert counted_out_s <= COUNTED_OUT_S

    # 9, then 8 at once, on the other process: the presenter's chart counts the 8.
    expect(_bar(staying)).to_contain_text(CLASS_TEXTS["following"], timeout=BUS_WAIT_MS)
    staying.open_lesson()
    box = staying.page.get_by_label(DIVISOR_LABEL)
    box.fill("9")
    started = time.monotonic()
    box.press("Enter")
    box.fill("8")
    box.press("Enter")
    assert time.monotonic() - started < ANSWER_INTERVAL_S
    count = '[data-question="divisor"] [data-choice="{}"] .sdpa-class-count'
    expect(panel.locator(count.format("right"))).to_have_text("1", timeout=BUS_WAIT_MS)
    expect(panel.locator(count.format("wrong"))).to_have_text("0", timeout=BUS_WAIT_MS)
