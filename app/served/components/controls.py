"""The first screen's sliders and switches on the served page, drawn in the browser.

Each is a native range input or switch (keyboard-operable, named by its label) built in the
page from the spec as data (app/simulation/spec.py); the session holds the state. A move
reaches the server as a message, checked and coerced like any value from a page
(:meth:`app.simulation.state.SimulationState.coerce`); the state's value comes back whenever the
page does not show it, whether it changed on this page or anywhere else (a preset, the exact
box, a link).
One component for all of them: a session holds two Bokeh models for the controls a student
moves most instead of a Material UI widget tree for each.

A move costs one message each way at most: the page shows a slider's new position and its
value at once, and the session answers only with what the page does not already show (an
exact value kept, a refusal, a change from elsewhere), as a message of the values that
differ; ``values`` itself, what a new view of the component starts from, follows silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import param

from app.compat import CheckedPageChanges
from app.page.bundle import BundledComponent
from app.page.controls import (
    CSS,
    EXACT_SUFFIX,
    SHARE_KINDS,
    drawable,
    parameter_shown_by,
    shown_value,
    widget_spec,
)
from app.page.views.disclosure import boxed_disclosure_css
from app.served.components.framed import ChannelReceiver, channel_address_parameter
from app.simulation.spec import nearest_on_grid
from app.simulation.state import SimulationState

log = logging.getLogger(__name__)

CHANNEL_TARGET = "controls"
"""The name the session's channel hands this component's moves to."""


Answer = Callable[[dict[str, dict[str, object]], dict[str, dict[str, object]]], None]
"""Sends the page the controls' values it does not show: ``(values, differ)``, every
control's value as the page draws it and those of them the page does not show yet (empty:
nothing to send, the values are new all the same)."""


class ControlBinding:
    """The session's side of controls drawn in the browser (control_drawing.js): the
    state's values as the page draws them, and the page's moves checked into the state.

    A slider's position is an index into its grid: the page sends ``{"name", "index"}``; a
    switch, buttons, the preset scenes' buttons or a whole-number box ``{"name", "value"}`` (a
    boolean, a choice, a whole number); the Resample button ``{"name": "resample",
    "value": true}``. A slider left at the position nearest an exact value set elsewhere
    does not round that value away. Anything else is refused in one log line (naming
    ``owner``) and the page is put back where the state is. ``answer`` sends the page what
    it does not show: an exact value kept, a clamped number, a refusal, a change from
    elsewhere (a preset, the exact box, a link); a plain move gets no answer that could pull
    the slider back from under the student's hand.
    """

    def __init__(
        self, state: SimulationState, names: Iterable[str], answer: Answer, owner: str
    ) -> None:
        self.state = state
        self.owner = owner
        """The component the controls are drawn by, as the log names it."""
        self._specs = {name: widget_spec(name, state.spec) for name in names}
        self._answer = answer
        self.values = self._values()
        """By widget name: the state's value as the page draws it (:meth:`_values`)."""
        self._on_page = dict(self.values)
        """What the page shows, by widget name, as far as the session knows."""
        watched = sorted({parameter_shown_by(name) for name in self._specs} - {None})
        if watched:
            state.param.watch(self._show, watched)

    @property
    def names(self) -> tuple[str, ...]:
        """The widgets bound, in order."""
        return tuple(self._specs)

    @property
    def specs(self) -> list[dict[str, object]]:
        """What the page draws the widgets from (:func:`widget_spec` of each), in order."""
        return list(self._specs.values())

    def _values(self) -> dict[str, dict[str, object]]:
        values: dict[str, dict[str, object]] = {}
        for name, spec in self._specs.items():
            state_name = parameter_shown_by(name)
            if state_name is None:
                continue
            value = getattr(self.state, state_name)
            kind = spec["widget"]
            if kind == "slider":
                control = self.state.spec.by_name[name]
                position = control.grid.index(nearest_on_grid(value, control.grid))
                values[name] = {"index": position, "text": shown_value(control, value)}
            elif kind in ("buttons", "preset"):
                values[name] = {"value": str(value)}
            elif kind == "number":
                values[name] = {"value": int(value)}
            else:
                values[name] = {"value": bool(value)}
        return values

    def _show(self, *events: object) -> None:
        """Send the page the values it does not show yet (nothing when it shows them all)."""
        self.values = self._values()
        differ = {
            name: value for name, value in self.values.items() if self._on_page.get(name) != value
        }
        self._on_page.update(differ)
        self._answer(self.values, differ)

    def _put_back(self) -> None:
        """Send the page all the state's values again: its control moved where the state
        is not."""
        self.values = self._values()
        self._on_page = dict(self.values)
        self._answer(self.values, self.values)

    def take(self, msg: Any) -> None:
        """Handle a move from the page: ``{"name", "index"}`` for a slider, ``{"name",
        "value"}`` for any other widget."""
        value = self._value_of(msg)
        if value is None:
            log.warning(
                "sdpa-sim: refused a change from a page to %s: %s", self.owner, repr(msg)[:80]
            )
            self._put_back()
            return
        name, wanted = value
        kind = self._specs[name]["widget"]
        state_name = parameter_shown_by(name)
        if state_name is None:
            self.state.resample()
            return
        if kind == "preset":
            self._on_page[name] = {"value": wanted}
            if wanted == self.state.preset:
                self._show()
            else:
                self.state.choose_preset(str(wanted))
            return
        coerced = self.state.coerce(state_name, wanted)
        if coerced is None:
            self._put_back()
            return
        # The page already shows what it sent: the position and its value, the typed number.
        if kind == "slider":
            control = self.state.spec.by_name[name]
            index = msg["index"]
            self._on_page[name] = {
                "index": index,
                "text": shown_value(control, control.grid[index]),
            }
            exact = f"{name}{EXACT_SUFFIX}"
            if exact in self._specs:
                # The page shows the position's value in the slider's exact box too
                # (drawn_controls.js): a plain move still gets no answer.
                self._on_page[exact] = {"value": int(control.grid[index])}
        elif kind == "buttons":
            self._on_page[name] = {"value": str(wanted)}
        elif kind == "number":
            self._on_page[name] = {"value": wanted}
        else:
            self._on_page[name] = {"value": bool(wanted)}
        unchanged = getattr(self.state, state_name) == coerced
        self.state.set_controls(**{state_name: coerced})
        if getattr(self.state, state_name) != coerced:
            self._put_back()
        elif unchanged or coerced != wanted:
            # No watcher ran (the state already held the value: an exact value kept at its
            # nearest position), or a number was clamped: the page may not show the state.
            self._show()

    def _value_of(self, msg: Any) -> tuple[str, object] | None:
        """The widget and value a page's message asks for, or None when it asks for
        nothing bound here."""
        if not isinstance(msg, dict) or not isinstance(msg.get("name"), str):
            return None
        name = msg["name"]
        spec = self._specs.get(name)
        if spec is None:
            return None
        kind = spec["widget"]
        value = msg.get("value")
        if kind == "switch":
            return (name, value) if isinstance(value, bool) else None
        if kind == "action":
            return (name, True) if value is True else None
        if kind in ("buttons", "preset"):
            choices = {choice for choice, _ in spec["choices"]}  # type: ignore[attr-defined]
            return (name, value) if isinstance(value, str) and value in choices else None
        if kind == "number":
            # A whole number only (JSON's 64, never 64.5, true or "64"); clamped later.
            return (name, value) if type(value) is int else None
        control = self.state.spec.by_name[name]
        index = msg.get("index")
        if type(index) is not int or not 0 <= index < len(control.grid):
            return None
        current = getattr(self.state, control.name)
        if control.grid[index] == nearest_on_grid(current, control.grid):
            # Already where the state is: an exact value set elsewhere stays.
            return (control.name, current)
        return (control.name, control.grid[index])


class DrawnControls(CheckedPageChanges, ChannelReceiver, BundledComponent):
    """The widgets ``names`` and, under a "More controls" button, the widgets ``more``
    (each of :func:`app.page.controls.widget_names`), drawn in the browser and bound to ``state``
    by a :class:`ControlBinding`; with ``share``, the More controls end with Copy link and
    Copy embed code, whose text ``share`` writes. The page's moves come as messages; opening
    "More controls" is the page's alone (nothing is built then).
    """

    page_properties = ()

    controls = param.List(default=[], doc="The widgets drawn, in order (widget_spec of each).")
    more = param.List(
        default=[],
        doc='The widgets under "More controls", in order (widget_spec of each); none: no '
        "such button.",
    )
    values = param.Dict(
        default={},
        doc="By widget name: the state's value as shown (`text`), the slider position "
        "nearest it (`index`) or the other widgets' value (`value`).",
    )
    texts = param.Dict(
        default={},
        doc='The words of the "More controls" button and of the share part (`more`, `link`, '
        "`embed`, `shared`, `placeholder`).",
    )
    open_more_from = param.Integer(
        default=0,
        bounds=(0, None),
        doc='The window width in px from which "More controls" opens as the page renders '
        "(0: never).",
    )
    shares = param.Boolean(
        default=False, doc="Whether the More controls end with Copy link and Copy embed code."
    )
    channel_key = param.String(
        default="",
        doc="The key of the session's own websocket (app/served/channel.py), which moves then go "
        "on while it is open; empty: moves go as the component's messages.",
    )
    channel_address = channel_address_parameter()
    channel_target = param.String(
        default=CHANNEL_TARGET,
        constant=True,
        doc="The name the session's channel hands this component's moves to.",
    )

    bundled_css = (CSS, boxed_disclosure_css())

    def __init__(
        self,
        state: SimulationState,
        names: Iterable[str],
        *,
        more: Iterable[str] = (),
        share: Callable[[str], str] | None = None,
        **params: Any,
    ) -> None:
        first = [name for name in names if drawable(name, state.spec)]
        under_more = [name for name in more if drawable(name, state.spec) and name not in first]
        self.binding = ControlBinding(
            state, [*first, *under_more], self._answer, type(self).__name__
        )
        """The state's side of the widgets drawn."""
        self._share = share
        specs = self.binding.specs
        super().__init__(
            controls=specs[: len(first)],
            more=specs[len(first) :],
            values=self.binding.values,
            shares=share is not None and bool(under_more),
            **params,
        )

    @property
    def state(self) -> SimulationState:
        """The state the controls are bound to."""
        return self.binding.state

    @property
    def names(self) -> tuple[str, ...]:
        """The widgets drawn (those under "More controls" last), in order."""
        return self.binding.names

    def _answer(
        self, values: dict[str, dict[str, object]], differ: dict[str, dict[str, object]]
    ) -> None:
        # ``values``, what a new view of the component starts from, follows silently; the
        # page gets what it does not show as a message, not the property: it reaches the
        # page whatever the page shows, and Panel sends it under the document's lock even
        # when the state changed on another widget's tick of its own.
        with param.discard_events(self):
            self.values = values
        if differ:
            # On the session's channel when the page holds it, in order with the frames
            # (a Bokeh message costs a document patch: most of a followed scene's cost).
            channel = getattr(self, "channel", None)
            if channel is None or not channel.send_values({"values": differ}, self.channel_target):
                self._send_msg({"values": differ})

    def take_message(self, msg: Any) -> None:
        """Handle a message from the page (over Bokeh's websocket or the session's own): a
        move (:meth:`ControlBinding.take`) or ``{"share": "link" | "embed"}``, answered with
        the text to copy."""
        if isinstance(msg, dict) and "share" in msg:
            kind = msg["share"]
            if self._share is None or not self.shares or kind not in SHARE_KINDS:
                log.warning("sdpa-sim: refused a share request from a page: %s", repr(msg)[:80])
                return
            self._send_msg({"shared": self._share(kind)})
            return
        self.binding.take(msg)
