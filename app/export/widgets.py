"""The page's controls as Bokeh widgets, each built from its app/controls_spec.py entry and
reporting its changes to the page's script.

A control's spec entry says which widget it gets (``slider``, ``switch`` or ``buttons``),
its label and its slider grid or choices; the page offers every control marked
``offline``. Nothing here names a control.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import quote

from bokeh.layouts import column
from bokeh.models import (
    CheckboxGroup,
    Column,
    CustomJS,
    CustomJSTickFormatter,
    Div,
    RadioButtonGroup,
    Select,
    Slider,
    Widget,
)

from app.controls_spec import CONTROLS, NO_PRESET_LABEL, PRESET_LABEL, Control, nearest_on_grid
from app.presets import Preset
from app.views.system_theme import DARK_PAGE

OFFLINE_CONTROLS: tuple[Control, ...] = tuple(control for control in CONTROLS if control.offline)
"""The controls the exported page offers, in the spec's order."""

CAPTION_STYLES = {"font-size": "13px"}
"""Style of the label above a widget that shows none of its own (a button group)."""


_SELECT_ARROW = quote(
    '<svg version="1.1" viewBox="0 0 25 20" xmlns="http://www.w3.org/2000/svg">'
    f'<path d="M 0,0 25,0 12.5,20 Z" fill="{DARK_PAGE["text"]}" /></svg>'
)

DARK_WIDGET_CSS = f"""
@media (prefers-color-scheme: dark) {{
  :host {{
    --color: var(--sdpa-text);
    --background-color: var(--sdpa-paper);
    --surface-background-color: var(--sdpa-background);
    --hover-color: var(--sdpa-accent-hover);
    --border-color: var(--sdpa-border);
    --divider-color: var(--sdpa-border);
    --disabled-color: var(--sdpa-muted-text);
    --placeholder-color: var(--sdpa-muted-text);
    --default: var(--sdpa-paper);
    --default-border: var(--sdpa-border);
    --default-hover: var(--sdpa-accent-hover);
    --default-hover-border: var(--sdpa-accent-border);
    --default-active: var(--sdpa-accent-background);
    --default-active-border: var(--sdpa-accent-border);
    color: var(--sdpa-text);
  }}
  .bk-btn-default.bk-active {{ color: var(--sdpa-accent-text); }}
  select.bk-input {{ color: var(--sdpa-text);
    background-image: url('data:image/svg+xml;utf8,{_SELECT_ARROW}'); }}
  .noUi-target {{ background: var(--sdpa-background); border-color: var(--sdpa-border);
    box-shadow: none; }}
  .noUi-handle {{ background: var(--sdpa-paper); border-color: var(--sdpa-border);
    box-shadow: none; }}
  .noUi-handle:before, .noUi-handle:after {{ background: var(--sdpa-border); }}
  /* BokehJS sets the bar's colour (the model's bar_color, light grey) on the element. */
  .noUi-connect {{ background: var(--sdpa-accent-border) !important; }}
}}
"""
"""The file's Bokeh widgets in the dark theme while the system prefers dark, as the rest
of the file (page.css): Bokeh keeps its light colours in custom properties on each widget's
shadow host, so each widget carries this sheet; the colours are the page's --sdpa-*
properties (app/views/system_theme.py), which inherit into the shadow root, and the select's
arrow is drawn in the dark theme's text colour."""


def _on_change(name: str) -> CustomJS:
    return CustomJS(code=f"SdpaExport.onWidget({json.dumps(name)}, cb_obj);")


def _slider(control: Control, value: object, grid: Sequence[float]) -> Slider:
    # The slider moves over grid positions (log steps); its label shows the value there,
    # or the exact value a link set when the slider sits at its nearest position. The label
    # says the value, so no tooltip: noUiSlider's sits over the label while it moves.
    slider = Slider(
        start=0,
        end=len(grid) - 1,
        step=1,
        value=list(grid).index(nearest_on_grid(value, grid)),
        title=control.label,
        format=CustomJSTickFormatter(
            code=f"return SdpaExport.sliderLabel({json.dumps(control.name)}, tick);"
        ),
        tooltips=False,
        sizing_mode="stretch_width",
        name=control.name,
        stylesheets=[DARK_WIDGET_CSS],
    )
    slider.js_on_change("value", _on_change(control.name))
    return slider


def _switch(control: Control, value: object, grid: Sequence[float]) -> CheckboxGroup:
    # A one-box CheckboxGroup: unlike Bokeh's Checkbox, it wraps the box in its <label>,
    # which gives the box an accessible name.
    switch = CheckboxGroup(
        labels=[control.label],
        active=[0] if value else [],
        name=control.name,
        stylesheets=[DARK_WIDGET_CSS],
    )
    switch.js_on_change("active", _on_change(control.name))
    return switch


def _buttons(control: Control, value: object, grid: Sequence[float]) -> RadioButtonGroup:
    # One button per choice, showing the choice's words; the caption above is the label.
    buttons = RadioButtonGroup(
        labels=list(control.choices.values()),
        active=list(control.choices).index(value),
        orientation="vertical",
        sizing_mode="stretch_width",
        name=control.name,
        stylesheets=[DARK_WIDGET_CSS],
    )
    buttons.js_on_change("active", _on_change(control.name))
    return buttons


BUILDERS: Mapping[str, Callable[[Control, object, Sequence[float]], Widget]] = {
    "slider": _slider,
    "switch": _switch,
    "buttons": _buttons,
}
"""Widget kind (``Control.widget``) → the function that builds it (control, value, grid)."""

CAPTIONED = frozenset({"buttons"})
"""Widget kinds whose Bokeh model shows no label: the control's label goes above them."""


def build_widgets(
    values: Mapping[str, object], grids: Mapping[str, Sequence[float]]
) -> dict[str, Widget]:
    """Each offline control's widget, set to ``values[name]``, by control name (also the
    Bokeh model's name). A slider moves over ``grids[name]`` if given, else its spec grid."""
    return {
        control.name: BUILDERS[control.widget](
            control, values[control.name], grids.get(control.name, control.grid)
        )
        for control in OFFLINE_CONTROLS
    }


FIRST_SCREEN = tuple(control.name for control in OFFLINE_CONTROLS if control.first_screen)
"""The offline controls on the first screen, beside or above the plots (spec order)."""

MORE = tuple(
    control.name
    for control in OFFLINE_CONTROLS
    if not control.first_screen and not control.lesson_section
)
"""The offline controls under "More controls" (spec order)."""


def section_controls(section: str) -> tuple[str, ...]:
    """The offline controls a lesson section offers (``Control.lesson_section``), in spec
    order: the page shows them in that section, as the served page does."""
    return tuple(control.name for control in OFFLINE_CONTROLS if control.lesson_section == section)


def root_name(name: str) -> str:
    """The name of the Bokeh root that holds control ``name``'s widget (and caption)."""
    return f"control_{name}"


def control_roots(widgets: Mapping[str, Widget]) -> dict[str, Column]:
    """Each control's widget in a root of its own, by control name, a caption above those
    that show no label: the page places each root in its grid cell (first screen or "More
    controls", or where a ``?controls=`` link puts it)."""
    roots: dict[str, Column] = {}
    for control in OFFLINE_CONTROLS:
        items: list[Widget | Div] = []
        if control.widget in CAPTIONED:
            items.append(Div(text=control.label, render_as_text=True, styles=CAPTION_STYLES))
        items.append(widgets[control.name])
        roots[control.name] = column(
            *items, sizing_mode="stretch_width", name=root_name(control.name)
        )
    return roots


PRESET = "preset"
"""The preset selector's cell name: what ``?controls=`` calls it (app.controls_spec's
SHOWABLE_CONTROLS)."""


def preset_root(preset: str, presets: Mapping[str, Preset]) -> Column:
    """The preset scene selector, as the served one (its label, "none" first, then each
    scene's label as this page shows ``presets``), showing ``preset``; a choice applies the
    scene (controller.js)."""
    select = Select(
        title=PRESET_LABEL,
        options=[("", NO_PRESET_LABEL), *((key, scene.label) for key, scene in presets.items())],
        value=preset,
        sizing_mode="stretch_width",
        name="preset_select",
        stylesheets=[DARK_WIDGET_CSS],
    )
    select.js_on_change("value", CustomJS(code="SdpaExport.onPreset(cb_obj);"))
    return column(select, sizing_mode="stretch_width", name=root_name(PRESET))
