"""Browser fixtures: one real ``panel serve app/main.py`` for the session, Debian's Chromium
driven by Playwright, and a fresh page per test that fails the test on any page error.

Everything here waits on state (the Bokeh document's data, the URL, the DOM), never on time.
The only clock is Playwright's own timeout, which turns a hang into a failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from browser_support import (
    FIGURES_HELPER_JS,
    HEATMAP_DRAWN_JS,
    AppServer,
    start_server,
    stop_server,
)
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Response, expect
from procs_support import FrontServer, running_front, tracebacks

from app.served.components.first_screen import GATE_LABEL
from app.simulation.spec import D_K_GRID

PAGE_TIMEOUT_MS = 20_000
"""Playwright's per-action and per-wait limit: long enough for a loaded CI machine."""

SERVER_ERROR_MARKERS = ("Traceback (most recent call last)", "error handling message", "ERROR")
"""Text that only appears in the server log when the app or Bokeh raised."""

BENIGN_SERVER_ERRORS = ("WebSocketClosedError", "StreamClosedError")
"""Tornado logs these when a test closes its page while the server still writes to it."""

LOG_RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", re.MULTILINE)

WIDE = {"width": 1280, "height": 800}

FIRST_SCREEN_JS = HEATMAP_DRAWN_JS
"""True once the websocket session is idle and the first-screen component has drawn a
frame of data and its heatmap is painted."""

LESSON_JS = """() => {
  const doc = Bokeh.documents[0];
  const lesson = sdpaFigure('row_comparison');
  return doc.is_idle && lesson != null && Bokeh.index.find_one(lesson) != null;
}"""
"""True once the lesson below the plots is on the page and the session is idle."""

SECTION_OPEN_JS = """(name) => {
  const doc = Bokeh.documents[0];
  const lesson = [...doc.all_models].find((m) => m.data && Array.isArray(m.data.opened));
  if (!doc.is_idle || !lesson || !lesson.data.opened.includes(name)) return false;
  // The section's markup is on the page from the start: it is ready once its session
  // has sent it its state.
  return window.SdpaDrawnLessons.some((record) => record[name] && record[name].ready);
}"""
"""True once the lazy lesson section ``name`` is open, its session has sent the page its
state and the session is idle."""

HEATMAP_JS = """(column) => {
  const {figure, shown, data, column: drawn, title} = sdpaHeatmap();
  const image = data[column || 'shown'][0];
  const [rows, cols] = image.shape;
  const rowSums = [];
  let nanUpper = 0, nanLowerOrDiagonal = 0, finite = 0, max = -Infinity, sumSquares = 0;
  for (let i = 0; i < rows; i++) {
    let sum = 0;
    for (let j = 0; j < cols; j++) {
      const value = image[i * cols + j];
      if (Number.isNaN(value)) {
        if (j > i) nanUpper++; else nanLowerOrDiagonal++;
      } else {
        sum += value;
        sumSquares += value * value;
        max = Math.max(max, value);
        finite++;
      }
    }
    rowSums.push(sum);
  }
  const mapper = shown.glyph.color_mapper;
  return {
    field: drawn, glyphField: shown.glyph.image.field,
    rows, cols, rowSums, nanUpper, nanLowerOrDiagonal, finite, max, sumSquares,
    columns: Object.keys(data).sort(),
    float32: image instanceof Float32Array,
    shapes: ['raw', 'scaled', 'weight'].map((name) => Array.from(data[name][0].shape)),
    dw: data.dw[0], dh: data.dh[0],
    xRange: [figure.x_range.start, figure.x_range.end],
    yRange: [figure.y_range.start, figure.y_range.end],
    title,
    mapperLow: mapper.low, mapperHigh: mapper.high,
    paletteFirst: mapper.palette[0], paletteLength: mapper.palette.length,
  };
}"""
"""A summary of the heatmap: the view's column its one image glyph draws (``field``: the
glyph draws column ``shown``, which holds that column's image; ``glyphField``) and, for the
column asked for (default: the one drawn), its shape, row sums, extremes and NaN (masked)
cells."""

HISTOGRAM_JS = """(name) => {
  const figure = sdpaFigure(name);
  const bars = figure.renderers.find((r) => r.glyph.type === 'Quad').data_source.data;
  const curve = figure.renderers.find((r) => r.glyph.type === 'Line').data_source.data;
  let mass = 0, mean = 0;
  for (let i = 0; i < bars.top.length; i++) {
    const weight = bars.top[i] * (bars.right[i] - bars.left[i]);
    mass += weight;
    mean += weight * (bars.left[i] + bars.right[i]) / 2;
  }
  mean /= mass;
  let variance = 0;
  for (let i = 0; i < bars.top.length; i++) {
    const weight = bars.top[i] * (bars.right[i] - bars.left[i]);
    const centre = (bars.left[i] + bars.right[i]) / 2;
    variance += weight * (centre - mean) ** 2;
  }
  return {
    bins: bars.top.length, mass, mean, std: Math.sqrt(variance / mass),
    curvePeak: Math.max(...curve.y), curvePoints: curve.x.length,
    title: figure.title.text,
    left: bars.left[0], right: bars.right[bars.right.length - 1],
  };
}"""
"""The std of the histogram as drawn (bin centres weighted by their mass) and its curve."""

PAINTED_JS = """(name) => {
  const view = Bokeh.index.find_one(sdpaFigure(name));
  const canvas = view.canvas_view.compose().canvas;
  const frame = view.frame.bbox;
  const ratio = view.canvas_view.pixel_ratio;
  const x = Math.floor((frame.x + frame.width / 2) * ratio);
  const y = Math.floor((frame.y + frame.height / 2) * ratio);
  return Array.from(canvas.getContext('2d').getImageData(x, y, 1, 1).data);
}"""
"""The RGBA pixel at the centre of a figure's plotting frame, from its composed canvas."""

MARK_JS = """(column) => {
  const {data} = sdpaHeatmap();
  const log = sdpaFrames();
  window.__sdpaMarked = window.__sdpaMarked || {};
  const image = data[column][0];
  window.__sdpaMarked[column] = {
    values: Float32Array.from(image), shape: Array.from(image.shape), since: log.frames.length,
  };
}"""
"""Copy the heatmap source's ``column`` as it is now, and note how many frames the session
had sent the component (the log starts at the first mark)."""

SAME_JS = """(column) => {
  const marked = window.__sdpaMarked[column];
  const image = sdpaHeatmap().data[column][0];
  const shape = Array.from(image.shape);
  if (shape.join() !== marked.shape.join() || image.length !== marked.values.length) return false;
  for (let i = 0; i < image.length; i++) {
    if (!Object.is(image[i], marked.values[i])) return false;
  }
  return true;
}"""

CHANGED_JS = f"(column) => !({SAME_JS})(column)"

NOT_RESENT_JS = f"""(column) => {{
  const log = sdpaFrames();
  const part = column === 'weight' ? log.parts.weights : log.parts.scores;
  const since = log.frames.slice(window.__sdpaMarked[column].since);
  return ({SAME_JS})(column) && !since.some((frame) => frame.parts.includes(part));
}}"""
"""True while the heatmap still draws the ``column`` :meth:`AppPage.mark` copied and no
frame since has carried the part it comes from (``scores`` for raw and scaled)."""

HISTOGRAMS_AT_JS = """(d_k) => ['raw_histogram', 'scaled_histogram'].every((name) =>
  sdpaFigure(name).title.text.includes(`d_k = ${d_k}:`))"""

URL_HAS_JS = """(expected) => {
  const query = new URLSearchParams(window.location.search);
  return Object.entries(expected).every(([name, value]) => query.get(name) === value);
}"""


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """One ``panel serve app/main.py`` for the whole session, started from the repo root."""
    log_path = tmp_path_factory.mktemp("panel-serve") / "server.log"
    try:
        server = start_server(log_path)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    stop_server(server)


@dataclass
class AppPage:
    """A Playwright page on the served app, with the problems it ran into.

    ``problems`` collects uncaught page errors, console errors and JavaScript dialogs (an
    ``alert`` would mean injected markup ran); the ``pytest_runtest_call`` hook below fails
    the test when any were seen, or when the server logged an error meanwhile.
    """

    page: Page
    server: AppServer
    problems: list[str] = field(default_factory=list)
    log_mark: int = 0

    def open(self, query: str = "", *, lesson: bool = True) -> Response:
        """Load the app with ``query`` (``"?d_k=4&…"``) and wait until it is drawn; with
        ``lesson``, open the lesson below the plots too (its button) and wait for it."""
        response = self.page.goto(self.server.url + query)
        assert response is not None, "navigation produced no response"
        assert response.status == 200, f"HTTP {response.status} for {query!r}"
        self.wait_ready()
        if lesson:
            self.open_lesson()
        return response

    def wait_ready(self) -> None:
        """Wait until the session is idle and the heatmap has data and is drawn."""
        self.page.wait_for_function(FIRST_SCREEN_JS)

    def open_more(self) -> None:
        """Press "More controls" if it is closed (a narrow or embedded page) and wait until
        its controls are on the page."""
        button = self.page.get_by_role("button", name="More controls")
        if button.get_attribute("aria-expanded") != "true":
            button.click()
        self.page.get_by_text("preset scene", exact=True).first.wait_for()

    def open_lesson(self) -> None:
        """Press the button under the readouts that opens the lesson; wait until it is in.

        The click is dispatched to the button without scrolling to it, so a test starts from
        the top of the page as a student does (test_lesson.py presses it for real)."""
        self.page.get_by_role("button", name=GATE_LABEL).dispatch_event("click")
        self.page.wait_for_function(LESSON_JS)

    def open_section(self, title: str) -> None:
        """Press the button of the lesson section ``title`` (app/served/sections.py) and wait until
        the section has arrived and the session is idle again."""
        button = self.page.get_by_role("button", name=title)
        button.click()
        expect(button).to_have_attribute("aria-expanded", "true")
        self.page.wait_for_function(SECTION_OPEN_JS, arg=button.get_attribute("data-lazy"))

    def heatmap(self, column: str | None = None) -> dict[str, Any]:
        """What the heatmap shows now, summarising ``column`` (default: the one drawn)."""
        return self.page.evaluate(HEATMAP_JS, column)

    def histogram(self, name: str) -> dict[str, Any]:
        """What the histogram figure ``name`` shows now (see ``HISTOGRAM_JS``)."""
        return self.page.evaluate(HISTOGRAM_JS, name)

    def centre_pixel(self, name: str) -> list[int]:
        """The RGBA colour painted at the centre of figure ``name``'s plotting frame."""
        return self.page.evaluate(PAINTED_JS, name)

    def readout(self, test_id: str) -> str:
        """The number a readout tile shows (the whole sentence for ``verdict``)."""
        tile = self.page.get_by_test_id(test_id)
        target = tile if test_id == "verdict" else tile.locator(".value")
        return target.inner_text().strip()

    def mark(self, column: str) -> None:
        """Remember the heatmap source's current ``column`` image, to wait for a new one."""
        self.page.evaluate(MARK_JS, column)

    def wait_changed(self, column: str) -> None:
        """Wait until the heatmap draws another ``column`` image than :meth:`mark` saw."""
        self.page.wait_for_function(CHANGED_JS, arg=column)

    def wait_histograms(self, d_k: int) -> None:
        """Wait until both histograms have been redrawn for ``d_k`` (their titles name it)."""
        # Polled on a timer, not on animation frames: the figures draw their histograms a
        # frame after the heatmap, and a poll on every frame can keep delaying it.
        self.page.wait_for_function(HISTOGRAMS_AT_JS, arg=d_k, polling=100)

    def is_marked(self, column: str) -> bool:
        """Whether the heatmap still holds the ``column`` image :meth:`mark` saw and no
        frame since has resent it."""
        return self.page.evaluate(NOT_RESENT_JS, column)

    def wait_url(self, **expected: str) -> None:
        """Wait until the page's own URL query holds every ``name=value`` given."""
        self.page.wait_for_function(URL_HAS_JS, arg=expected)

    def press(self, slider: str, key: str) -> None:
        """Focus the slider whose accessible name is ``slider`` and press ``key`` on it."""
        handle = self.page.get_by_role("slider", name=slider, exact=True)
        handle.focus()
        handle.press(key)

    def step_d_k(self, presses: int = 1, start: int = 64) -> int:
        """Press ArrowRight on the d_k slider ``presses`` times from ``start``; wait until
        the heatmap's weights, both histograms and the URL show the new d_k; return it."""
        self.mark("weight")
        for _ in range(presses):
            self.press("d_k (key dimension)", "ArrowRight")
        d_k = D_K_GRID[D_K_GRID.index(start) + presses]
        self.wait_changed("weight")
        self.wait_histograms(d_k)
        self.wait_url(d_k=str(d_k))
        return d_k

    def server_errors(self) -> str:
        """Server log records written since this page was created that report an error.

        Records about writing to a closed websocket are left out: closing a test's page
        while an update is in flight causes them, and they can land in the next test's log.
        """
        text = self.server.log_text(self.log_mark)
        starts = sorted({0, *(match.start() for match in LOG_RECORD_START.finditer(text))})
        records = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
        return "".join(
            record
            for record in records
            if any(marker in record for marker in SERVER_ERROR_MARKERS)
            and not any(benign in record for benign in BENIGN_SERVER_ERRORS)
        )


@pytest.fixture
def app_page(app_server: AppServer, chromium: Browser) -> Iterator[AppPage]:
    """A fresh 1280×800 light-scheme page (own context: no shared storage) on the app.

    Not yet navigated: call ``app_page.open(query)``. Page errors, console errors and
    dialogs are recorded and fail the test.
    """
    context = chromium.new_context(viewport=WIDE, color_scheme="light")
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.add_init_script(FIGURES_HELPER_JS)
    page = context.new_page()
    app = AppPage(page=page, server=app_server, log_mark=app_server.log_size())

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            app.problems.append(f"console error: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        app.problems.append(f"{dialog.type} dialog: {dialog.message}")
        dialog.dismiss()

    page.on("pageerror", lambda error: app.problems.append(f"page error: {error}"))
    page.on("console", on_console)
    page.on("dialog", on_dialog)
    yield app
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail a test that passed its assertions if its page or the server reported an error."""
    result = yield
    app = getattr(item, "funcargs", {}).get("app_page")
    if isinstance(app, AppPage):
        problems = list(app.problems)
        if errors := app.server_errors():
            problems.append(f"server log:\n{errors}")
        if problems:
            raise AssertionError("the page or the server reported errors:\n" + "\n".join(problems))
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """On a failed browser test, attach the page's problems and the server log's tail."""
    report = yield
    if report.failed and call.when in {"setup", "call"}:
        funcargs = getattr(item, "funcargs", {})
        app = funcargs.get("app_page")
        if isinstance(app, AppPage) and app.problems:
            report.sections.append(("page problems", "\n".join(app.problems)))
        server = funcargs.get("app_server")
        if isinstance(server, AppServer):
            tail = server.log_text()[-4000:]
            report.sections.append(("panel serve log (last 4000 characters)", tail))
    return report


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontServer]:
    """``sdpa-sim`` in one process, as the README starts it: the request guard in front of
    the page (one per test module)."""
    log_path = tmp_path_factory.mktemp("guarded-browser") / "sdpa-sim.log"
    with running_front(log_path, 1) as server:
        yield server
    assert not tracebacks(log_path.read_text()), tracebacks(log_path.read_text())


DRAWN_JS = """() => {
  const doc = window.Bokeh && Bokeh.documents && Bokeh.documents[0];
  const record = window.SdpaDrawnFigures && window.SdpaDrawnFigures[0];
  return Boolean(doc && doc.is_idle && record && record.frames > 0);
}"""
"""True once the page's websocket session has its document and is idle and its first
screen has drawn a frame (this page has no init script: nothing but the app's globals)."""
