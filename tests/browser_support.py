"""Debian's Chromium and a served app on loopback: shared by the browser tests and benchmarks.

The tests import it as a top-level module (pytest puts ``tests/`` on the path); the
benchmark scripts add ``tests/`` to the path themselves.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import app.served.channel as channel_module
import app.served.page_data as page_data
from app.served.channel import ENABLED_ENV as CHANNEL_ENV
from app.served.page_data import ENABLED_ENV as PAGE_DATA_ENV

REPO = Path(__file__).resolve().parents[1]

CHROMIUM = Path(os.environ.get("SDPA_CHROMIUM", "/usr/bin/chromium"))
"""Debian's Chromium: ``playwright install`` cannot download a browser on these machines."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Headless, as root, and quiet on a machine whose only network is loopback."""

FIGURES_HELPER_JS = """(() => {
  const drawn = () => {
    const record = window.SdpaDrawnFigures && window.SdpaDrawnFigures[0];
    return record && record.models ? record : null;
  };
  window.sdpaDrawn = drawn;
  window.sdpaDocuments = () => {
    const documents = [...((window.Bokeh && Bokeh.documents) || [])];
    for (const view of (window.Bokeh && Bokeh.index) || []) {
      const doc = view.model.document;
      if (doc && !documents.includes(doc)) documents.push(doc);
    }
    return documents;
  };
  window.sdpaFigure = (name) => {
    const record = drawn();
    if (record && name in record.models) return record.models[name];
    for (const doc of sdpaDocuments()) {
      const model = doc.get_model_by_name(name);
      if (model) return model;
    }
    return null;
  };
  window.sdpaComponent = () => [...Bokeh.documents[0].all_models].find((model) =>
    model.data != null && typeof model.data.property === 'function'
    && 'shared' in model.data.properties && 'frame' in model.data.properties
    && !('opened' in model.data.properties));
  const same = (a, b) => a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
  window.sdpaHeatmap = () => {
    const figure = sdpaFigure('heatmap');
    const shown = figure.renderers.find((renderer) => renderer.name === 'heatmap_image');
    const data = shown.data_source.data;
    const title = sdpaFigure('heatmap_title').text;
    // The view's column: the one whose image the glyph's "shown" column holds. BokehJS
    // keeps copies, so compare the numbers; where two views' images are equal (raw and
    // scaled at d_k = 1), the view the title names first.
    const {titles, columns} = window.SdpaDrawnFigures[0].config.heatmap;
    const named = Object.keys(titles).filter((view) => titles[view] === title);
    const order = [...named.map((view) => columns[view]), ...Object.values(columns)];
    const column = data.shown
      ? order.find((name) => data[name] && same(data[name][0], data.shown[0])) || null
      : null;
    return {figure, shown, data, column, title};
  };
  window.sdpaFrames = () => {
    if (window.__sdpaFrames) return window.__sdpaFrames;
    const log = {parts: window.SdpaDrawnFigures[0].config.parts, frames: []};
    // Every frame the component receives, on the frame property or the session's channel.
    window.SdpaDrawnFigures[0].listeners.push((frame) => {
      log.frames.push({sequence: frame.sequence, parts: [...frame.parts]});
    });
    window.__sdpaFrames = log;
    return log;
  };
})();"""
"""Installed in every browser test's page: where the served figures are.

``sdpaFigure(name)`` is the DrawnFigures component's model of that name
(``window.SdpaDrawnFigures[0].models``: app/page/web/served/figures_component.js), else the
model of that name in any Bokeh document on the page (the lesson's figures are in the
session's own);
``sdpaComponent()`` the component's own Bokeh model (its parameters on ``data``);
``sdpaHeatmap()`` the heatmap figure, its one image renderer, the source's data, the view's
column the renderer draws (column ``shown`` holds a copy of its image) and the view's title;
``sdpaFrames()`` starts, once, a log of the frames the session sends the component (their
sequence and parts) and returns it."""

HEATMAP_DRAWN_JS = """() => {
  const record = window.SdpaDrawnFigures && window.SdpaDrawnFigures[0];
  const doc = window.Bokeh && Bokeh.documents && Bokeh.documents[0];
  if (!record || !record.models || !(record.frames > 0) || !doc || !doc.is_idle) return false;
  const view = Bokeh.index.find_one(record.models.heatmap);
  return view != null && view.has_finished();
}"""
"""True once the websocket session is idle and the first-screen component has drawn a
frame and its heatmap is painted (the first screen: tests/browser checks the rest)."""


PORTS = range(5100, 5200)
SERVER_START_TIMEOUT = 60.0
STATIC_PREFIX = "assets"
STATIC_DIR = REPO / "static"


def free_port(ports: range | None = None) -> int:
    """The first port of ``ports`` (:data:`PORTS` unless given) nothing listens on now."""
    # PORTS is read at the call: the proxy tests patch it for their own range.
    ports = PORTS if ports is None else ports
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}–{ports.stop - 1}")


@dataclass
class AppServer:
    """A running ``panel serve app/main.py`` (or ``sdpa-sim``) subprocess and where its log
    goes."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    route: str = "main"
    """The page's path: the name of the script served (``main`` for app/main.py)."""

    @property
    def base_url(self) -> str:
        """The server's root address, e.g. for the static files under ``/assets``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The page's address (the app is served under its script name)."""
        return f"{self.base_url}/{self.route}"

    def log_size(self) -> int:
        """How many bytes the log holds now: a mark to read only what comes after it."""
        return self.log_path.stat().st_size

    def log_text(self, since: int = 0) -> str:
        """The server's combined stdout and stderr from byte ``since`` on."""
        with self.log_path.open("rb") as log:
            log.seek(since)
            return log.read().decode("utf-8", errors="replace")

    def answers(self) -> bool:
        """Whether the page is served (HTTP 200) right now."""
        try:
            with urllib.request.urlopen(self.url, timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False


def start_server(
    log_path: Path,
    attempts: int = 3,
    channel: bool = True,
    env: dict[str, str] | None = None,
    script: str = "app/main.py",
) -> AppServer:
    """Start ``panel serve app/main.py`` (or another ``script``, a path from the repository
    root) from the repository root on a free loopback port.

    It serves ``static/`` under ``/assets`` and mounts the sessions' own channel (app/
    channel.py) and the pages' shared data (app/served/page_data.py; ``channel=False`` leaves
    both out, as plain ``panel serve`` does) as ``sdpa-sim`` does, and returns once the page
    answers; ``env`` adds to its environment
    (class mode's presenter key, say). Raises RuntimeError, with the server's log, if it
    exits or stays silent.
    """
    for attempt in range(attempts):
        port = free_port()
        command = [
            sys.executable,
            "-m",
            "panel",
            "serve",
            script,
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            "--allow-websocket-origin",
            f"127.0.0.1:{port}",
        ]
        if STATIC_DIR.is_dir():
            # As `sdpa-sim` serves it: Panel reserves /static, so the project's files go here.
            command += ["--static-dirs", f"{STATIC_PREFIX}={STATIC_DIR}"]
        environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        environment.pop(CHANNEL_ENV, None)
        environment.pop(PAGE_DATA_ENV, None)
        if channel:
            command += ["--plugins", channel_module.__name__, "--plugins", page_data.__name__]
            environment[CHANNEL_ENV] = environment[PAGE_DATA_ENV] = "1"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=environment
            )
        server = AppServer(process, port, log_path, route=Path(script).stem)
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if server.answers():
                return server
            try:
                # Paces the polling and notices a server that exited.
                code = process.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
            # Another process may take the port between the probe and the bind: try again.
            if "already in use" in server.log_text() and attempt + 1 < attempts:
                break
            raise RuntimeError(f"panel serve exited with {code}:\n{server.log_text()}")
        else:
            stop_server(server)
            raise RuntimeError(
                f"panel serve did not answer within {SERVER_START_TIMEOUT:.0f} s:\n"
                f"{server.log_text()}"
            )
    raise RuntimeError(f"panel serve found no free port in {attempts} attempts")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``, then kill it if it has not exited within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def stop_server(server: AppServer) -> None:
    """Stop the server: terminate, then kill if it has not exited within 10 s."""
    stop_process(server.process)


@contextlib.contextmanager
def served_app(log_path: Path) -> Iterator[AppServer]:
    """:func:`start_server` for the duration of a ``with`` block."""
    server = start_server(log_path)
    try:
        yield server
    finally:
        stop_server(server)


ROW_CELL_PIXELS_JS = """([figure, row]) => {
  // The brightest cell of query `row` on the heatmap `figure` (a weights view): where it is
  // on the composed canvas, and every device pixel wholly inside it.
  const view = Bokeh.index.find_one(figure);
  const image = figure.renderers.find((r) => r.name === 'heatmap_image' && r.visible);
  const values = image.data_source.data.shown[0];
  const n = image.data_source.data.dw[0];
  const cells = Array.from(values.slice(row * n, (row + 1) * n));
  const column = cells.indexOf(Math.max(...cells));
  const {x_scale: xs, y_scale: ys} = view.frame;
  const ratio = view.canvas_view.pixel_ratio;
  // BokehJS draws half a device pixel right of and below the scales' positions.
  const at = (scale, value) => scale.compute(value) * ratio + 0.5;
  const [left, right] = [at(xs, column), at(xs, column + 1)];
  const [top, bottom] = [at(ys, row), at(ys, row + 1)];
  const x0 = Math.ceil(Math.min(left, right)), x1 = Math.floor(Math.max(left, right));
  const y0 = Math.ceil(Math.min(top, bottom)), y1 = Math.floor(Math.max(top, bottom));
  const canvas = view.canvas_view.compose().canvas;
  const pixels = canvas.getContext('2d').getImageData(x0, y0, x1 - x0, y1 - y0).data;
  const colour = Array.from(image.glyph.color_mapper.rgba_mapper.v_compute([cells[column]]));
  const colours = [];
  for (let i = 0; i < pixels.length; i += 4) colours.push(Array.from(pixels.slice(i, i + 4)));
  return {column, weight: cells[column], size: [x1 - x0, y1 - y0], colour, colours};
}"""
"""Query ``row``'s brightest cell on a heatmap figure: its column and weight, its size in
device pixels, the colour its weight maps to, and the colour of each device pixel wholly
inside it on the figure's composed canvas (what the student sees)."""


def assert_bright_cell_in_full_view(cell: dict, dash_colour: str) -> None:
    """Every pixel inside the bright cell of :data:`ROW_CELL_PIXELS_JS` is the cell's own
    colour: nothing drawn over the heatmap (the row's dashed outline, ``dash_colour``)
    covers any of it."""
    width, height = cell["size"]
    assert width >= 3 and height >= 3, f"the cell is too small to check: {cell['size']}"
    assert len(cell["colours"]) == width * height
    dash = [int(dash_colour[i : i + 2], 16) for i in (1, 3, 5)]
    dashed = [colour for colour in cell["colours"] if colour[:3] == dash]
    assert dashed == [], f"{len(dashed)} of the cell's {width}×{height} pixels are dashes"
    others = [colour for colour in cell["colours"] if colour != cell["colour"]]
    assert others == [], (
        f"{len(others)} of the cell's {width}×{height} pixels are not its colour "
        f"{cell['colour']}: {others[:5]}"
    )
