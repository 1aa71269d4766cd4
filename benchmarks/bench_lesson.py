"""What the served lesson costs one session to build: Bokeh models, build and serialise time.

Run it from the repository root, in the test environment (Panel is needed, no server)::

    python benchmarks/bench_lesson.py              # about a minute on two cores
    python benchmarks/bench_lesson.py --repeats 3  # quicker, noisier

For each section of the lesson a served session builds (app/served/sections.py: the FAQ with the
collapse curves, the row comparison with the output, and the worked example with the quiz,
drawn in the browser, each here a component of its own), for the whole lesson as the page
appends it (one component for all the drawn sections, with the lazy sections' buttons), and
for the whole lesson with one of the two sections opened apart (training, assumptions: their
session side built and their state on the component), it builds
the views over one session's model, attaches their page to a Bokeh ``Document`` as a
session does, and serialises that document (what the browser's pull of it costs the
server). Each figure is the median of ``--repeats`` builds after one warm-up
build, so the process-wide caches (the collapse curves, the training grid) are warm, as in
a server that has served a student before. The sections are interleaved so that drift hits
them alike.

This is the yardstick for issue 24's lesson target (≤ 25 ms of server CPU per lesson):
each section drawn in the browser instead should leave this table.

The output is a markdown table for docs/performance.md, preceded by the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import panel as pn
from bokeh.document import Document

from app.served.components.lesson import DrawnLesson
from app.served.sections import LessonSections
from app.simulation.model import SimulationModel
from app.simulation.state import SimulationState


def whole_lesson(model: SimulationModel) -> pn.viewable.Viewable:
    """The lesson as a session appends it: one component, the lazy sections still closed."""
    return LessonSections(model).drawn


def lesson_with_training(model: SimulationModel) -> pn.viewable.Viewable:
    """The lesson with the training section opened: its session built, its figures (built
    once per process) and its state on the component's properties."""
    lesson = LessonSections(model)
    lesson.open(lesson.training)
    return lesson.drawn


def lesson_with_assumptions(model: SimulationModel) -> pn.viewable.Viewable:
    """The lesson with the assumptions section opened: its session built (its controls
    bound, its readouts written), the histograms' numbers in the lesson's frame."""
    lesson = LessonSections(model)
    lesson.open(lesson.assumptions)
    return lesson.drawn


SECTIONS: dict[str, Callable[[SimulationModel], pn.viewable.Viewable]] = {
    "row comparison + output (drawn)": lambda model: DrawnLesson(model, ("why",)),
    "FAQ + collapse curves (drawn)": lambda model: DrawnLesson(model, ("faq", "collapse")),
    "worked example + quiz (drawn)": lambda model: DrawnLesson(model, ("worked", "quiz")),
    "whole lesson, training opened (drawn)": lesson_with_training,
    "whole lesson, assumptions opened (drawn)": lesson_with_assumptions,
    "whole lesson (closed sections)": whole_lesson,
}
"""What is measured, by its row's name: each builds one section's page over a model."""


@dataclass
class Timings:
    """One section's measurements, one entry per build."""

    models: list[int] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)
    serialise_ms: list[float] = field(default_factory=list)


def measure_once(build: Callable[[SimulationModel], pn.viewable.Viewable], into: Timings) -> None:
    """Build one section over a fresh session's model, attach it to a document, serialise."""
    model = SimulationModel(SimulationState())
    start = time.perf_counter()
    page = build(model)
    document = Document()
    document.add_root(page.get_root(document))
    built = time.perf_counter()
    document.to_json()
    done = time.perf_counter()
    into.models.append(len(document.models))
    into.build_ms.append((built - start) * 1000)
    into.serialise_ms.append((done - built) * 1000)


def run(repeats: int) -> dict[str, Timings]:
    """Every section's timings: a warm-up build each, then ``repeats`` rounds, interleaved."""
    results = {name: Timings() for name in SECTIONS}
    for build in SECTIONS.values():
        measure_once(build, Timings())
    for _ in range(repeats):
        for name, build in SECTIONS.items():
            measure_once(build, results[name])
    return results


def table(results: dict[str, Timings]) -> str:
    """The medians as a markdown table."""
    lines = [
        "| section | Bokeh models | build + attach (ms) | serialise (ms) | total (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, timings in results.items():
        build = statistics.median(timings.build_ms)
        serialise = statistics.median(timings.serialise_ms)
        total = statistics.median(
            b + s for b, s in zip(timings.build_ms, timings.serialise_ms, strict=True)
        )
        models = statistics.median(timings.models)
        lines.append(f"| {name} | {models:.0f} | {build:.1f} | {serialise:.1f} | {total:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, measure, print the machine and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed builds per section (9)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    pn.extension(apply_signatures=False)
    results = run(args.repeats)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{platform.python_version()}, panel {pn.__version__}, {os.cpu_count()} cores")
    print(f"load average {load}; medians of {args.repeats} builds after a warm-up\n")
    print(table(results))


if __name__ == "__main__":
    main()
