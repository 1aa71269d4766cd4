"""The sidebar's widgets, each bound two ways to one parameter of the SimulationState.

Material UI widgets (panel-material-ui) are used because they expose their label as the
accessible name of the slider, switch or button.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
import panel_material_ui as pmui

from app.compat import CheckedPageChanges
from app.controls_spec import (
    D_K_BOUNDS,
    D_K_GRID,
    N_GRID,
    SEED_BOUNDS,
    TEMPERATURE_GRID,
    VIEWS,
    nearest_on_grid,
)
from app.panel_tuning import DesignOnStylesheetChange
from app.presets import preset_options
from app.state import SimulationState
from app.ticks import Later, run_now

IMMEDIATE_CHANGES = ("value", "value_throttled")
"""Widget properties whose browser-side changes skip Panel's 50 ms wait and busy flag."""


def bind(
    widget: pn.widgets.Widget,
    state: SimulationState,
    name: str,
    to_widget: Callable[[object], object] = lambda value: value,
    *,
    later: Later = run_now,
) -> pn.widgets.Widget:
    """Keep ``widget.value`` and ``state.<name>`` in step, both ways, without echo loops.

    ``to_widget`` maps a state value to the widget value that shows it (the nearest slider
    position, say); a widget move is written to the state only if it shows something new,
    so an exact value set elsewhere is not rounded away by its own echo. A state change is
    shown through ``later``: the widget the student did not touch (the exact d_k box under
    the d_k slider, say) can follow after the plots have been sent.

    A widget value comes from the page, so from any client: it goes through
    :meth:`SimulationState.coerce` (clamped into range, or refused), and the widget is put
    back where the state is whenever it shows something else.
    """
    widget.value = to_widget(getattr(state, name))
    # Panel holds every widget change 50 ms before handling it, to batch bursts, and flags
    # the whole process busy while it runs (~3 ms of bookkeeping). A control move should
    # reach the plots at once (bursts still fold while the server is busy), and nothing
    # here shows the busy flag: the page is detached from it (see app.layout).
    widget._priority_changes = [*widget._priority_changes, *IMMEDIATE_CHANGES]
    widget._busy__ignore = [*widget._busy__ignore, *IMMEDIATE_CHANGES]

    shown = True

    def show_state() -> None:
        nonlocal shown
        shown = True
        widget.value = to_widget(getattr(state, name))

    def show_later(event: object = None) -> None:
        nonlocal shown
        if shown:  # one update for all the moves made before it runs
            shown = False
            later(show_state)

    def from_widget(event: object) -> None:
        if to_widget(getattr(state, name)) == widget.value:
            return
        value = state.coerce(name, widget.value)
        if value is not None:
            setattr(state, name, value)
        # Refused, clamped, or equal to the state already (no state event then): Panel
        # does not send a value back to the page while handling its change, so later.
        if to_widget(getattr(state, name)) != widget.value:
            show_later()

    state.param.watch(show_later, name)
    widget.param.watch(from_widget, "value")
    return widget


class GridSlider(CheckedPageChanges, DesignOnStylesheetChange, pmui.DiscreteSlider):
    """A slider over a fixed grid of values whose position is followed as it moves.

    The page reports each move twice, as ``value`` and, for the released position,
    ``value_throttled``. Only ``value`` is followed (and bound to the state), so the second
    report stays in the page: handling it cost the server ~0.8 ms per key press for nothing.
    A position is an index into the grid: anything else (-1, past the end, a fraction, a
    string) is refused rather than mapped, where -1 would have been the last option.
    """

    page_properties = ("value",)

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Only a whole-number index of one of the slider's positions."""
        return type(value) is int and 0 <= value < len(self.options)


class WholeNumberInput(CheckedPageChanges, DesignOnStylesheetChange, pmui.IntInput):
    """Material UI's whole-number box, without Panel's design lookup on each new value.

    Only its value is followed from the page: in particular its bounds only flow from the
    server to the page, so a new bound set inside the app's ``pn.io.hold()`` is not taken,
    once the hold releases it, for a change from the page and handled a second time (~1 ms
    on an n move for the row comparison's query box). Bokeh lets only whole numbers (or
    none, an emptied box) through; :func:`bind` clamps them or puts the box back.
    """


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


def _log_slider(label: str, grid: list, formatter: str) -> GridSlider:
    return GridSlider(label=label, options=grid, formatter=formatter, sizing_mode="stretch_width")


def build_controls(state: SimulationState, later: Later = run_now) -> list[pn.viewable.Viewable]:
    """The widgets of the sidebar, top to bottom, bound to ``state``; ``later`` runs their
    updates from the state (see :func:`bind`)."""
    preset = bind(
        ChoiceSelect(
            label="preset scene",
            options={"(none: set the controls yourself)": "", **preset_options()},
            sizing_mode="stretch_width",
        ),
        state,
        "preset",
        later=later,
    )
    d_k_slider = bind(
        _log_slider("d_k (key dimension)", D_K_GRID, "%d"),
        state,
        "d_k",
        lambda value: nearest_on_grid(value, D_K_GRID),
        later=later,
    )
    d_k_exact = bind(
        WholeNumberInput(
            label="exact d_k",
            format="0",
            start=D_K_BOUNDS[0],
            end=D_K_BOUNDS[1],
            sizing_mode="stretch_width",
            description="Type any whole number from 1 to 1024; the slider moves in log steps.",
        ),
        state,
        "d_k",
        later=later,
    )
    temperature = bind(
        _log_slider("temperature", TEMPERATURE_GRID, "%g"),
        state,
        "temperature",
        lambda value: nearest_on_grid(value, TEMPERATURE_GRID),
        later=later,
    )
    n = bind(
        _log_slider("sequence length n", N_GRID, "%d"),
        state,
        "n",
        lambda value: nearest_on_grid(value, N_GRID),
        later=later,
    )
    scaled = bind(Toggle(label="scale by 1/√d_k"), state, "scaled", later=later)
    view = bind(
        ChoiceButtons(
            label="heatmap view",
            options=list(VIEWS),
            sizing_mode="stretch_width",
        ),
        state,
        "view",
        later=later,
    )
    causal = bind(Toggle(label="causal mask"), state, "causal", later=later)
    seed = bind(
        WholeNumberInput(
            label="seed", start=SEED_BOUNDS[0], end=SEED_BOUNDS[1], sizing_mode="stretch_width"
        ),
        state,
        "seed",
        later=later,
    )
    resample = PageButton(
        label="Resample", icon="casino", variant="outlined", sizing_mode="stretch_width"
    )
    resample.on_click(lambda event: state.resample())
    return [
        preset,
        d_k_slider,
        d_k_exact,
        temperature,
        n,
        scaled,
        causal,
        view,
        pmui.Row(seed, resample, sizing_mode="stretch_width"),
    ]
