"""Panel widgets bound to the state, and the names of the page's widgets.

The served page draws its controls in the browser (app/views/drawn_controls.py); the Panel
binding and whole-number box here serve the views the offline page's figures are built
from (app/views/row_compare.py). :func:`widget_names` lists every widget the page offers.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
import panel_material_ui as pmui

from app.compat import CheckedPageChanges, respond_at_once
from app.controls_spec import (
    CONTROLS,
)
from app.state import SimulationState
from app.views.aria import STEPPER_THEME


class ControlBinding:
    """Shows one control of the state in a widget, and takes the widget's moves to the state.

    The state → widget direction always runs: the widget shows ``to_widget(value)`` (the
    nearest slider position, say). A widget move reaches the state only if the widget
    then shows something the state does not: a slider left at the position nearest an
    exact value set elsewhere does not round that value away. A widget value comes from
    the page, so from any client: it goes through :meth:`SimulationState.coerce` (clamped
    or refused), and the widget is put back where the state is when it shows otherwise.
    """

    def __init__(
        self,
        widget: pn.widgets.Widget,
        state: SimulationState,
        name: str,
        to_widget: Callable[[object], object] = lambda value: value,
    ) -> None:
        self.widget, self.state, self.name, self.to_widget = widget, state, name, to_widget
        self.show()
        respond_at_once(widget)
        state.param.watch(self.show, name)
        widget.param.watch(self.take, "value")

    def show(self, *events: object) -> None:
        """Put the widget where the state is."""
        self.widget.value = self.to_widget(getattr(self.state, self.name))

    def take(self, event: object) -> None:
        """A widget move: set the state to it, clamped, unless the widget shows the state."""
        if self.to_widget(getattr(self.state, self.name)) == self.widget.value:
            return
        value = self.state.coerce(self.name, self.widget.value)
        if value is not None:
            self.state.set_controls(**{self.name: value})
        if self.to_widget(getattr(self.state, self.name)) != self.widget.value:
            # Refused or clamped: Panel sends no value back to the page while it handles
            # the page's change, so the widget is put back on the next tick.
            pn.state.execute(self.show, schedule=True)


class WholeNumberInput(CheckedPageChanges, pmui.IntInput):
    """Material UI's whole-number box.

    Only its value is followed from the page: in particular its bounds only flow from the
    server to the page, so a new bound set inside the app's ``pn.io.hold()`` is not taken,
    once the hold releases it, for a change from the page and handled a second time. Bokeh
    lets only whole numbers (or none, an emptied box) through; :class:`ControlBinding`
    clamps them or puts the box back.

    Its −/+ buttons are left to the mouse (:data:`app.views.aria.STEPPER_THEME`): the
    box's arrow keys do the same for the keyboard and assistive technology.
    """

    def __init__(self, **params: object) -> None:
        params.setdefault("theme_config", STEPPER_THEME)
        super().__init__(**params)


def widget_names() -> tuple[str, ...]:
    """Every widget the served page offers, top to bottom: the preset selector, each
    control's widget (a slider's exact box as ``<name>_exact``) and ``resample``."""
    names = ["preset"]
    for control in CONTROLS:
        if control.widget != "none":
            names.append(control.name)
        if control.exact_label:
            names.append(f"{control.name}_exact")
    return (*names, "resample")
