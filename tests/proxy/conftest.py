"""Proxy fixtures: two ``panel serve app/main.py`` processes behind nginx running the
project's deploy/nginx.conf, and Chromium pages opened through it that fail the test on any
page error, any request that leaves nginx (a CDN, say) or any error in a process's log.

The page helpers (:class:`AppPage`: waiting for the first screen, pressing a slider, waiting
for a new heatmap image) are the browser tests' own, loaded from tests/browser/conftest.py,
and every page gets the script that finds the served figures (browser_support's
``FIGURES_HELPER_JS``: the first screen's figures are not in the session's document).
Everything waits on state (the page's data, nginx's access log), never on time.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import browser_support
import pytest
from browser_support import AppServer
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Dialog, Page, Request
from proxy_support import ROUTE_COOKIE, Cluster, find_nginx, start_cluster, stop_cluster


def _load_browser_helpers() -> ModuleType:
    # Under its own name: pytest has imported tests/browser/conftest.py as `conftest`, as it
    # has this file and tests/conftest.py. Only classes and constants are taken from it, so
    # none of its fixtures or hooks reach the proxy tests.
    path = Path(__file__).resolve().parents[1] / "browser" / "conftest.py"
    spec = importlib.util.spec_from_file_location("sdpa_browser_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered first: dataclasses look their module up while building AppPage.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


browser_helpers = _load_browser_helpers()
AppPage = browser_helpers.AppPage

WIDE = {"width": 1280, "height": 800}
IFRAME = {"width": 800, "height": 600}
"""The size of the example course page's iframe: the embed mode's target."""


@pytest.fixture(scope="session")
def nginx_binary() -> Path:
    """Debian's nginx; its absence fails the tests (scripts/test.sh installs it)."""
    nginx = find_nginx()
    if nginx is None:
        pytest.fail(
            "nginx is missing: the proxy tests run Debian's nginx "
            "(`apt-get install nginx`; scripts/test.sh installs it)",
            pytrace=False,
        )
    return nginx


def _cluster(nginx: Path, directory: Path) -> Cluster:
    try:
        return start_cluster(nginx, directory)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="module")
def cluster(nginx_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two app processes behind nginx, shared by a module's tests (none may stop them)."""
    running = _cluster(nginx_binary, tmp_path_factory.mktemp("cluster"))
    yield running
    stop_cluster(running)


@pytest.fixture
def own_cluster(nginx_binary: Path, tmp_path: Path) -> Iterator[Cluster]:
    """Two app processes behind nginx for one test, which may stop them."""
    running = _cluster(nginx_binary, tmp_path / "cluster")
    yield running
    stop_cluster(running)


@dataclass
class ClusterPages:
    """The Chromium pages a test opens through nginx, and the problems they ran into."""

    chromium: Browser
    contexts: list[BrowserContext] = field(default_factory=list)
    pages: list[Any] = field(default_factory=list)
    """Every :class:`AppPage` opened, frames in a course page included."""
    problems: list[str] = field(default_factory=list)
    log_marks: dict[int, tuple[AppServer, int]] = field(default_factory=dict)
    """Each process seen, by port, with the size its log had then."""
    clusters: list[Cluster] = field(default_factory=list)

    def new_context(
        self,
        cluster: Cluster,
        *,
        viewport: dict[str, int] | None = None,
        route_key: str | None = None,
        allowed_origins: tuple[str, ...] = (),
    ) -> BrowserContext:
        """A fresh light-scheme context (its own cookies), with ``route_key`` as its
        routing cookie if given. Its pages may load from nginx and ``allowed_origins``."""
        if cluster not in self.clusters:
            self.clusters.append(cluster)
            for server in cluster.servers:
                self.log_marks.setdefault(server.port, (server, server.log_size()))
        context = self.chromium.new_context(viewport=viewport or WIDE, color_scheme="light")
        context.set_default_timeout(browser_helpers.PAGE_TIMEOUT_MS)
        context.add_init_script(browser_support.FIGURES_HELPER_JS)
        if route_key is not None:
            cookie = {"name": ROUTE_COOKIE, "value": route_key, "url": cluster.proxy.url}
            context.add_cookies([cookie])
        allowed = (cluster.proxy.url, *allowed_origins)

        def on_request(request: Request) -> None:
            if not request.url.startswith((*allowed, "data:", "blob:", "about:")):
                self.problems.append(f"request outside nginx: {request.url}")

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.problems.append(f"console error: {message.text}")

        def on_dialog(dialog: Dialog) -> None:
            self.problems.append(f"{dialog.type} dialog: {dialog.message}")
            dialog.dismiss()

        def watch(page: Page) -> None:
            page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
            page.on("console", on_console)
            page.on("dialog", on_dialog)

        context.on("request", on_request)
        context.on("page", watch)
        self.contexts.append(context)
        return context

    def app_page(self, page: Any, cluster: Cluster) -> Any:
        """The browser tests' :class:`AppPage` on ``page`` (a Page or a Frame)."""
        app = AppPage(page=page, server=cluster.servers[0])
        self.pages.append(app)
        return app

    def open(
        self,
        cluster: Cluster,
        query: str = "",
        *,
        viewport: dict[str, int] | None = None,
        route_key: str | None = None,
    ) -> Any:
        """A new context's page on ``/main{query}`` through nginx, once its first screen
        is drawn."""
        context = self.new_context(cluster, viewport=viewport, route_key=route_key)
        page = context.new_page()
        response = page.goto(f"{cluster.proxy.url}/main{query}")
        assert response is not None, "navigation produced no response"
        assert response.status == 200, f"HTTP {response.status} for {query!r}"
        app = self.app_page(page, cluster)
        app.wait_ready()
        return app

    def close(self) -> None:
        """Close every context: their websockets close, and nginx logs them."""
        for context in self.contexts:
            context.close()
        self.contexts.clear()

    def server_errors(self) -> str:
        """Error records every process seen has logged since the test began using it."""
        errors = []
        for server, mark in self.log_marks.values():
            # The browser tests' filter: error records, minus writes to closed websockets.
            found = AppPage(page=None, server=server, log_mark=mark).server_errors()
            if found:
                errors.append(f"process on port {server.port}:\n{found}")
        return "\n".join(errors)


@pytest.fixture
def cluster_pages(chromium: Browser) -> Iterator[ClusterPages]:
    """Pages through nginx for one test; closed afterwards."""
    pages = ClusterPages(chromium)
    yield pages
    pages.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail a test that passed its assertions if a page or a process reported an error."""
    result = yield
    pages = getattr(item, "funcargs", {}).get("cluster_pages")
    if isinstance(pages, ClusterPages):
        problems = list(pages.problems)
        if errors := pages.server_errors():
            problems.append(f"server logs:\n{errors}")
        if problems:
            raise AssertionError(
                "the pages or the processes reported errors:\n" + "\n".join(problems)
            )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """On a failed proxy test, attach the pages' problems, nginx's logs and the processes'."""
    report = yield
    if report.failed and call.when in {"setup", "call"}:
        funcargs = getattr(item, "funcargs", {})
        pages = funcargs.get("cluster_pages")
        if isinstance(pages, ClusterPages) and pages.problems:
            report.sections.append(("page problems", "\n".join(pages.problems)))
        for name in ("cluster", "own_cluster"):
            running = funcargs.get(name)
            if isinstance(running, Cluster):
                access = running.proxy.access_log
                text = access.read_text(errors="replace") if access.exists() else ""
                report.sections.append(("nginx access log (last 3000)", text[-3000:]))
                report.sections.append(
                    ("nginx error log (last 3000)", running.proxy.error_text()[-3000:])
                )
                for server in running.servers:
                    report.sections.append(
                        (f"panel serve on {server.port} (last 3000)", server.log_text()[-3000:])
                    )
    return report
