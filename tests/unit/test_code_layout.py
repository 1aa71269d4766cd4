"""The code's floors: every import in ``app/`` and ``sdpa_core/`` points down, and none runs in
a circle.

The floors, top to bottom (README, *Layout of the code*): ``app.main`` (the script ``panel
serve`` runs), ``app.server`` (processes, routes, the request guard), ``app.served`` (a
student's session and the page's components) beside ``app.export`` (the offline file),
``app.page`` (what both pages draw, built once per process), ``app.simulation`` (the state,
the URL and the recompute graph, no Panel or Bokeh), then ``sdpa_core`` (pure NumPy).
``app.compat`` (the few Panel/Bokeh internals) may be imported from every floor that uses
Panel or Bokeh. The imports are read from the source with :mod:`ast`, those under
``TYPE_CHECKING`` and inside functions included, so the test needs no import of the app.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FLOORS: dict[str, int] = {
    "sdpa_core": 0,
    "app.simulation": 1,
    "app.page": 2,
    "app.served": 3,
    "app.export": 3,
    "app.server": 4,
    "app.main": 5,
}
"""Each room's floor: a module may import its own room and the rooms on lower floors."""

SIDE_BY_SIDE = {("app.served", "app.export"), ("app.export", "app.served")}
"""Rooms on the same floor that must not import each other: the served page and the offline
file share only what lies below them."""

COMPAT = "app.compat"
COMPAT_USERS = ("app.page", "app.served", "app.export", "app.server", "app.main")
"""The rooms that may import :data:`COMPAT`: those that use Panel or Bokeh."""

WITHOUT_UI: dict[str, tuple[str, ...]] = {
    "sdpa_core": ("panel", "bokeh", "param", "tornado"),
    "app.simulation": ("panel", "bokeh", "tornado"),
}
"""The rooms that compute only, and the libraries each must not import: the core is NumPy
alone; the simulation's state and model are ``param.Parameterized`` but draw nothing."""


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, Path]:
    """Every module of ``app`` and ``sdpa_core``, by dotted name."""
    paths = sorted((ROOT / "app").rglob("*.py")) + sorted((ROOT / "sdpa_core").rglob("*.py"))
    return {module_name(path): path for path in paths}


def imported_names(path: Path, name: str) -> set[str]:
    """The absolute names the module at ``path`` imports (relative imports resolved), from
    every import statement in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def room_of(name: str) -> str | None:
    """The room (a key of :data:`FLOORS`, or :data:`COMPAT`) a module belongs to, or None for
    a module outside ``app`` and ``sdpa_core`` (and for the ``app`` package itself)."""
    for room in (COMPAT, *FLOORS):
        if name == room or name.startswith(room + "."):
            return room
    return None


def internal_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports (a ``from package import
    module`` counts as the module)."""
    modules = source_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in imported_names(path, name):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points up a floor, sideways into a forbidden room, or at
    :data:`COMPAT` from a room that may not use it, as ``"a -> b"``."""
    wrong = []
    for name, targets in graph.items():
        room = room_of(name)
        for target in targets:
            target_room = room_of(target)
            if room is None or target_room is None or target_room == room:
                continue
            if target_room == COMPAT:
                allowed = room in COMPAT_USERS
            elif room == COMPAT:
                allowed = FLOORS[target_room] <= FLOORS["app.simulation"]
            else:
                allowed = (
                    FLOORS[target_room] <= FLOORS[room] and (room, target_room) not in SIDE_BY_SIDE
                )
            if not allowed:
                wrong.append(f"{name} -> {target}")
    return sorted(wrong)


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles among the project's modules: each strongly connected group of more
    than one module (Tarjan's algorithm), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_module_belongs_to_a_room() -> None:
    """No module of ``app`` lies outside the rooms (the package's own ``__init__`` aside): a
    new module goes into the room whose job it does."""
    homeless = [name for name in source_modules() if name != "app" and room_of(name) is None]
    assert homeless == []


def test_every_import_points_down_the_floors() -> None:
    graph = internal_graph()
    assert sum(len(targets) for targets in graph.values()) > 100, "the walk found the imports"
    assert upward_imports(graph) == []


def test_no_import_circle() -> None:
    assert import_cycles(internal_graph()) == []


@pytest.mark.parametrize("room", sorted(WITHOUT_UI))
def test_the_computing_rooms_import_no_widget_library(room: str) -> None:
    """The core and the simulation compute only: Panel, Bokeh and Tornado stay above."""
    found = {
        f"{name} imports {imported}"
        for name, path in source_modules().items()
        if room_of(name) == room
        for imported in imported_names(path, name)
        if imported.split(".")[0] in WITHOUT_UI[room]
    }
    assert found == set()


def test_the_checks_catch_an_upward_import_and_a_circle() -> None:
    """The checks themselves, on a made-up graph: an upward arrow, a sideways one, compat
    used from the simulation, and a circle are all reported."""
    graph = {
        "app.simulation.state": {"app.page.controls", "app.compat"},
        "app.page.controls": {"app.simulation.state"},
        "app.served.session": {"app.export.page"},
        "app.export.page": set(),
    }
    assert upward_imports(graph) == [
        "app.served.session -> app.export.page",
        "app.simulation.state -> app.compat",
        "app.simulation.state -> app.page.controls",
    ]
    assert import_cycles(graph) == [["app.page.controls", "app.simulation.state"]]
