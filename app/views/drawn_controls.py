"""The first screen's sliders and switches on the served page, drawn in the browser.

Each is a native range input or switch (keyboard-operable, named by its label) built in the
page from the spec as data (app/controls_spec.py); the session holds the state. A move
reaches the server as a message, checked and coerced like any value from a page
(:meth:`app.state.SimulationState.coerce`); the state's value comes back whenever the
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
from pathlib import Path
from typing import Any, ClassVar

import param
from panel.custom import JSComponent

from app.compat import CheckedPageChanges
from app.controls_spec import CONTROL_BY_NAME, Control, nearest_on_grid
from app.state import SimulationState
from app.views.framed import ChannelReceiver, channel_script

log = logging.getLogger(__name__)

DRAWN_WIDGETS = ("slider", "switch")
"""The widget kinds the first screen's component draws; the others stay Panel widgets there
for now (control_drawing.js draws buttons too: the lesson's assumptions section has them)."""

CONTROL_DRAWING = Path(__file__).with_name("control_drawing.js")
"""The controls' drawing code both components carry."""

CHANNEL_TARGET = "controls"
"""The name the session's channel hands this component's moves to."""

CONTROLS_MIN_WIDTH = 170
"""The narrowest column of the controls' grid, in px (as the page's other control grids)."""

CSS = f"""
:host {{ width: 100%; }}
.sdpa-controls {{
  display: grid;
  align-content: start;
  grid-template-columns: repeat(auto-fill, minmax(min({CONTROLS_MIN_WIDTH}px, 100%), 1fr));
  gap: 4px 8px;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 15px;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87));
}}
.sdpa-control {{
  min-width: 0; padding: 6px 4px 2px;
  display: flex; flex-direction: column; justify-content: flex-end;
}}
.sdpa-control label {{ display: block; line-height: 1.5; }}
.sdpa-control .value {{
  display: inline-block; font-weight: 600; font-variant-numeric: tabular-nums;
}}
.sdpa-control input[type="range"] {{
  width: 100%;
  margin: 8px 0 6px;
  accent-color: var(--mui-palette-primary-main, #1976d2);
  cursor: pointer;
}}
.sdpa-control label.sdpa-switch {{
  display: flex; align-items: center; gap: 10px; cursor: pointer; padding-top: 10px;
}}
.sdpa-switch .track {{
  display: block;
  position: relative; flex: none; width: 34px; height: 14px; margin: 0 6px;
  border-radius: 7px; background: color-mix(in srgb, currentColor 38%, transparent);
}}
.sdpa-switch .thumb {{
  position: absolute; top: -3px; left: -6px; width: 20px; height: 20px; border-radius: 50%;
  background: #fafafa; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.4); transition: left 150ms;
}}
/* Only the drawn switch's input lies over its track: the lesson's worked example has a plain
   .sdpa-switch label whose input must stay in the flow. */
.sdpa-switch .track input {{
  position: absolute; inset: -3px -6px; width: auto; height: auto; margin: 0; opacity: 0;
  cursor: pointer;
}}
.sdpa-switch .track input:checked + .thumb {{
  left: 20px; background: var(--mui-palette-primary-main, #1976d2);
}}
.sdpa-switch .track:has(input:checked) {{
  background: var(--mui-palette-primary-light, #90caf9);
}}
.sdpa-switch .track:has(input:focus-visible) {{
  outline: 2px solid var(--mui-palette-primary-main, #1976d2); outline-offset: 5px;
}}
.sdpa-control input[type="range"]:focus-visible {{
  outline: 2px solid var(--mui-palette-primary-main, #1976d2);
  outline-offset: 2px;
}}
/* A row of its own for a group of buttons: its choices side by side, not wrapped. */
.sdpa-control-buttons {{ grid-column: 1 / -1; }}
.sdpa-buttons-caption {{ line-height: 1.5; }}
.sdpa-buttons {{ display: flex; flex-wrap: wrap; margin: 6px 0 4px; }}
.sdpa-buttons button {{
  flex: 1 1 auto; font: inherit; font-size: 14px; padding: 5px 10px; cursor: pointer;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87)); background: transparent;
  border: 1px solid color-mix(in srgb, currentColor 30%, transparent); margin-left: -1px;
}}
.sdpa-buttons button:first-child {{ border-radius: 4px 0 0 4px; margin-left: 0; }}
.sdpa-buttons button:last-child {{ border-radius: 0 4px 4px 0; }}
.sdpa-buttons button[aria-pressed="true"] {{
  color: var(--sdpa-accent-text, #1565c0);
  background: color-mix(in srgb, var(--mui-palette-primary-main, #1976d2) 14%, transparent);
}}
.sdpa-buttons button:focus-visible {{
  outline: 2px solid var(--mui-palette-primary-main, #1976d2); outline-offset: 1px;
  position: relative;
}}
"""
"""The controls in as many columns of at least :data:`CONTROLS_MIN_WIDTH` px as fit, in the
Material look of the page around them (its colours when Panel Material UI sets them). At
15 px with narrow side padding the longest label, "d_k (key dimension): 1024", stays on one
line in the four columns of an 800 px frame and the two of a 400 px page."""


def _shown(control: Control, value: object) -> str:
    """A value as the slider's label shows it: ``%g`` for a number, a whole number as is."""
    if isinstance(value, bool):
        return str(value)
    return format(value, "g") if control.kind == "number" else str(value)


def control_spec(control: Control) -> dict[str, object]:
    """What the page needs to draw ``control``: its name, label, widget kind, for a slider
    the label of each of its positions, for buttons each choice and its words."""
    spec: dict[str, object] = {
        "name": control.name,
        "label": control.label,
        "widget": control.widget,
    }
    if control.widget == "slider":
        spec["positions"] = [_shown(control, value) for value in control.grid]
    if control.widget == "buttons":
        spec["choices"] = [[value, text] for value, text in control.choices.items()]
    return spec


def drawable(name: str) -> bool:
    """Whether the first screen's component draws the control called ``name``."""
    control = CONTROL_BY_NAME.get(name)
    return control is not None and control.widget in DRAWN_WIDGETS


Answer = Callable[[dict[str, dict[str, object]], dict[str, dict[str, object]]], None]
"""Sends the page the controls' values it does not show: ``(values, differ)``, every
control's value as the page draws it and those of them the page does not show yet (empty:
nothing to send, the values are new all the same)."""


class ControlBinding:
    """The session's side of controls drawn in the browser (control_drawing.js): the
    state's values as the page draws them, and the page's moves checked into the state.

    A slider's position is an index into its grid: the page sends ``{"name", "index"}``, a
    switch or buttons ``{"name", "value"}``. A slider left at the position nearest an exact
    value set elsewhere does not round that value away. Anything else is refused in one log
    line (naming ``owner``) and the page is put back where the state is. ``answer`` sends
    the page what it does not show: an exact value kept, a refusal, a change from elsewhere
    (a preset, the exact box, a link); a plain move gets no answer that could pull the
    slider back from under the student's hand.
    """

    def __init__(
        self, state: SimulationState, names: Iterable[str], answer: Answer, owner: str
    ) -> None:
        self.state = state
        self.owner = owner
        """The component the controls are drawn by, as the log names it."""
        self._controls = {name: CONTROL_BY_NAME[name] for name in names}
        self._answer = answer
        self.values = self._values()
        """By control name: the state's value as the page draws it (:meth:`_values`)."""
        self._on_page = dict(self.values)
        """What the page shows, by control name, as far as the session knows."""
        if self._controls:
            state.param.watch(self._show, list(self._controls))

    @property
    def names(self) -> tuple[str, ...]:
        """The controls bound, in order."""
        return tuple(self._controls)

    @property
    def specs(self) -> list[dict[str, object]]:
        """What the page draws the controls from (:func:`control_spec` of each), in order."""
        return [control_spec(control) for control in self._controls.values()]

    def _values(self) -> dict[str, dict[str, object]]:
        values: dict[str, dict[str, object]] = {}
        for name, control in self._controls.items():
            value = getattr(self.state, name)
            if control.widget == "slider":
                position = control.grid.index(nearest_on_grid(value, control.grid))
                values[name] = {"index": position, "text": _shown(control, value)}
            elif control.widget == "buttons":
                values[name] = {"value": str(value)}
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
        "value"}`` for a switch or buttons."""
        value = self._value_of(msg)
        if value is None:
            log.warning(
                "sdpa-sim: refused a change from a page to %s: %s", self.owner, repr(msg)[:80]
            )
            self._put_back()
            return
        name, wanted = value
        coerced = self.state.coerce(name, wanted)
        if coerced is None:
            self._put_back()
            return
        # The page already shows the position it sent and that position's value.
        control = self._controls[name]
        if control.widget == "slider":
            index = msg["index"]
            self._on_page[name] = {"index": index, "text": _shown(control, control.grid[index])}
        elif control.widget == "buttons":
            self._on_page[name] = {"value": str(wanted)}
        else:
            self._on_page[name] = {"value": bool(wanted)}
        unchanged = getattr(self.state, name) == coerced
        self.state.set_controls(**{name: coerced})
        if getattr(self.state, name) != coerced:
            self._put_back()
        elif unchanged:
            # No watcher ran: the state already held the value (an exact value kept at its
            # nearest position), which the page may not show.
            self._show()

    def _value_of(self, msg: Any) -> tuple[str, object] | None:
        """The control and value a page's message asks for, or None when it asks for
        nothing bound here."""
        if not isinstance(msg, dict) or not isinstance(msg.get("name"), str):
            return None
        control = self._controls.get(msg["name"])
        if control is None:
            return None
        if control.widget == "switch":
            value = msg.get("value")
            return (control.name, value) if isinstance(value, bool) else None
        if control.widget == "buttons":
            value = msg.get("value")
            return (
                (control.name, value)
                if isinstance(value, str) and value in control.choices
                else None
            )
        index = msg.get("index")
        if type(index) is not int or not 0 <= index < len(control.grid):
            return None
        current = getattr(self.state, control.name)
        if control.grid[index] == nearest_on_grid(current, control.grid):
            # Already where the state is: an exact value set elsewhere stays.
            return (control.name, current)
        return (control.name, control.grid[index])


class DrawnControls(CheckedPageChanges, ChannelReceiver, JSComponent):
    """Sliders and switches of ``names`` (those of them it can draw), bound to ``state`` by
    a :class:`ControlBinding`; the page's moves come as messages."""

    page_properties = ()

    controls = param.List(default=[], doc="The controls drawn, in order (control_spec of each).")
    values = param.Dict(
        default={},
        doc="By control name: the state's value as shown (`text`), the slider position "
        "nearest it (`index`) or the switch's state (`value`).",
    )
    channel_key = param.String(
        default="",
        doc="The key of the session's own websocket (app/channel.py), which moves then go "
        "on while it is open; empty: moves go as the component's messages.",
    )
    channel_target = param.String(
        default=CHANNEL_TARGET,
        constant=True,
        doc="The name the session's channel hands this component's moves to.",
    )

    _esm = "\n".join(
        [
            channel_script(),
            CONTROL_DRAWING.read_text(encoding="utf-8"),
            Path(__file__).with_suffix(".js").read_text(encoding="utf-8"),
        ]
    )
    _stylesheets: ClassVar[list[str]] = [CSS]

    def __init__(self, state: SimulationState, names: Iterable[str], **params: Any) -> None:
        drawn = [name for name in names if drawable(name)]
        self.binding = ControlBinding(state, drawn, self._answer, type(self).__name__)
        """The state's side of the controls drawn."""
        super().__init__(controls=self.binding.specs, values=self.binding.values, **params)

    @property
    def state(self) -> SimulationState:
        """The state the controls are bound to."""
        return self.binding.state

    @property
    def names(self) -> tuple[str, ...]:
        """The controls drawn, in order."""
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
            self._send_msg({"values": differ})

    def take_message(self, msg: Any) -> None:
        """Handle a move from the page (over Bokeh's websocket or the session's own):
        ``{"name", "index"}`` for a slider, ``{"name", "value"}`` for a switch."""
        self.binding.take(msg)
