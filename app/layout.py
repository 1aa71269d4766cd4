"""Assembles one session's page: state, model, views, controls, URL sync and the template."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import panel as pn
import panel_material_ui as pmui
from bokeh.core.property.validation import validate
from bokeh.events import Tap
from panel.io.location import Location
from panel.util import edit_readonly

from app.compat import CheckedPageChanges, session_writes_pending
from app.controls import build_controls
from app.flow import grid, side_by_side, sidebar_layout
from app.lesson import LessonSections
from app.model import CONTROLS, SimulationModel
from app.presets import PRESETS
from app.query import compose_search, parse_embed
from app.share import build_share_controls
from app.state import SimulationState
from app.ticks import Later, Paced, next_tick, run_now
from app.views.heatmap import HeatmapView
from app.views.histogram import DotProductHistograms
from app.views.lesson_gate import GATE_CSS, LessonGate
from app.views.readouts import ReadoutsView

TITLE = "Scaled Dot-Product Attention: Score Matrix & √d_k Distribution"

NARROW_HEADER_CSS = """
@media (max-width: 800px) {
  .MuiTypography-root.title { font-size: 17px !important; line-height: 1.25 !important; }
}
"""
"""Below ~800 px the title wraps: a smaller font keeps it within the fixed header's height,
which the page's content is offset by (at 24 px it took three lines at 400 px and covered
the top of the controls)."""

INTRO = (
    "Each cell is one query·key dot product. With random vectors those products have "
    "variance d_k, so as d_k grows the raw scores spread out and the softmax piles all "
    "weight onto one key. Dividing by √d_k keeps their spread at 1. Raise **d_k**, then "
    "switch **scale by 1/√d_k** off and watch the rows turn one-hot."
)

QueryArgs = Mapping[str, Sequence[bytes | str] | bytes | str]


LOCATION_PREFIXES = {"pathname": "/", "search": "?", "hash": "#"}
"""What these Location parameters start with when not empty (Panel's regexes for them)."""


def location_params(protocol: str | None, host: str | None, uri: str | None) -> dict[str, str]:
    """Location parameters (``href``, ``hostname``, ``port``, ``pathname``, ``search``,
    ``hash``, ``protocol``) for a request, as the browser's ``window.location`` has them.

    Panel's own parser splits the URI on ``?`` and the Host on ``:``, so a ``?`` inside the
    query (``?d_k=8&ref=https://course.example/page?id=3``, ``??d_k=5``) or an IPv6 Host
    (``[::1]:5006``) failed the page. Here the query starts at the first ``?`` (the rest,
    further ``?`` included, is the query, as Tornado reads it) and the hash at the first
    ``#``; a bracketed IPv6 host keeps its brackets, as ``location.hostname`` does; a port
    that is not a number is left out. Never raises.
    """
    params: dict[str, str] = {}
    if protocol:
        params["protocol"] = f"{protocol}:"
    if host:
        if host.startswith("["):
            hostname, _, rest = host.partition("]")
            hostname += "]"
            port = rest[1:] if rest.startswith(":") else ""
        elif host.count(":") == 1:
            hostname, _, port = host.partition(":")
        else:
            hostname, port = host, ""
        params["hostname"] = hostname
        params["port"] = port if port.isascii() and port.isdigit() else ""
    if uri:
        scheme, separator, after = uri.partition("://")
        if separator and scheme.lower() in ("http", "https"):
            # An absolute-form request target: the path starts after the authority.
            authority_end = min((i for i in map(after.find, "/?#") if i >= 0), default=len(after))
            uri = after[authority_end:]
        rest, _, fragment = uri.partition("#")
        path, mark, query = rest.partition("?")
        params["pathname"] = path if path.startswith("/") else f"/{path}"
        params["search"] = f"?{query}" if mark and query else ""
        params["hash"] = f"#{fragment}" if fragment else ""
    authority = f"//{host}" if host else ""
    parts = (params.get(name, "") for name in ("pathname", "search", "hash"))
    params["href"] = params.get("protocol", "") + authority + "".join(parts)
    return params


class SafeLocation(CheckedPageChanges, Location):
    """Panel's Location, built from a request with :func:`location_params` and guarded
    against what a page sends back.

    ``query_params`` gives the raw text of each parameter: Panel's parses every value (an
    all-digit value of over 4300 digits failed the session, ``[…]`` went through
    ``ast.literal_eval``) and the app reads its parameters itself (:mod:`app.query`). The
    page may only change the address's parts, each as text of the right form; ``reload``
    and anything else stay as the server set them.
    """

    page_properties = ("href", "hostname", "pathname", "protocol", "port", "search", "hash")

    @classmethod
    def from_request(cls, request: object) -> SafeLocation:
        """The Location of the page ``request`` (a Bokeh session's request) asked for."""
        location = cls()
        if request is None:
            return location
        params = location_params(
            getattr(request, "protocol", None),
            getattr(request, "host", None),
            getattr(request, "uri", None),
        )
        with edit_readonly(location):
            location.param.update(params)
        return location

    @property
    def query_params(self) -> dict:
        """The query's parameters as text, the last of a repeated name winning."""
        return dict(urllib.parse.parse_qsl(self.search[1:], keep_blank_values=True))

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Text only, starting as the parameter's regex asks (Panel would raise otherwise)."""
        if not isinstance(value, str):
            return False
        prefix = LOCATION_PREFIXES.get(name)
        if prefix is None or value == "":
            return True
        # In an iframe made from ``srcdoc`` the browser's pathname is "srcdoc".
        return value.startswith(prefix) or (name == "pathname" and value == "srcdoc")


def session_location() -> SafeLocation | None:
    """A :class:`SafeLocation` for the current server session; None outside a server."""
    if not _served():
        return None
    return SafeLocation.from_request(pn.state.curdoc.session_context.request)


class SimulationApp:
    """One session: the state, its model, the views that draw it and the page around them.

    A control change flows one way: state → :meth:`update_plots` (the model's
    :meth:`SimulationModel.refresh`, then each first-screen view's ``update``) →
    :meth:`update_after_plots` (the controls that show the new state, the lesson and the
    URL), each batched with ``pn.io.hold()`` into one message. In a served session
    ``pace`` runs the first on the session's next tick, no sooner after the previous one
    ended than it took, and ``defer`` the second on the tick after: changes that arrive in
    between fold into one update. Elsewhere both run at once.
    """

    def __init__(
        self,
        query: QueryArgs | None = None,
        *,
        embed: bool | None = None,
        location: Location | None = None,
        defer: Later | None = None,
        pace: Later | None = None,
    ) -> None:
        self.location = location
        served = _served()
        self._defer = defer or (next_tick(pn.state.curdoc) if served else run_now)
        """How :meth:`update_after_plots` is run once the first screen's update is sent."""
        self._pace = pace or (
            Paced(pn.state.curdoc, writes_pending=partial(session_writes_pending, pn.state.curdoc))
            if served
            else run_now
        )
        """How :meth:`update_plots` is run after a control change: in a served session on
        its next tick, so the changes that arrive before it fold into one update."""
        self._changed_controls: set[str] = set()
        """Controls changed since the plots were last updated."""
        self.state = SimulationState()
        if query:
            self.state.apply_query(query)
        self.embed = parse_embed(query or {}) if embed is None else embed
        self.model = SimulationModel(self.state)
        self.heatmap = HeatmapView(self.model)
        self.histograms = DotProductHistograms(self.model)
        self.readouts = ReadoutsView(self.model)
        self.first_screen = (self.heatmap, self.histograms, self.readouts)
        self.lesson: LessonSections | None = None
        self._lesson_parts: set[str] = set()
        """Model parts changed since the lesson's views were last updated."""
        self._controls_to_update: list[Callable[[], None]] = []
        """Controls' updates from the state, waiting for :meth:`update_after_plots`."""
        self._update_after_plots_due = False
        self.heatmap.figure.on_event(Tap, self._pick_row)
        self.state.param.watch(self._on_controls, sorted(CONTROLS))
        self.scene = pmui.Alert(
            title="Preset scene",
            severity="info",
            sizing_mode="stretch_width",
            css_classes=["preset-scene"],
        )
        self._show_scene()
        self.state.param.watch(lambda event: self._show_scene(), "preset")
        self.state.param.watch(lambda event: self._write_url(), "preset")
        self.notice = pmui.Alert(
            object=self.state.notice,
            title="Some link values were adjusted",
            severity="warning",
            closeable=True,
            visible=bool(self.state.notice),
            sizing_mode="stretch_width",
            css_classes=["query-notice"],
        )
        self.lesson_gate = LessonGate(
            sizing_mode="stretch_width", margin=(10, 10), stylesheets=[GATE_CSS]
        )
        self.lesson_gate.param.watch(self._on_gate, "opened")
        self.content = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", margin=(0, 10)),
            self.scene,
            self._plots(),
            self.readouts.pane,
            self.lesson_gate,
            sizing_mode="stretch_width",
        )
        self.page = self._page()
        if _served():
            # The lesson (~300 models, as much server time as the first screen) waits for
            # the student to reach it: a class arriving at once then only pays for the
            # first screens.
            if self.location is not None:
                pn.state.onload(self._write_url)
        else:
            self.add_lesson()

    def _on_gate(self, event: object) -> None:
        if self.lesson_gate.opened:
            self.add_lesson()

    def add_lesson(self) -> None:
        """Build the lesson's views and append their sections to the page, in place of the
        gate that asked for them (once)."""
        if self.lesson is not None:
            return
        with pn.io.hold():
            self.lesson = LessonSections(self.model)
            self._lesson_parts = set()  # built from the model as it is now
            self.lesson_gate.visible = False
            self.content.extend(self.lesson.sections())

    def _on_controls(self, *events: object) -> None:
        due = bool(self._changed_controls)
        self._changed_controls |= {event.name for event in events}
        if not due:
            self._pace(self.update_plots)

    def update_plots(self) -> None:
        """Bring the model and the first screen's views up to date with every control
        changed since the last update, then schedule :meth:`update_after_plots`."""
        changed, self._changed_controls = self._changed_controls, set()
        if not changed:
            return
        # Bokeh's validation of every value the views set (~0.2 ms a move) checks arrays
        # and numbers computed here; a model test makes every kind of move with it on.
        with pn.io.hold(), validate(False):
            parts = self.model.refresh(changed)
            for view in self.first_screen:
                view.update(self.model, parts)
        # The plots under the student's hand go out alone, so the browser paints them
        # before it redraws the lesson's figures below; moves that come in between
        # are folded into one update after the plots.
        self._lesson_parts |= parts
        self._schedule_update_after_plots()

    def _after_plots(self, control_update: Callable[[], None]) -> None:
        """Run a control's update from the state with the update after the plots: the
        control a move came from already shows it, the others (the exact d_k box under
        the d_k slider, say) can wait until the plots have been sent."""
        self._controls_to_update.append(control_update)
        # A move's plot update schedules this one once it is done: a flood of messages then
        # costs one update after the plots per plot update, not one per message.
        if not self._changed_controls:
            self._schedule_update_after_plots()

    def _schedule_update_after_plots(self) -> None:
        if not self._update_after_plots_due:
            self._update_after_plots_due = True
            self._defer(self.update_after_plots)

    def update_after_plots(self) -> None:
        """Bring the controls, the lesson's views and the URL up to date with the model."""
        self._update_after_plots_due = False
        parts, self._lesson_parts = self._lesson_parts, set()
        controls, self._controls_to_update = self._controls_to_update, []
        # Before and outside the hold: Panel takes a widget's change that an outer hold
        # releases, after Panel has forgotten it made it, for a change from the page and
        # handles it again (~1 ms for the exact d_k box).
        for control_update in controls:
            control_update()
        with pn.io.hold(), validate(False):
            for view in self.lesson.views if self.lesson else ():
                view.update(self.model, parts)
            self._write_url()

    def _show_scene(self) -> None:
        preset = PRESETS.get(self.state.preset)
        self.scene.visible = preset is not None
        if preset is not None:
            self.scene.param.update(title=preset.label, object=preset.description)

    def _pick_row(self, event: Tap) -> None:
        """A click on the heatmap picks that query row for the row comparison."""
        # The event's coordinates come from the page, as any client sent them.
        y = event.y
        if isinstance(y, int | float) and not isinstance(y, bool) and 0 <= y < self.state.n:
            self.state.row = int(y)

    def _write_url(self) -> None:
        # The whole query is composed here rather than by Panel's ``update_query``, which
        # re-encodes every parameter it parsed (``id=007`` became ``id=7``) and keeps
        # Bokeh's own (``bokeh-session-id``).
        if self.location is not None:
            self.location.search = compose_search(self.location.search, self.state.query())

    def _plots(self) -> pn.viewable.Viewable:
        heatmap = pn.pane.Bokeh(self.heatmap.figure, sizing_mode="stretch_width")
        histograms = pn.Column(
            pn.pane.Bokeh(self.histograms.raw.figure, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.histograms.scaled.figure, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )
        # Side by side when the main column is ~830 px wide, stacked below (course-page
        # iframes, phones).
        return side_by_side([heatmap, histograms], basis=[480, 340], grow=[7, 5])

    def _page(self) -> pn.viewable.Viewable:
        # Flex layouts rather than the template's drawer: the controls sit beside the plots
        # on wide screens and stack above them, in as many columns as fit, when narrow;
        # they are never hidden.
        control_items = build_controls(self.state, later=self._after_plots)
        if not self.embed:
            control_items.append(build_share_controls(self.state.query, self.location))
        controls = pmui.Paper(
            grid(control_items, min_width=240, gap=4),
            elevation=1,
            sizing_mode="stretch_width",
            margin=(10, 5),
            css_classes=["controls"],
        )
        body = sidebar_layout(controls, self.content, main_min_width=760 if self.embed else 640)
        if self.embed:
            return pn.Column(self.notice, body, sizing_mode="stretch_width")
        page = pmui.Page(title=TITLE, main=[self.notice, body], stylesheets=[NARROW_HEADER_CSS])
        detach_from_global_busy(page)
        return page


def detach_from_global_busy(page: pmui.Page) -> None:
    """Unbind a Page's ``busy`` from the process-wide ``pn.state.busy``.

    panel-material-ui binds every Page to it, so each websocket message of any session
    re-walked every live session's page (~60 ms each, several times per slider move).
    Assigning a value drops the binding but param keeps its watcher on ``pn.state``: that
    still ran ~2 ms per message and session, and kept every closed session's page alive.
    """
    with edit_readonly(page):
        page.busy = False
    private = page._param__private
    stale = [
        (names, watcher)
        for names, watcher in private.ref_watchers
        if watcher.inst is pn.state and set(watcher.parameter_names) <= {"busy"}
    ]
    for entry in stale:
        pn.state.param.unwatch(entry[1])
        private.ref_watchers.remove(entry)


def _served() -> bool:
    """Whether the page is being built for a browser session of a running server."""
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def build_app(
    query: QueryArgs | None = None, *, embed: bool | None = None, location: Location | None = None
) -> pn.viewable.Viewable:
    """Build one session's page; ``query`` holds the untrusted URL arguments, if any.

    ``embed=True`` (or ``?embed=true``) gives the compact layout for iframes and notebooks:
    no header, the controls above the plots.
    """
    return SimulationApp(query, embed=embed, location=location).page
