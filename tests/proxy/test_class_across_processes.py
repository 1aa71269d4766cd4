"""Class mode across two processes behind nginx, over a Redis of the test's own: a presenter
on one process, students on both; the scene and the answers' counts arrive on both.

When Redis stops (issue 48) every page says so first and nothing that contradicts it; the
presenter's bar names the students out of reach and keeps their answers; a student's own
move marks them exploring; a Send reaches the presenter's process at once, the bar says the
rest wait, and once Redis is back the scene reaches the followers on the other process with
no other Send (not the explorer), and the bar says it reached them all. Shown to the class,
the counts appear beside the question on the other process. A student who closes the tab on
the other process leaves the presenter's roll within :data:`COUNTED_OUT_S`, and a quick
correction there counts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from axe_support import assert_axe_clean
from class_support import answer_divisor, class_bar, correct_9_to_8, count, peek
from playwright.sync_api import expect
from proxy_support import Cluster, start_cluster, stop_cluster
from redis_support import RedisServer

from app.served.class_bus import BUS_ENV
from app.served.classroom import PRESENT_PARAMETER, PRESENTER_KEY_ENV
from app.served.components.class_bar import CLASS_TEXTS
from app.simulation.spec import CONTROL_BY_NAME

if TYPE_CHECKING:
    from conftest import ClusterPages

pytestmark = pytest.mark.browser

KEY = "proxy-test-presenter-key"
D_K = CONTROL_BY_NAME["d_k"].label
TEMPERATURE = CONTROL_BY_NAME["temperature"].label
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


def test_a_class_across_two_processes_and_a_redis_outage(
    class_cluster: Cluster, cluster_pages: ClusterPages, redis_server: RedisServer
) -> None:
    keys = class_cluster.route_keys()
    first, second = list(keys.values())
    presenter = cluster_pages.open(class_cluster, f"?{PRESENT_PARAMETER}={KEY}", route_key=first)
    here = cluster_pages.open(class_cluster, "", route_key=first)
    there = cluster_pages.open(class_cluster, "", route_key=second)
    wanderer = cluster_pages.open(class_cluster, "", route_key=second)
    panel = class_bar(presenter)
    expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=3), timeout=BUS_WAIT_MS)
    for student in (here, there, wanderer):
        expect(class_bar(student)).to_contain_text(CLASS_TEXTS["following"], timeout=BUS_WAIT_MS)
    # The presenter's address lost the key; its page presents from a cookie.
    presenter.page.wait_for_function(
        "name => !new URLSearchParams(location.search).has(name)", arg=PRESENT_PARAMETER
    )

    # The scene reaches the students of both processes.
    presenter.press(D_K, "End")
    presenter.wait_url(d_k="1024")
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    for student in (here, there, wanderer):
        student.wait_url(d_k="1024")

    # An answer on the other process shows on the presenter's chart (peeked at).
    answer_divisor(there, "8")
    peek(panel)
    right = count(panel, "divisor", "right")
    expect(right).to_have_text("1", timeout=BUS_WAIT_MS)
    # Each process's voters cross the bus: three browsers, on two processes.
    expect(panel.locator(".sdpa-class-voters")).to_have_text(
        CLASS_TEXTS["voters"].format(browsers=3, pages=3), timeout=BUS_WAIT_MS
    )

    # Redis stops: every page says so first, and nothing that contradicts it.
    redis_server.stop()
    expect(panel).to_contain_text(CLASS_TEXTS["bus_down"], timeout=BUS_WAIT_MS)
    for student in (here, there, wanderer):
        expect(class_bar(student).locator(".sdpa-class-title")).to_have_text(
            CLASS_TEXTS["bus_down"], timeout=BUS_WAIT_MS
        )
    expect(class_bar(there)).not_to_contain_text(CLASS_TEXTS["following"])
    expect(class_bar(there)).to_contain_text(CLASS_TEXTS["bus_down_following"])
    expect(class_bar(here)).to_contain_text(CLASS_TEXTS["bus_down_with_presenter"])
    # The presenter's bar names the part of the class out of reach, and keeps its answers.
    expect(panel).to_contain_text(
        CLASS_TEXTS["bus_down_presenter"].format(count=2), timeout=BUS_WAIT_MS
    )
    expect(panel).to_contain_text(CLASS_TEXTS["students_one"])
    expect(right).to_have_text("1")
    for app, role in ((presenter, "presenter"), (there, "student")):
        assert_axe_clean(app.page, "served", f"class mode during an outage, {role}")

    # A student's own move during the outage marks them exploring.
    wanderer.press(TEMPERATURE, "ArrowRight")
    expect(class_bar(wanderer)).to_contain_text(CLASS_TEXTS["exploring_detail"])
    expect(class_bar(wanderer).get_by_role("button", name=CLASS_TEXTS["back"])).to_be_visible()

    # A Send reaches this process's students now, and the bar says the rest wait.
    presenter.press(D_K, "Home")
    presenter.wait_url(d_k="1")
    panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
    here.wait_url(d_k="1")
    expect(panel).to_contain_text(CLASS_TEXTS["held"].format(count=1))
    assert "d_k=1024" in there.page.url

    # Redis comes back: so does the class, and the scene reaches the follower there with no
    # other Send; the explorer's own scene stays theirs.
    redis_server.start()
    for app in (presenter, there):
        expect(class_bar(app)).not_to_contain_text(CLASS_TEXTS["bus_down"], timeout=BUS_WAIT_MS)
    there.wait_url(d_k="1")
    expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=3), timeout=BUS_WAIT_MS)
    expect(panel).to_contain_text(CLASS_TEXTS["sent_many"].format(count=3), timeout=BUS_WAIT_MS)
    expect(class_bar(wanderer)).to_contain_text(CLASS_TEXTS["exploring"], timeout=BUS_WAIT_MS)
    assert "d_k=1024" in wanderer.page.url

    # Shown to the class: the student on the other process sees the result beside the question.
    panel.get_by_role("switch", name=CLASS_TEXTS["reveal"]).check()
    divisor_result = there.page.locator(
        '.quiz-question:has(button[data-check="divisor"]) .sdpa-quiz-class'
    )
    expect(count(divisor_result, "divisor", "right")).to_have_text("1", timeout=BUS_WAIT_MS)


def test_a_closed_tab_on_another_process_leaves_the_roll(
    class_cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    first, second = list(class_cluster.route_keys().values())
    presenter = cluster_pages.open(class_cluster, f"?{PRESENT_PARAMETER}={KEY}", route_key=first)
    cluster_pages.open(class_cluster, "", route_key=first)
    staying = cluster_pages.open(class_cluster, "", route_key=second)
    leaving = cluster_pages.open(class_cluster, "", route_key=second)
    panel = class_bar(presenter)
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
    expect(class_bar(staying)).to_contain_text(CLASS_TEXTS["following"], timeout=BUS_WAIT_MS)
    correct_9_to_8(staying, panel, timeout_ms=BUS_WAIT_MS)
