"""Fixtures for the export tests: an exported file, Node.js and an offline Chromium page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.export import export_html

from .js_harness import Runner, node_available, page_runner, run_node

FIND_MODEL = "Bokeh.documents.map((d) => d.get_model_by_name(name)).find((m) => m)"
"""JavaScript for the model called ``name`` in either of the page's documents (the first
screen's, the closed sections')."""

READY = (
    "() => window.SdpaExport !== undefined && SdpaExport.snapshot() !== null"
    " && SdpaExport.snapshot().sections_ready && !SdpaExport.snapshot().lesson_pending"
)
"""The page has started, drawn its closed sections' document too, and its lesson shows
what it has (no lesson pass is pending)."""


@pytest.fixture(scope="session")
def exported_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page ``sdpa-sim export`` writes with its default limits, in a temporary folder."""
    path = tmp_path_factory.mktemp("export") / "sdpa-sim.html"
    export_html(path)
    return path


@pytest.fixture(scope="session")
def html(exported_file: Path) -> str:
    """The text of the default export."""
    return exported_file.read_text(encoding="utf-8")


@dataclass
class OfflinePage:
    """An exported page open from ``file://`` with every other request blocked and logged."""

    page: Any
    context: Any
    errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    def updates(self) -> int:
        """How many times the page has recomputed (1 once it has started)."""
        return self.page.evaluate("SdpaExport.snapshot().updates")

    def wait_for_update_after(self, count: int) -> None:
        """Wait until the page has recomputed more than ``count`` times and has drawn all
        of its first screen (the histograms follow the heatmap by a frame)."""
        self.page.wait_for_function(
            "(n) => { const s = SdpaExport.snapshot(); "
            "return s.updates > n && !s.histograms_pending; }",
            arg=count,
        )

    def wait_for_lesson_after(self, count: int) -> None:
        """Wait until the lesson has been drawn more than ``count`` times and no further
        pass is pending (a pass that ended before a change does not count for it)."""
        self.page.wait_for_function(
            "(n) => { const s = SdpaExport.snapshot(); "
            "return s.lesson_updates > n && !s.lesson_pending; }",
            arg=count,
        )

    def snapshot(self) -> dict[str, Any]:
        """The page's state and readout numbers (``SdpaExport.snapshot()``)."""
        return self.page.evaluate("SdpaExport.snapshot()")

    def readouts(self) -> str:
        """The markup of the readout tiles."""
        return self.page.locator("#sdpa-readouts").inner_html()

    def open_sections(self) -> None:
        """Open every closed lesson section (its disclosure button), as a student would, so
        the widgets inside can be found by role."""
        closed = self.page.locator(".sdpa-lesson .sdpa-disclosure button[aria-expanded=false]")
        for _ in range(closed.count()):
            # Each press opens one: the closed ones are the locator's matches now.
            closed.first.click()

    def model(self, name: str, expression: str) -> Any:
        """Evaluate ``expression`` on the Bokeh model named ``name`` (bound to ``m``)."""
        return self.page.evaluate(
            f"(name) => {{ const m = {FIND_MODEL}; return {expression}; }}",
            name,
        )


def _open(
    browser: Any, path: Path, query: str, width: int, height: int, color_scheme: str = "light"
) -> OfflinePage:
    context = browser.new_context(
        viewport={"width": width, "height": height}, color_scheme=color_scheme
    )
    page = context.new_page()
    opened = OfflinePage(page=page, context=context)
    page.on("pageerror", lambda error: opened.errors.append(f"page error: {error}"))
    # An alert, confirm or prompt could only come from script a link injected.
    page.on(
        "dialog",
        lambda dialog: (opened.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()),
    )
    page.on(
        "console",
        lambda message: (
            opened.errors.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            opened.blocked.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(path.as_uri() + query)
    page.wait_for_function(READY)
    return opened


@pytest.fixture
def open_export(chromium: Any, exported_file: Path) -> Iterator[Callable[..., OfflinePage]]:
    """Open the exported file (or another exported ``path``) with an optional query string,
    window size and system colour scheme (light unless given); on teardown, fail if any page
    reported an error or tried to reach the network."""
    pages: list[OfflinePage] = []

    def open_page(
        query: str = "",
        width: int = 1280,
        height: int = 800,
        color_scheme: str = "light",
        *,
        path: Path | None = None,
    ) -> OfflinePage:
        opened = _open(chromium, path or exported_file, query, width, height, color_scheme)
        pages.append(opened)
        return opened

    yield open_page
    for opened in pages:
        opened.context.close()
    for opened in pages:
        assert opened.errors == [], f"the page reported errors: {opened.errors}"
        assert opened.blocked == [], f"the page tried to reach the network: {opened.blocked}"


@pytest.fixture(scope="package")
def page_js(chromium: Any, exported_file: Path) -> Iterator[Runner]:
    """Runs calls in one exported page shared by the session's kernel tests."""
    opened = _open(chromium, exported_file, "", 1280, 800)
    yield page_runner(opened.page)
    opened.context.close()
    assert opened.errors == [], f"the page reported errors: {opened.errors}"
    assert opened.blocked == [], f"the page tried to reach the network: {opened.blocked}"


@pytest.fixture(params=["node", pytest.param("chromium", marks=pytest.mark.browser)])
def js(request: pytest.FixtureRequest) -> Runner:
    """Runs calls to the export's JavaScript: under Node.js, and in the exported page."""
    if request.param == "node":
        if not node_available():
            pytest.skip("node is not installed: the kernel tests run it")
        return run_node
    return request.getfixturevalue("page_js")


@pytest.fixture
def node() -> Runner:
    """Runs calls to the export's JavaScript under Node.js."""
    if not node_available():
        pytest.skip("node is not installed: the kernel tests run it")
    return run_node
