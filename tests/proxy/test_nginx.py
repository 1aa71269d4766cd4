"""Two app processes behind nginx with deploy/nginx.conf: sessions on both, a page and its
websocket on one process (directly and inside another site's iframe), a websocket on the
wrong process still correct, and a stopped process: new sessions go on, its pages say so.

Pages and their websockets are told apart in nginx's access log by a seed unique to each
page: BokehJS opens the websocket with the page's query string.
"""

from __future__ import annotations

import itertools
import re
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Route, expect
from procs_support import channel_async, run_async
from proxy_support import (
    DEPLOY_CONF,
    PROBE_PATH,
    ROUTE_COOKIE,
    AccessRecord,
    Cluster,
    NginxProxy,
    kill_server,
)

from app.served.channel import CHANNEL_PATHS
from app.served.components.connection import NOTICE_TITLE, RELOAD_LABEL
from app.simulation.spec import D_K_GRID

if TYPE_CHECKING:
    from conftest import ClusterPages

D_K = "d_k (key dimension)"
COURSE_SITE = "https://course.test"
"""Another site than nginx's 127.0.0.1: the course page Playwright serves in the test (over
HTTPS, as a course platform is: Chromium lets only secure pages reach a loopback address)."""

_seeds = itertools.count(1000)


def unique_seed() -> int:
    """A seed no other page of the session uses: it marks a page's requests in the log."""
    return next(_seeds)


def move_d_k(app: Any, key: str = "ArrowRight") -> None:
    """One step of the d_k slider (``key`` pressed on it); wait for the heatmap's new
    weights."""
    app.mark("weight")
    app.press(D_K, key)
    app.wait_changed("weight")


def page_and_websocket(proxy: NginxProxy, seed: int) -> tuple[AccessRecord, AccessRecord]:
    """The access log's records of the page with ``seed`` and of its websocket.

    Its websocket is logged once it closes: close the page first.
    """

    def has_seed(record: AccessRecord) -> bool:
        return f"seed={seed}&" in record.target + "&"

    (page,) = proxy.wait_records(
        lambda record: has_seed(record) and record.path == "/main" and record.status == 200
    )
    (websocket,) = proxy.wait_records(
        lambda record: has_seed(record) and record.path == "/main/ws" and record.status == 101
    )
    return page, websocket


def routing_cookie_set(proxy: NginxProxy, cookie: str | None) -> str | None:
    """The routing cookie's Set-Cookie header nginx answers a request with ``cookie``."""
    headers = {"Cookie": f"{ROUTE_COOKIE}={cookie}"} if cookie is not None else {}
    request = urllib.request.Request(f"{proxy.url}/{PROBE_PATH}", method="HEAD", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Set-Cookie")


LOCATION = re.compile(r"^\s*location\s+~\s+(\S+)\s*\{(.*?)^\s*\}", re.M | re.S)


def websocket_location(conf: Path = DEPLOY_CONF) -> tuple[str, str]:
    """The regex ``location`` of deploy/nginx.conf that has the long read timeout, and its
    body."""
    found = [
        (match[1], match[2])
        for match in LOCATION.finditer(conf.read_text())
        if "proxy_read_timeout 2h;" in match[2]
    ]
    assert len(found) == 1, f"one websocket location expected in {conf}: {found}"
    return found[0]


def test_every_websocket_of_a_page_gets_the_websocket_location() -> None:
    """Bokeh's websocket and the session's own channel (app/served/channel.py), at every path the
    app serves them, are long-lived and unbuffered; pages are not."""
    pattern, body = websocket_location()
    assert "proxy_buffering off;" in body and "proxy_send_timeout 2h;" in body
    assert "proxy_pass http://sdpa_sim;" in body, "sticky like the page: the same upstream"
    for path in ("/main/ws", "/ws", *CHANNEL_PATHS):
        assert re.search(pattern, path), path
    for path in ("/main", "/", "/main/autoload.js", "/assets/channel.html", "/static/x.js"):
        assert not re.search(pattern, path), path


def test_a_pages_channel_opens_through_nginx_on_the_pages_process(cluster: Cluster) -> None:
    """With the routing cookie, the page, its Bokeh websocket and its channel
    (``/channel?key=<the page's key>``) reach one process: a move on the channel comes back
    as a frame, and nginx logs the channel as a websocket (101) on that process."""
    for upstream, route_key in cluster.route_keys().items():
        cookie = {"Cookie": f"{ROUTE_COOKIE}={route_key}"}
        opened = run_async(channel_async(cluster.proxy.url, headers=cookie), 60)
        assert opened["status"] == 101
        assert isinstance(opened["reply"], bytes), f"no frame on the channel: {opened}"
        (record,) = cluster.proxy.wait_records(
            lambda record, key=route_key: record.path == "/channel" and record.route == key
        )
        assert (record.status, record.upstream) == (101, upstream)


def test_nginx_sets_a_routing_cookie_unless_a_valid_one_comes(cluster: Cluster) -> None:
    """A first visit, or a cookie that is not one of nginx's ids, gets a new random key in
    a cookie fit for a third-party iframe; a valid one is kept (no Set-Cookie)."""
    keys = set()
    for sent in (None, "not-a-key", "0" * 31, "A" * 32):
        header = routing_cookie_set(cluster.proxy, sent)
        assert header is not None, f"no new cookie for {sent!r}"
        match = re.fullmatch(rf"{ROUTE_COOKIE}=([0-9a-f]{{32}}); (.*)", header)
        assert match is not None, header
        assert set(match[2].split("; ")) == {
            "Path=/",
            "HttpOnly",
            "Secure",
            "SameSite=None",
            "Partitioned",
        }
        keys.add(match[1])
    assert len(keys) == 4, "each new cookie is a new random key"
    assert routing_cookie_set(cluster.proxy, keys.pop()) is None


@pytest.mark.browser
def test_pages_through_nginx_work_on_both_processes_each_with_its_websocket(
    cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    """Full and embed pages, new and returning browsers: each draws the heatmap, follows a
    d_k move, and has its page and websocket served by one process; both processes serve."""
    keys = cluster.route_keys()
    first, second = sorted(keys)
    visits = [
        # (query, routing cookie already held, viewport)
        ("", None, None),
        ("?embed=true&d_k=256", None, {"width": 800, "height": 600}),
        ("?n=16", keys[first], None),
        ("?embed=true&scaled=false", keys[second], {"width": 800, "height": 600}),
    ]
    opened = []
    for query, route_key, viewport in visits:
        seed = unique_seed()
        query = f"{query}{'&' if query else '?'}seed={seed}"
        app = cluster_pages.open(cluster, query, viewport=viewport, route_key=route_key)
        opened.append((seed, route_key, app))
    for _, _, app in opened:
        move_d_k(app)

    held = {}
    for seed, route_key, app in opened:
        cookies = {c["name"]: c["value"] for c in app.page.context.cookies()}
        assert ROUTE_COOKIE in cookies, "nginx should have given a routing cookie"
        if route_key is not None:
            assert cookies[ROUTE_COOKIE] == route_key, "a valid cookie is kept, not replaced"
        held[seed] = cookies[ROUTE_COOKIE]
    cluster_pages.close()

    served = set()
    for seed, _, _ in opened:
        page, websocket = page_and_websocket(cluster.proxy, seed)
        assert page.route == websocket.route == held[seed]
        assert websocket.upstream == page.upstream, f"seed {seed}: page and websocket split"
        served.add(page.upstream)
    assert served == set(keys), "both processes should have served pages"
    for server in cluster.servers:
        assert "ServerConnection created" in server.log_text(), f"no session on {server.port}"


@pytest.mark.browser
def test_course_page_iframe_on_another_site_keeps_page_and_websocket_together(
    cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    """Inside another site's iframe the routing cookie is a third-party one: it must still
    be stored (SameSite=None, Partitioned) and sent with the websocket."""
    seed = unique_seed()
    src = f"{cluster.proxy.url}/main?embed=true&d_k=512&seed={seed}"
    course = (
        "<!doctype html><html><head><title>Course</title></head><body><h1>Attention</h1>"
        f'<iframe src="{src}" width="800" height="600" title="Simulation"></iframe>'
        "</body></html>"
    )
    context = cluster_pages.new_context(
        cluster, viewport={"width": 900, "height": 800}, allowed_origins=(COURSE_SITE,)
    )

    def serve_course(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body=course)

    context.route(f"{COURSE_SITE}/**", serve_course)
    # Chromium asks before a page from a public address loads one from a local address;
    # a real course site and sdpa-sim server are both public.
    context.grant_permissions(["local-network-access"], origin=COURSE_SITE)
    page = context.new_page()
    with page.expect_event("framenavigated", lambda frame: "/main?" in frame.url) as navigated:
        page.goto(f"{COURSE_SITE}/lesson.html")
    cookies = context.cookies(cluster.proxy.url)
    assert [cookie.get("partitionKey") for cookie in cookies] == [COURSE_SITE], (
        "the routing cookie should be stored, partitioned under the course site"
    )
    app = cluster_pages.app_page(navigated.value, cluster)
    app.wait_ready()
    app.wait_histograms(512)
    move_d_k(app)
    cluster_pages.close()

    page_record, websocket = page_and_websocket(cluster.proxy, seed)
    assert websocket.route == page_record.route, (
        "the websocket came without the routing cookie nginx set on the iframe's page"
    )
    assert websocket.upstream == page_record.upstream


@pytest.mark.browser
def test_websocket_on_another_process_gets_the_linked_scene(
    cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    """When the cookie changes between the page and its websocket (as when it is blocked),
    the websocket reaches the other process: that process builds the session from the
    page's token, with the link's arguments, and serves Panel's CSS itself (the conftest
    fails the test on any request that leaves nginx, such as one to Panel's CDN)."""
    keys = cluster.route_keys()
    page_process, websocket_process = sorted(keys)
    seed = unique_seed()
    query = f"?d_k=1024&scaled=false&n=16&seed={seed}"
    context = cluster_pages.new_context(cluster, route_key=keys[page_process])

    def switch_cookie_after_page(route: Route) -> None:
        # The page's first script: from here on, its websocket included, requests carry the
        # other process's key. (Fulfilling the page itself from the test would make Chromium
        # take it for a public page reaching a local address, and block its websocket.)
        other = {"name": ROUTE_COOKIE, "value": keys[websocket_process], "url": cluster.proxy.url}
        context.add_cookies([other])
        route.continue_()

    context.route(f"{cluster.proxy.url}/static/**", switch_cookie_after_page)
    page = context.new_page()
    response = page.goto(f"{cluster.proxy.url}/main{query}")
    assert response is not None and response.status == 200
    app = cluster_pages.app_page(page, cluster)
    app.wait_ready()
    app.wait_histograms(1024)
    shown = app.heatmap()
    assert (shown["rows"], shown["cols"]) == (16, 16), "n=16 from the link should apply"
    expect(page.get_by_role("switch", name="scale by 1/√d_k")).not_to_be_checked()
    move_d_k(app, "ArrowLeft")  # d_k = 1024 is the slider's end
    app.wait_histograms(D_K_GRID[-2])
    cluster_pages.close()

    page_record, websocket = page_and_websocket(cluster.proxy, seed)
    assert page_record.upstream == page_process
    assert websocket.upstream == websocket_process


@pytest.mark.browser
def test_a_stopped_process_shows_its_pages_a_notice_and_new_sessions_go_on(
    own_cluster: Cluster, cluster_pages: ClusterPages
) -> None:
    """The process behind a full page and an embedded one dies: both show the notice with
    its Reload button, which brings the page back, scene included, from the other process;
    the other process's page keeps working and a new visitor gets a session."""
    cluster = own_cluster
    keys = cluster.route_keys()
    doomed, survivor = sorted(keys)
    full = cluster_pages.open(cluster, f"?seed={unique_seed()}", route_key=keys[doomed])
    move_d_k(full)
    moved_to = D_K_GRID[D_K_GRID.index(64) + 1]
    full.wait_url(d_k=str(moved_to))
    embedded = cluster_pages.open(
        cluster,
        f"?embed=true&seed={unique_seed()}",
        viewport={"width": 800, "height": 600},
        route_key=keys[doomed],
    )
    other = cluster_pages.open(cluster, f"?seed={unique_seed()}", route_key=keys[survivor])
    move_d_k(other)

    # Killed, as by a crash or the OOM killer. (A graceful stop, SIGTERM, closes the
    # websockets too, but a page message that arrives during Bokeh's shutdown is answered
    # with an error the page logs: a race this test would lose now and then.)
    kill_server(cluster.server_at(doomed))

    for app in (full, embedded):
        notice = app.page.get_by_role("alertdialog", name=NOTICE_TITLE)
        expect(notice).to_be_visible()
        expect(notice).to_be_in_viewport(ratio=1)
        expect(notice).to_contain_text("Reload to continue")
        expect(notice.get_by_role("button", name=RELOAD_LABEL)).to_be_focused()
    expect(other.page.get_by_role("alertdialog")).to_have_count(0)
    move_d_k(other)

    newcomer = cluster_pages.open(cluster, f"?seed={unique_seed()}")
    move_d_k(newcomer)

    with full.page.expect_navigation():
        full.page.get_by_role("button", name=RELOAD_LABEL).click()
    full.wait_ready()
    full.wait_histograms(moved_to)
    expect(full.page.get_by_role("alertdialog")).to_have_count(0)
    move_d_k(full)
