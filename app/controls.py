"""The served widgets of the controls, built from app/controls_spec.py and bound to the state.

Material UI widgets (panel-material-ui) are used because they expose their label as the
accessible name of the slider, switch or button.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import panel as pn
import panel_material_ui as pmui

from app.compat import CheckedPageChanges, respond_at_once
from app.controls_spec import (
    CONTROL_BY_NAME,
    CONTROLS,
    NO_PRESET_LABEL,
    PRESET_LABEL,
    Control,
    nearest_on_grid,
)
from app.presets import preset_options
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


class GridSlider(CheckedPageChanges, pmui.DiscreteSlider):
    """A slider over a fixed grid of values whose position is followed as it moves.

    The page reports each move twice, as ``value`` and, for the released position,
    ``value_throttled``. Only ``value`` is followed (and bound to the state), so the second
    report stays in the page, where handling it would cost the server work on every key
    press for nothing.
    A position is an index into the grid: anything else (-1, past the end, a fraction, a
    string) is refused rather than mapped, where -1 would have been the last option.
    """

    page_properties = ("value",)

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Only a whole-number index of one of the slider's positions."""
        return type(value) is int and 0 <= value < len(self.options)


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


class Toggle(CheckedPageChanges, pmui.Switch):
    """Material UI's switch, following only its value from the page (Bokeh lets only
    booleans through)."""


class _ChoiceOfLabels(CheckedPageChanges):
    """A choice widget's page sends the label of the option chosen: only a label it lists
    is taken. Panel would map an empty one to the first option, silently."""

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Only one of the widget's option labels."""
        return isinstance(value, str) and value in self.labels  # type: ignore[attr-defined]


class ChoiceSelect(_ChoiceOfLabels, pmui.Select):
    """Material UI's select, following only its value (an option's label) from the page."""


class ChoiceButtons(_ChoiceOfLabels, pmui.RadioButtonGroup):
    """Material UI's radio button group, following only its value (an option's label)
    from the page."""


class PageButton(CheckedPageChanges, pmui.Button):
    """Material UI's button, following no property from the page: a press reaches the
    server as a click event, and ``clicks`` or ``value`` sent as properties (-1, text)
    would only have raised in param's validation."""

    page_properties = ()


def control_widget(control: Control) -> pn.widgets.Widget:
    """The served widget of ``control``, as its spec entry describes it."""
    if control.widget == "slider":
        formatter = "%g" if control.kind == "number" else "%d"
        # The label shows the value; Material's value tooltip would cover it while the
        # slider moves.
        return GridSlider(
            label=control.label,
            options=list(control.grid),
            formatter=formatter,
            tooltips=False,
            sizing_mode="stretch_width",
        )
    if control.widget == "switch":
        return Toggle(label=control.label)
    if control.widget == "buttons":
        return ChoiceButtons(
            label=control.label, options=list(control.choices), sizing_mode="stretch_width"
        )
    if control.widget == "whole_number":
        return WholeNumberInput(
            label=control.label,
            start=control.bounds[0],
            end=control.bounds[1],
            sizing_mode="stretch_width",
        )
    raise ValueError(f"control {control.name!r} has no widget of its own")


def exact_input(control: Control) -> WholeNumberInput:
    """The box under ``control``'s slider that takes any whole value within its bounds."""
    return WholeNumberInput(
        label=control.exact_label,
        format="0",
        start=control.bounds[0],
        end=control.bounds[1],
        sizing_mode="stretch_width",
        description=control.help or None,
    )


CHOSEN_LABEL_WRAPS_CSS = """
.MuiInputBase-root .MuiSelect-select.MuiInputBase-input {
  white-space: normal;
  overflow-wrap: anywhere;
  text-overflow: clip;
}
"""
"""The chosen option's label wraps onto a second line in a narrow column instead of ending
in an ellipsis (Material's select keeps it on one line): the preset scenes' labels run to 41
characters. Three classes outweigh Material's two-class rule."""

PRESET_STYLES = {"grid-column": "1 / -1"}
"""The preset selector takes a whole row of the controls' grid: its labels are the longest."""


def preset_selector(state: SimulationState) -> ChoiceSelect:
    """The preset scene selector, bound to ``state``: a choice applies the whole scene."""
    preset = ChoiceSelect(
        label=PRESET_LABEL,
        options={NO_PRESET_LABEL: "", **preset_options()},
        sizing_mode="stretch_width",
        stylesheets=[CHOSEN_LABEL_WRAPS_CSS],
        styles=PRESET_STYLES,
    )
    preset.value = state.preset
    respond_at_once(preset)
    state.param.watch(lambda event: setattr(preset, "value", event.new), "preset")
    preset.param.watch(lambda event: state.choose_preset(event.new), "value")
    return preset


def resample_button(state: SimulationState) -> PageButton:
    """The button that draws new Q and K (the next seed)."""
    resample = PageButton(
        label="Resample", icon="casino", variant="outlined", sizing_mode="stretch_width"
    )
    resample.on_click(lambda event: state.resample())
    return resample


def widget_names() -> tuple[str, ...]:
    """Every widget :func:`build_controls` can build, top to bottom: the preset selector,
    each control's widget (a slider's exact box as ``<name>_exact``) and ``resample``."""
    names = ["preset"]
    for control in CONTROLS:
        if control.widget != "none":
            names.append(control.name)
        if control.exact_label:
            names.append(f"{control.name}_exact")
    return (*names, "resample")


def build_controls(
    state: SimulationState, names: Iterable[str] | None = None
) -> dict[str, pn.viewable.Viewable]:
    """The widgets ``names`` (default: every one of :func:`widget_names`), bound to
    ``state``, by name."""
    widgets: dict[str, pn.viewable.Viewable] = {}
    for name in widget_names() if names is None else names:
        control = CONTROL_BY_NAME.get(name.removesuffix("_exact"))
        if name == "preset":
            widgets[name] = preset_selector(state)
        elif name == "resample":
            widgets[name] = resample_button(state)
        elif control is None:
            raise ValueError(f"no widget is called {name!r}; choose from {widget_names()}")
        elif name.endswith("_exact"):
            widgets[name] = exact_input(control)
            ControlBinding(widgets[name], state, control.name)
        else:
            widgets[name] = control_widget(control)
            if control.grid:
                to_widget = partial(nearest_on_grid, grid=control.grid)
                ControlBinding(widgets[name], state, control.name, to_widget)
            else:
                ControlBinding(widgets[name], state, control.name)
    return widgets
