"""The served assumptions section as the browser draws it: its markup, its controls' spec and
its histogram, built once per process, and one session's side of it.

The section is the offline page's (app/page/assumptions.py: the same words, groups and
histogram); the lesson's component (app/page/assets/drawn_lesson.js) draws it. Its controls are
drawn by control_drawing.js, as the first screen's are, and bound to the session's state by
a :class:`app.served.components.controls.ControlBinding`; its histogram is drawn by figures.js's
``drawHistogram`` from the ``histograms`` numbers the lesson's frames carry once the section
is open; its readouts are HTML the session writes from numbers; a "Download CSV" press
sends the session a message and the file comes back to be saved by the page.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import panel as pn

from app.page.assumptions import HISTOGRAM_NAME, section_css, section_histogram
from app.page.controls import CSS as CONTROLS_CSS
from app.page.controls import control_spec
from app.page.figures import HISTOGRAM_HEADROOM
from app.page.lesson import markdown_html
from app.page.views.assumptions import (
    HEADING,
    LAW_CONTROLS,
    LAW_TEXT,
    PRECISION_CONTROLS,
    PRECISION_TEXT,
    READOUT_GROUPS,
    assumptions_html,
)
from app.page.views.histogram import HISTOGRAM_TEXTS
from app.page.views.readouts import READOUT_CSS
from app.served.components.controls import ControlBinding
from app.served.components.figures import embeddable_item
from app.served.location import served
from app.served.ticks import Later, next_tick, run_now
from app.served.work_queue import WorkGate
from app.simulation.csv_files import CSV_FILES, HISTOGRAM_LABEL, MATRIX_LABEL, csv_file
from app.simulation.model import HISTOGRAMS, WEIGHTS, SimulationModel
from app.simulation.spec import ASSUMPTION_CONTROLS, CONTROL_BY_NAME
from app.simulation.state import SimulationState

log = logging.getLogger(__name__)

ASSUMPTIONS_CELL = '<div class="sdpa-assumptions-cell"></div>'
"""The empty cell the page embeds the section's histogram in."""

DOWNLOADS = (("matrix", MATRIX_LABEL), ("histogram", HISTOGRAM_LABEL))
"""The section's download buttons: the file each asks for and its words."""

DOWNLOAD_CSS = """
.sdpa-drawn-assumptions .sdpa-downloads { display: flex; flex-wrap: wrap; gap: 8px;
  margin: 6px 0; }
.sdpa-drawn-assumptions .sdpa-downloads button { flex: 1 1 240px; font: inherit;
  font-size: 13px; font-weight: 500; padding: 6px 10px; border-radius: 4px; cursor: pointer;
  color: var(--sdpa-accent-text, #1565c0); background: transparent;
  border: 1px solid var(--sdpa-accent-text, #1565c0); }
.sdpa-drawn-assumptions .sdpa-downloads button:hover {
  background: var(--sdpa-accent-hover, #e3f2fd); }
.sdpa-drawn-assumptions .sdpa-downloads button:focus-visible {
  outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px; }
.sdpa-drawn-assumptions .sdpa-downloads button[aria-busy="true"] { cursor: progress; }
.sdpa-drawn-assumptions { margin: 0 10px; }
"""
"""The download buttons in the look of the page's outlined buttons, in the theme's colours."""


def section_stylesheets() -> tuple[str, ...]:
    """The section's groups (the offline page's rules: controls beside what they change),
    its controls (the first screen's look), its readouts and its download buttons, for the
    lesson's component (each piece as the other components name it, so the served
    stylesheet holds it once)."""
    return (READOUT_CSS, section_css(), CONTROLS_CSS, DOWNLOAD_CSS)


@functools.cache
def assumptions_markup() -> str:
    """The section's markup, built once per process: the two parts of its explanation, each
    followed by the box its controls are drawn in beside what they change (the histogram's
    cell and the law's readouts; the softmax's readouts), and the download buttons."""
    downloads = "".join(
        f'<button type="button" data-download="{which}">{label}</button>'
        for which, label in DOWNLOADS
    )
    law_intro = markdown_html(f"{HEADING}\n\n{LAW_TEXT}")
    return (
        '<div class="assumptions sdpa-drawn-assumptions" data-testid="assumptions">'
        f"{law_intro}"
        '<div class="sdpa-assumption-group" data-testid="assumptions-law">'
        '<div class="sdpa-controls" data-controls="law"></div>'
        f'<div class="sdpa-assumption-effect">{ASSUMPTIONS_CELL}'
        '<div data-readouts="law"></div></div></div>'
        f"{markdown_html(PRECISION_TEXT)}"
        '<div class="sdpa-assumption-group" data-testid="assumptions-precision">'
        '<div class="sdpa-controls" data-controls="precision"></div>'
        '<div class="sdpa-assumption-effect" data-readouts="precision"></div></div>'
        f'<div class="sdpa-downloads">{downloads}</div>'
        "</div>"
    )


@functools.cache
def assumptions_config() -> dict:
    """What the page draws the section from, built once per process: each group's
    controls (drawn_controls.control_spec), the histogram's Bokeh JSON item and the ids of
    its models by the names figures.js draws into, its headroom and title templates, and
    the name of the frames' part it draws."""
    _, models = section_histogram(SimulationModel(SimulationState()))
    figure = models[HISTOGRAM_NAME]
    return {
        "controls": {
            "law": [control_spec(CONTROL_BY_NAME[name]) for name in LAW_CONTROLS],
            "precision": [control_spec(CONTROL_BY_NAME[name]) for name in PRECISION_CONTROLS],
        },
        "histogram": {
            "item": embeddable_item(figure),
            "models": {name: model.id for name, model in models.items()},
            "which": HISTOGRAM_NAME.removesuffix("_histogram"),
            "headroom": HISTOGRAM_HEADROOM,
            "texts": HISTOGRAM_TEXTS,
        },
        "part": HISTOGRAMS,
    }


SendAssumptions = Callable[[dict[str, Any]], None]
"""Sends the page what changed in the section: some of ``controls`` (the controls' values
the page does not show, by name), ``readouts`` (each changed group's HTML, by group) and
``download`` (a file asked for: ``{"which", "name", "text"}``)."""


class AssumptionsSession:
    """One session's "When the assumptions break": its controls bound to the state, its
    readouts written from the model's numbers, and the CSV files written when asked for.
    The page draws it all (app/page/assets/drawn_lesson.js); the histogram's numbers travel in
    the lesson's frames.

    ``post`` defaults to the session's next tick when served, else at once; ``in_thread``
    (default: when served) writes a file through ``work``, the session's
    :class:`app.served.work_queue.WorkGate` (one of the section's own unless given), and
    posts it back, else at once.
    """

    def __init__(
        self,
        model: SimulationModel,
        send: SendAssumptions,
        *,
        post: Later | None = None,
        in_thread: bool | None = None,
        work: WorkGate | None = None,
    ) -> None:
        is_served = served()
        doc = pn.state.curdoc if is_served else None
        self._model = model
        self._send = send
        self._post = post or (next_tick(doc) if doc is not None else run_now)
        self._in_thread = is_served if in_thread is None else in_thread
        self._work = work or WorkGate(post=self._post)
        self.binding = ControlBinding(
            model.state, ASSUMPTION_CONTROLS, self._answer, owner="DrawnLesson"
        )
        """The section's controls, bound to the state."""
        self.readouts = {group: assumptions_html(model, group) for group in READOUT_GROUPS}
        """Each group's readouts as the page was last sent them, by group."""
        self.downloads = 0
        """Files sent to the page (for tests)."""
        self._send({"controls": self.binding.values, "readouts": dict(self.readouts)})

    def _answer(self, values: dict[str, dict[str, object]], differ: dict[str, dict]) -> None:
        if differ:
            self._send({"controls": differ})

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Send the readouts of the groups whose numbers moved (the weights' or the
        histograms')."""
        if not parts & {WEIGHTS, HISTOGRAMS}:
            return
        readouts = {group: assumptions_html(model, group) for group in READOUT_GROUPS}
        changed = {group: text for group, text in readouts.items() if self.readouts[group] != text}
        self.readouts = readouts
        if changed:
            self._send({"readouts": changed})

    def take(self, msg: Any) -> None:
        """Handle a message from the page: ``{"control": move}`` (a move of one of the
        section's controls: :meth:`ControlBinding.take`) or ``{"download": which}`` (a
        press on a download button). Anything else is refused in one log line."""
        if isinstance(msg, dict) and "control" in msg and len(msg) == 1:
            self.binding.take(msg["control"])
        elif isinstance(msg, dict) and msg.get("download") in CSV_FILES and len(msg) == 1:
            self.download(msg["download"])
        else:
            log.warning("sdpa-sim: refused a message from a page to the assumptions section")

    def download(self, which: str) -> bool:
        """Write the file ``which`` from the model as it is now and send it to the page
        (served: through the session's work gate, in a thread, the matrix takes 1.4 s at
        n = 1024). False when merged: the same file of the same numbers is on its way, and
        goes to the page once."""
        name, write = csv_file(self._model, which)

        def send(text: str) -> None:
            self.downloads += 1
            self._send({"download": {"which": which, "name": name, "text": text}})

        if not self._in_thread:
            send(write())
            return True
        # One waiting file of each kind: a press on the other button is not lost, and the
        # file's name says which numbers it holds (a press after a move is a new file).
        return self._work.submit(f"download {which}", name, write, send)
