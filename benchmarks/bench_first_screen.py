"""What an arriving student's first screen costs the server: Bokeh models, build, serialise.

Run it from the repository root, in the test environment (Panel is needed, no server)::

    python benchmarks/bench_first_screen.py              # about a minute on two cores
    python benchmarks/bench_first_screen.py --repeats 9  # quicker, noisier

For the embedded page and the full page it builds a session as a served one does (its
lesson waits for the student to reach the gate), lets Panel make its Bokeh models into a
fresh ``Document`` (``get_root``, what the page's GET runs), and serialises that document
(what the websocket's PULL-DOC costs), with the process-wide settings and caches a served
app applies (app/server/panel_tuning.py). Each figure is the median of ``--repeats`` builds after
warm-up builds; the pages are interleaved so that drift hits them alike.

This is the yardstick for issue 24's arrival target (≤ 25 ms of server CPU per arriving first
screen, ≤ 30 Bokeh models), and for what class mode adds to a student's page. The output is a
markdown table for docs/performance.md, preceded by the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass, field

import panel as pn
from bokeh.document import Document
from panel.io.state import set_curdoc

import app.served.session
from app.served.classroom import Classroom, Scene
from app.served.session import Session
from app.server.panel_tuning import tune_process

CLASS_KEY = "bench-presenter-key"


class _Presenter:
    """A presenter's seat that only listens: what makes a class presented."""

    def class_changed(self) -> None:
        """Nothing to show."""

    def take_scene(self, scene: Scene) -> None:
        """A presenter takes no scene."""


def _presented_class() -> Classroom:
    room = Classroom(CLASS_KEY)
    room.join(_Presenter(), presenter=True)
    return room


PAGES = {
    "embedded (`?embed=true`)": (True, lambda: Classroom("")),
    "full page": (False, lambda: Classroom("")),
    "full page, class mode, nobody presenting": (False, lambda: Classroom(CLASS_KEY)),
    "full page, a student in a presented class": (False, _presented_class),
}
"""What is measured, by its row's name: whether the page is the embedded one, and the
classroom its session joins (class mode off; on with nobody presenting; presented, so the
student's page has its class bar)."""


@dataclass
class Timings:
    """One page's measurements, one entry per build."""

    models: list[int] = field(default_factory=list)
    session_ms: list[float] = field(default_factory=list)
    root_ms: list[float] = field(default_factory=list)
    serialise_ms: list[float] = field(default_factory=list)


def measure_once(embed: bool, classroom: Classroom, into: Timings) -> None:
    """Build one served session's page into a fresh document, then serialise it. A class
    seat joins as the page's load would have it join (no page loads here), and leaves."""
    document = Document()
    with set_curdoc(document):
        start = time.perf_counter()
        session = Session(embed=embed, classroom=classroom)
        if session.seat is not None:
            session.seat.start()
        built = time.perf_counter()
        document.add_root(session.page.get_root(document))
        rooted = time.perf_counter()
        document.to_json()
        done = time.perf_counter()
    if session.lesson is not None:
        raise RuntimeError("the first screen was built with its lesson: not as served")
    if session.seat is not None:
        session.seat.leave()
    into.models.append(len(document.models))
    into.session_ms.append((built - start) * 1000)
    into.root_ms.append((rooted - built) * 1000)
    into.serialise_ms.append((done - rooted) * 1000)


def run(repeats: int) -> dict[str, Timings]:
    """Every page's timings: three warm-up builds each, then ``repeats`` rounds, interleaved."""
    results = {name: Timings() for name in PAGES}
    classrooms = {name: make() for name, (_embed, make) in PAGES.items()}
    for name, (embed, _make) in PAGES.items():
        for _ in range(3):
            measure_once(embed, classrooms[name], Timings())
    for _ in range(repeats):
        for name, (embed, _make) in PAGES.items():
            measure_once(embed, classrooms[name], results[name])
    return results


def table(results: dict[str, Timings]) -> str:
    """The medians as a markdown table."""
    lines = [
        "| page | Bokeh models | session (ms) | get_root (ms) | serialise (ms) | total (ms) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t in results.items():
        total = statistics.median(
            a + b + c for a, b, c in zip(t.session_ms, t.root_ms, t.serialise_ms, strict=True)
        )
        lines.append(
            f"| {name} | {statistics.median(t.models):.0f} | "
            f"{statistics.median(t.session_ms):.1f} | {statistics.median(t.root_ms):.1f} | "
            f"{statistics.median(t.serialise_ms):.1f} | {total:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, measure, print the machine and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31, help="timed builds per page (31)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    pn.extension(apply_signatures=False)
    tune_process()
    # Built as a served session builds it: the lesson waits for the gate, and nothing
    # waits for the page to load (no page loads here).
    app.served.session.served = lambda: True
    pn.state.onload = lambda callback, threaded=False: None
    results = run(args.repeats)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{platform.python_version()}, panel {pn.__version__}, {os.cpu_count()} cores")
    print(f"load average {load}; medians of {args.repeats} builds after warm-ups\n")
    print(table(results))


if __name__ == "__main__":
    main()
