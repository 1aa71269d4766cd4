"""The routes a server mounts (app/server/mounted_routes.py) and Panel's ``/components/``
route, allowed only for the app's own bundle files (app/served/component_routes.py): pure
checks, and Panel's real handler behind the guarded server in this process."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from guard_cases import ROUTE_BASES, component_paths
from panel.io.resources import component_resource_path
from panel.io.server import ComponentResourceHandler
from procs_support import free_port, run_async
from tornado.httpclient import AsyncHTTPClient
from tornado.web import Application, RequestHandler

from app.page.bundle import BundledComponent
from app.served.component_routes import app_components, bundle_files, served_component_files
from app.server.guarded_http import GuardedHTTPServer
from app.server.mounted_routes import (
    KNOWN_HANDLERS,
    RouteTable,
    component_allowed,
    component_file,
    handler_name,
)
from app.server.request_guard import NOT_FOUND, RequestGuard


class Known(RequestHandler):
    """A handler the table is told about."""


class Unknown(RequestHandler):
    """A handler it is not."""


def test_a_route_table_names_what_it_does_not_know_and_refuses_only_that() -> None:
    app = Application([(r"/a", Known), (r"/b/(.*)", Unknown), (r"/(.*)", Known)])
    table = RouteTable.of(app, [handler_name(Known)])
    assert [route.handler.rsplit(".", 1)[1] for route in table.routes] == [
        "Known",
        "Unknown",
        "Known",
    ]
    assert [route.pattern for route in table.unknown] == ["/b/(.*)$"]
    # Tornado's order: the first pattern that matches the whole path.
    assert not table.refuses("/a") and table.refuses("/b/x") and not table.refuses("/bx")
    assert not table.refuses("/nothing/here")
    assert "/b/(.*)$" in (table.warning() or "")
    assert RouteTable.of(app, [handler_name(Known), handler_name(Unknown)]).warning() is None


def test_a_table_that_cannot_be_read_says_so_and_refuses_nothing() -> None:
    for application in (object(), SimpleNamespace(wildcard_router=SimpleNamespace(rules=None))):
        table = RouteTable.of(application)
        assert not table.readable and not table.refuses("/x")
        assert "could not read" in (table.warning() or "")


def test_every_known_handler_has_hostile_probes() -> None:
    assert set(ROUTE_BASES) == set(KNOWN_HANDLERS)


@pytest.mark.parametrize(
    ("path", "asked"),
    [
        ("/components/a/B/c/d.js", "a/B/c/d.js"),
        ("/components/%76env.__main__/a/b/c", "venv.__main__/a/b/c"),
        ("/components/a%2FB/c/d", "a/B/c/d"),
        ("/components/%C3%A4/B/c/d", "ä/B/c/d"),
        ("/components/%ff/B/c/d", None),
        ("/static/x", None),
    ],
)
def test_a_component_path_is_read_as_tornado_decodes_it_for_panel(
    path: str, asked: str | None
) -> None:
    assert component_file(path) == asked


def test_only_the_listed_files_pass_the_guard() -> None:
    allowed = "app.x/Y/_bundle_path/bundle.js"
    guard = RequestGuard(component_files=(allowed,))
    headers = SimpleNamespace(get_list=lambda name: ["localhost"] if name == "Host" else [])
    line = SimpleNamespace(method="GET", path="/components/app.x/Y/_bundle_path/bundle.js")
    assert guard.check(line, headers) is None
    assert component_allowed("/components/app%2ex/Y/_bundle_path/bundle.js", [allowed])
    for path in component_paths():
        line = SimpleNamespace(method="GET", path=path)
        assert guard.check(line, headers) is NOT_FOUND, path


@pytest.fixture
def probe_package(tmp_path: Path) -> Iterator[tuple[type, type, Path]]:
    """A throwaway package with a component that has a bundle (and its CSS), and a subclass
    that shares it."""
    package = tmp_path / "sdpa_probe_bundle"
    package.mkdir()
    (package / "probe.js").write_text("export function render() {}\n")
    (package / "probe.css").write_text(".probe {}\n")
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from panel.custom import JSComponent

            class Probe(JSComponent):
                _bundle = "probe.js"

            class ProbeChild(Probe):
                pass
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import sdpa_probe_bundle

        yield sdpa_probe_bundle.Probe, sdpa_probe_bundle.ProbeChild, package
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("sdpa_probe_bundle", None)


def test_a_bundle_is_named_as_panel_names_it(probe_package: tuple[type, type, Path]) -> None:
    probe, child, package = probe_package
    expected = component_resource_path(probe, "_bundle_path", package / "probe.js")
    files = bundle_files(child)
    assert files == bundle_files(probe)
    assert [f"components/{files[0]}"] == [expected]
    assert files[1] == "sdpa_probe_bundle/Probe/_bundle_css/probe.css"


def test_panels_own_handler_serves_an_allowed_bundle_and_nothing_else(
    probe_package: tuple[type, type, Path],
) -> None:
    probe, _child, _package = probe_package
    files = bundle_files(probe)

    async def scenario() -> dict[str, int]:
        port = free_port()
        app = Application([(r"/components/(.*)", ComponentResourceHandler, {})])
        guard = replace(RequestGuard.for_server("127.0.0.1"), component_files=tuple(files))
        server = GuardedHTTPServer(app, guard=guard)
        server.listen(port, "127.0.0.1")
        client = AsyncHTTPClient(force_instance=True)
        paths = [
            *(f"/components/{file}" for file in files),
            "/components/sdpa_probe_bundle/Probe/__javascript__/probe.js",
            "/components/venv.__main__/a/b/c",
        ]
        try:
            codes = {}
            for path in paths:
                answer = await client.fetch(f"http://127.0.0.1:{port}{path}", raise_error=False)
                codes[path] = answer.code
            return codes
        finally:
            client.close()
            server.stop()

    codes = run_async(scenario(), 60)
    assert list(codes.values()) == [200, 200, 404, 404], codes


def test_the_served_page_lists_its_components_and_their_bundles_only() -> None:
    names = {component.__name__ for component in app_components()}
    assert {"DrawnFigures", "DrawnControls", "DrawnLesson", "FirstScreen", "ClassBar"} <= names
    assert all(component.__module__.startswith("app.") for component in app_components())
    # One bundle and its stylesheet for them all, named by Panel after the class that
    # declares it.
    stylesheet, bundle = served_component_files()
    assert bundle.startswith("app.page.bundle/BundledComponent/_bundle_path/dist/served-")
    assert stylesheet == bundle.replace("_bundle_path", "_bundle_css").replace(".js", ".css")
    bundled = [one for one in app_components() if issubclass(one, BundledComponent)]
    assert len(bundled) >= 5
    assert all(bundle_files(one) == [bundle, stylesheet] for one in bundled)
