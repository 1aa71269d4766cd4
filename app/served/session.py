"""One student's session: the state, its model, the views that draw it, and how a change flows."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial

import panel as pn
from bokeh.core.property.validation import validate
from bokeh.events import ClientReconnected, ConnectionLost
from panel.io.location import Location
from tornado.ioloop import IOLoop

from app.compat import session_writes_pending, skip_unchanged_stylesheets
from app.served.channel import SessionChannel
from app.served.channel import enabled as channel_enabled
from app.served.class_seat import ClassSeat
from app.served.classroom import (
    PRESENT_PARAMETER,
    PRESENTER_COOKIE,
    Classroom,
    process_classroom,
)
from app.served.components.class_bar import shown_result
from app.served.components.figures import DrawnFigures
from app.served.components.framed import ComposedFrame
from app.served.layout import PageLayout
from app.served.location import served
from app.served.sections import LessonSections
from app.served.share import embed_snippet, page_address, share_link
from app.served.ticks import (
    REFRESH_POOL,
    Later,
    Paced,
    later_by,
    next_tick,
    once_page_loaded,
    run_now,
    sent_by_the_session,
)
from app.served.work_queue import WorkGate
from app.simulation.model import SimulationModel
from app.simulation.presets import PRESETS
from app.simulation.query import (
    compose_search,
    parse_embed,
    parse_shown_controls,
    query_value,
)
from app.simulation.spec import SPEC, SimulationSpec
from app.simulation.state import SimulationState

log = logging.getLogger("sdpa_sim.session")

URL_FOLLOWS_S = 1.0
"""While moves go on the session's channel, the page's URL is written once the controls
have been still this long (each write is a Bokeh patch: one per pause, not one per move)."""

URL_LAGS_AT_MOST_S = 5.0
"""The longest the URL lags behind moves that never pause for :data:`URL_FOLLOWS_S`."""

URL_TIMER_SLACK_S = 0.02
"""A URL timer that fires this close to its time writes rather than waiting again."""

OFF_LOOP_CELLS = 512 * 512
"""From this many cells (n²), a refresh for the session's channel runs off the event loop
(:data:`app.served.ticks.REFRESH_POOL`): at n = d_k = 1024 a d_k move's refresh takes ~60 ms, which
every other student's move on the process would wait for. Below, a refresh takes a few ms
and the hop to a thread and back would cost a move more than it saves."""

LESSON_TARGET = "lesson"
"""The name the session's channel hands the lesson component's messages to."""

QueryArgs = Mapping[str, Sequence[bytes | str] | bytes | str]


class Session:
    """One session: the state, its model, the views that draw it and the page around them.

    A change flows one way: widget → state (app/page/controls.py) → :meth:`update_plots` (the
    model recomputes the parts that depend on the changed controls, then the first screen's
    figures receive the numbers of those parts, which the browser draws) →
    :meth:`update_lesson_and_url` (the lesson's views, then the URL), each batched with
    ``pn.io.hold()`` into one message; until the lesson is built, the URL goes out with the
    numbers instead. In a served session ``pace`` runs the first on the
    session's next tick, no sooner after the previous one ended than it took, and ``defer``
    the second on the tick after: changes that arrive in between fold into one update.
    Elsewhere both run at once.
    """

    def __init__(
        self,
        query: QueryArgs | None = None,
        *,
        embed: bool | None = None,
        location: Location | None = None,
        defer: Later | None = None,
        pace: Later | None = None,
        classroom: Classroom | None = None,
        spec: SimulationSpec = SPEC,
    ) -> None:
        self.location = location
        is_served = served()
        doc = pn.state.curdoc
        self.channel = (
            SessionChannel(doc) if is_served and doc is not None and channel_enabled() else None
        )
        """The session's own websocket for moves and frames (app/served/channel.py), where served
        with it."""
        self._defer = defer or (next_tick(doc) if is_served else run_now)
        if pace is None and is_served:
            pace = Paced(
                doc,
                writes_pending=partial(self._writes_pending, doc),
                off_lock_loop=self._channel_loop,
            )
        self._pace = pace or run_now
        self._changed_controls: set[str] = set()
        """Controls changed since the plots were last updated."""
        self._lesson_parts: set[str] = set()
        """Model parts changed since the lesson's views were last updated."""
        self._lesson_update_due = False
        self._refreshing = False
        """Whether a refresh is running off the event loop (:meth:`_refresh_off_loop`)."""
        self._url_due = False
        """Whether a URL write is scheduled (:meth:`_write_url_soon`)."""
        self._url_quiet_at = self._url_late_at = 0.0
        """When the scheduled URL write is due: after a pause, or at the latest."""
        self._later_by = later_by(doc) if is_served else _run_at_once
        self.work = (
            WorkGate(
                post=self._defer,
                ready=lambda: not self._writes_pending(doc),
                wait=self._later_by,
            )
            if is_served and doc is not None
            else WorkGate()
        )
        """The session's heavy jobs (the CSV files): one at a time, repeats merged, the next
        once the last result has been written (app/served/work_queue.py)."""
        self.state = SimulationState.for_spec(spec)()
        if query:
            self.state.apply_query(query)
        self.embed = parse_embed(query or {}) if embed is None else embed
        self.model = SimulationModel(self.state)
        self.figures = DrawnFigures(
            self.model, sizing_mode="stretch_width", channel_key=self.channel_key
        )
        """The heatmap, histograms and readouts, drawn in the browser from the model's numbers."""
        self.figures.on_pick_row = self.pick_row
        self.figures.channel = self.channel
        self.lesson: LessonSections | None = None
        self.shown_controls, control_notices = parse_shown_controls(query or {}, spec.showable)
        """The only controls the page shows (``?controls=``), or None for the usual ones."""
        self.notice = " ".join(filter(None, [self.state.notice, *control_notices]))
        """What the link asked for that was fixed or ignored, in plain text."""
        classroom = process_classroom(spec) if classroom is None else classroom
        # The presenter link, or the cookie its page keeps once it took the key out of its
        # address (a reload presents again).
        presenter = classroom.presents(
            query_value(query or {}, PRESENT_PARAMETER)
        ) or classroom.presents_by_cookie(_request_cookies(doc).get(PRESENTER_COOKIE))
        self.seat = (
            ClassSeat(
                classroom,
                self.state,
                presenter=presenter,
                defer=self._defer,
                show_bar=self._show_class_bar,
                later=self._later_by,
                show_result=self._show_class_result,
            )
            if classroom.enabled
            else None
        )
        """This session's place in the class (class mode: app/served/classroom.py), when the
        server presents one."""
        self.layout = PageLayout(
            self.state,
            self.figures,
            shown_controls=self.shown_controls,
            embed=self.embed,
            notice=self.notice,
            share=self.share_text,
            channel_key=self.channel_key,
        )
        self.page = self.layout.page
        if self.channel is not None:
            self.channel.receive_with(self.figures.channel_target, self.figures.take_message)
            controls = self.layout.drawn_controls
            controls.channel = self.channel
            self.channel.receive_with(controls.channel_target, controls.take_message)
        self.state.param.watch(self._on_controls, list(spec.names))
        self.state.param.watch(self._on_preset, "preset")
        self.layout.first_screen.param.watch(self._on_gate, "lesson_opened")
        if self.seat is not None:
            self.seat.prepare()
            if is_served and doc is not None:
                # A page counts in the class once it is connected: a GET whose page never
                # opens its websocket (a link preview, a health check) is nobody.
                doc.on_session_destroyed(self._leave_class)
                pn.state.onload(self.seat.start)
                # And only while it is: Bokeh keeps a session 15 s or more after its page's
                # websocket closed, but says at once that it did.
                doc.on_event(ConnectionLost, self._class_page_lost)
                doc.on_event(ClientReconnected, self._class_page_back)
            else:
                self.seat.start()
        if is_served:
            if doc is not None:
                skip_unchanged_stylesheets(doc)
                doc.on_session_destroyed(self._drop_work)
            # The lesson waits for the student to reach it: a class arriving at once then
            # only pays for the first screens. The URL shows the state once the page is up.
            if self.location is not None:
                pn.state.onload(self._schedule_lesson_and_url)
        else:
            self.add_lesson()

    @property
    def channel_key(self) -> str:
        """The key the page opens the session's channel with ("" without a channel)."""
        return self.channel.key if self.channel is not None else ""

    def share_text(self, kind: str) -> str:
        """The text Copy link (``link``) or Copy embed code (``embed``) copies: the scene
        now, on the page's address as the browser reached it."""
        address = page_address(self.location)
        query = self.state.query()
        return share_link(address, query) if kind == "link" else embed_snippet(address, query)

    def _show_class_bar(self, bar: pn.viewable.Viewable) -> None:
        self.layout.first_screen.classroom = bar

    def _show_class_result(self, counts: dict) -> None:
        if self.lesson is not None:
            self.lesson.drawn.class_result = shown_result(counts)

    def _drop_work(self, session_context: object) -> None:
        self.work.close()

    def _leave_class(self, session_context: object) -> None:
        if self.seat is not None:
            self.seat.leave()

    def _class_page_lost(self, event: object) -> None:
        # Bokeh 3.9 calls this from its websocket's close handler, before it detaches the
        # connection: a failure here must not keep the session attached.
        try:
            self.seat.page_lost()
        except Exception:
            log.exception("sdpa-sim: a closed page could not be counted out of the class")

    def _class_page_back(self, event: object) -> None:
        try:
            self.seat.page_back()
        except Exception:
            log.exception("sdpa-sim: a reconnected page could not be counted back in")

    def _writes_pending(self, doc: object) -> bool:
        # A paced update waits for the last frame on either websocket.
        return session_writes_pending(doc) or (self.channel is not None and self.channel.writing)

    def _on_gate(self, event: object) -> None:
        if self.layout.first_screen.lesson_opened:
            once_page_loaded(self.add_lesson)

    def add_lesson(self) -> None:
        """Build the lesson's views and append their sections to the page, in place of the
        gate that asked for them (once)."""
        if self.lesson is not None:
            return
        with pn.io.hold():
            self.lesson = LessonSections(self.model, dark=self.layout.dark, work=self.work)
            drawn = self.lesson.drawn
            drawn.on_pick_row = self.choose_row
            if self.seat is not None:
                drawn.on_quiz_answer = self.seat.answer
                drawn.class_result = shown_result(self.seat.result)
            if self.channel is not None:
                drawn.channel = self.channel
                drawn.param.update(channel_key=self.channel.key, channel_target=LESSON_TARGET)
                self.channel.receive_with(drawn.channel_target, drawn.take_message)
            self._lesson_parts = set()  # built from the model as it is now
            self.layout.show_lesson(drawn)

    def _on_controls(self, *events: object) -> None:
        due = bool(self._changed_controls)
        self._changed_controls |= {event.name for event in events}
        if not due:
            self._pace(self.update_plots)

    def _on_preset(self, event: object) -> None:
        self.layout.show_scene(PRESETS.get(self.state.preset))
        self._schedule_lesson_and_url()

    def update_plots(self) -> Future | None:
        """Bring the model and the first screen's views up to date with every control
        changed since the last update, then schedule :meth:`update_lesson_and_url` (or, before
        the lesson is built, write the URL with the numbers).

        On the session's channel, a slow refresh (of :data:`OFF_LOOP_CELLS` cells or more, or
        one that builds a new seed's tables of pooled pairs:
        :meth:`app.simulation.model.SimulationModel.builds_tables`) runs in
        :data:`app.served.ticks.REFRESH_POOL` and its numbers are sent on a later tick: the
        returned future is done once they have been (None: all done already).
        """
        changed, self._changed_controls = self._changed_controls, set()
        if not changed:
            return None
        values = self.state.control_values()
        slow = int(values["n"]) ** 2 >= OFF_LOOP_CELLS or self.model.builds_tables(changed, values)
        if slow and self._on_channel():
            return self._refresh_off_loop(changed, values)
        self._show(self.model.refresh(changed, values))
        return None

    def _refresh_off_loop(self, changed: set[str], values: dict[str, object]) -> Future:
        # The frame shows the moves handled until now, whatever arrives while it computes.
        handled = self.channel.handled
        shown: Future = Future()
        self._refreshing = True
        computed = REFRESH_POOL.submit(self._compute, changed, values, handled)
        computed.add_done_callback(
            lambda done: self._defer(partial(self._show_computed, done, shown))
        )
        return shown

    def _compute(
        self, changed: set[str], values: dict[str, object], handled: int
    ) -> tuple[set[str], ComposedFrame | None]:
        # Off the event loop: the refresh, and the frame packed into its message (~2 ms of
        # copying at n = 1024).
        parts = self.model.refresh(changed, values)
        return parts, self.figures.compose_update(self.model, parts, handled)

    def _show_computed(self, computed: Future, shown: Future) -> None:
        self._refreshing = False
        try:
            parts, composed = computed.result()
            self._show(parts, composed)
        finally:
            shown.set_result(None)

    def _show(self, parts: set[str], composed: ComposedFrame | None = None) -> None:
        """Send the page the model's new ``parts`` (their frame ``composed`` already, by a
        refresh off the event loop), then the lesson's and the URL as below."""
        # Bokeh's validation of every value the views set checks arrays and numbers
        # computed here; a model test makes every kind of move with it on.
        with pn.io.hold(), validate(False):
            if composed is None:
                self.figures.update(self.model, parts)
            else:
                self.figures.send_composed(composed)
            if self._on_channel():
                # The numbers went on the channel, the lesson's follow in messages of their
                # own (the page paints the first screen's first); the URL once the moves
                # pause, in one message.
                self._lesson_parts |= parts
                self._update_lesson()
                self._write_url_soon()
                return
            if self.lesson is None:
                # No lesson to redraw: the URL goes out with the numbers, in one message.
                self._write_url()
                return
        # The plots under the student's hand go out alone, so the browser paints them
        # before it redraws the lesson's figures below.
        self._lesson_parts |= parts
        self._schedule_lesson_and_url()

    def _schedule_lesson_and_url(self) -> None:
        if not self._lesson_update_due:
            self._lesson_update_due = True
            self._defer(self.update_lesson_and_url)

    def update_lesson_and_url(self) -> None:
        """Bring the lesson's views and the URL up to date with the model."""
        self._lesson_update_due = False
        with pn.io.hold(), validate(False):
            if not self._refreshing:
                # Else the model is half new: the refresh's end updates the lesson.
                self._update_lesson()
            self._write_url()

    def _update_lesson(self) -> None:
        parts, self._lesson_parts = self._lesson_parts, set()
        for view in self.lesson.views if self.lesson else ():
            view.update(self.model, parts)

    def _on_channel(self) -> bool:
        return self.channel is not None and self.channel.connected

    def _channel_loop(self) -> IOLoop | None:
        return self.channel.loop if self.channel is not None else None

    def _write_url_soon(self) -> None:
        now = time.monotonic()
        self._url_quiet_at = now + URL_FOLLOWS_S
        if not self._url_due:
            self._url_due = True
            self._url_late_at = now + URL_LAGS_AT_MOST_S
            self._later_by(URL_FOLLOWS_S, self._write_due_url)

    def _write_due_url(self) -> None:
        # One timer at a time, moved on while moves keep coming: a move costs a float.
        now = time.monotonic()
        wait = min(self._url_quiet_at, self._url_late_at) - now
        if wait > URL_TIMER_SLACK_S:
            self._later_by(wait, self._write_due_url)
            return
        self._url_due = False
        # The last URL of a spell of moves has no later change to carry it: Bokeh's session
        # sends it (app/served/ticks.py, sent_by_the_session), or a copied link could lag behind.
        sent_by_the_session(self._write_url)

    def _write_url(self) -> None:
        # The whole query is composed here rather than by Panel's ``update_query``, which
        # re-encodes every parameter it parsed (``id=007`` became ``id=7``) and keeps
        # Bokeh's own (``bokeh-session-id``).
        if self.location is not None:
            # The presenter key never stays in the address (the presenter's page keeps a
            # cookie instead): a projected or shared address presents nothing.
            self.location.search = compose_search(
                self.location.search, self.state.query(), drop=(PRESENT_PARAMETER,)
            )

    def pick_row(self, row: int) -> None:
        """A click on the heatmap picks query ``row`` for the row comparison (a row outside
        the matrix, as a client may send, picks nothing)."""
        if 0 <= row < self.state.n:
            self.state.set_controls(row=row)

    def choose_row(self, row: int) -> None:
        """The row box asks for query ``row``: the nearest query of the matrix."""
        self.state.set_controls(row=min(max(row, 0), self.state.n - 1))


def _run_at_once(delay: float, callback: Callable[[], None]) -> None:
    callback()


def _request_cookies(doc: object) -> Mapping[str, str]:
    """The cookies of the request that opened ``doc``'s session (none outside a server)."""
    context = getattr(doc, "session_context", None)
    cookies = getattr(getattr(context, "request", None), "cookies", None)
    return cookies if isinstance(cookies, Mapping) else {}


def build_app(
    query: QueryArgs | None = None,
    *,
    embed: bool | None = None,
    location: Location | None = None,
    classroom: Classroom | None = None,
    spec: SimulationSpec = SPEC,
) -> pn.viewable.Viewable:
    """Build one session's page; ``query`` holds the untrusted URL arguments, if any.

    ``embed=True`` (or ``?embed=true``) gives the compact layout for iframes and notebooks:
    no header, the controls above the plots. ``spec`` holds the controls it offers (the
    app's unless given).
    """
    return Session(query, embed=embed, location=location, classroom=classroom, spec=spec).page
