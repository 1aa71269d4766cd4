"""The page's controls as Bokeh widgets, each reporting its changes to the page's script."""

from __future__ import annotations

import json

from bokeh.layouts import column
from bokeh.models import (
    CheckboxGroup,
    Column,
    CustomJS,
    CustomJSTickFormatter,
    Div,
    RadioButtonGroup,
    Slider,
    Widget,
)

from app.controls_spec import TEMPERATURE_GRID, VIEWS, nearest_on_grid
from app.state import SimulationState

SLIDER_LABELS = {
    "d_k": "d_k (key dimension)",
    "temperature": "temperature",
    "n": "sequence length n",
}
"""Slider titles, also the accessible names of their handles."""


def _on_change(name: str) -> CustomJS:
    return CustomJS(code=f"SdpaExport.onWidget({json.dumps(name)}, cb_obj);")


def _slider(name: str, grid: list, value: float) -> Slider:
    # The slider moves over grid positions (log steps); its label shows the value there,
    # or the exact value a link set when the slider sits at its nearest position.
    slider = Slider(
        start=0,
        end=len(grid) - 1,
        step=1,
        value=grid.index(nearest_on_grid(value, grid)),
        title=SLIDER_LABELS[name],
        format=CustomJSTickFormatter(
            code=f"return SdpaExport.sliderLabel({json.dumps(name)}, tick);"
        ),
        sizing_mode="stretch_width",
        name=f"{name}_slider",
    )
    slider.js_on_change("value", _on_change(name))
    return slider


def _toggle(label: str, active: bool, name: str) -> CheckboxGroup:
    # A one-box CheckboxGroup: unlike Bokeh's Checkbox, it wraps the box in its <label>,
    # which gives the box an accessible name.
    toggle = CheckboxGroup(labels=[label], active=[0] if active else [], name=name)
    toggle.js_on_change("active", _on_change(name))
    return toggle


def build_widgets(
    state: SimulationState, d_values: list[int], n_values: list[int]
) -> dict[str, Widget]:
    """The controls, set to ``state``, by the names controller.js uses."""
    view_buttons = RadioButtonGroup(
        labels=list(VIEWS.values()),
        active=list(VIEWS).index(state.view),
        orientation="vertical",
        sizing_mode="stretch_width",
        name="view",
    )
    view_buttons.js_on_change("active", _on_change("view"))
    return {
        "d_k_slider": _slider("d_k", d_values, state.d_k),
        "temperature_slider": _slider("temperature", TEMPERATURE_GRID, state.temperature),
        "n_slider": _slider("n", n_values, state.n),
        "scaled_toggle": _toggle("scale by 1/√d_k", state.scaled, "scaled"),
        "causal_toggle": _toggle("causal mask", state.causal, "causal"),
        "view_buttons": view_buttons,
    }


def controls_column(widgets: dict[str, Widget]) -> Column:
    """The controls, top to bottom, as the page's "controls" root."""
    return column(
        widgets["d_k_slider"],
        widgets["temperature_slider"],
        widgets["n_slider"],
        widgets["scaled_toggle"],
        widgets["causal_toggle"],
        Div(text="heatmap view", styles={"font-size": "13px"}),
        widgets["view_buttons"],
        sizing_mode="stretch_width",
        name="controls",
    )
