"""The page's widgets as data: their names in the order the page shows them, what the page
needs to draw each (:func:`widget_spec`), and the controls' styles.

Both pages draw them with one client-side code (``assets/control_drawing.js``) from these
specs; the served page's session binds them to its state
(:class:`app.served.components.controls.DrawnControls`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.simulation.presets import preset_options
from app.simulation.spec import (
    NO_PRESET_LABEL,
    PRESET_LABEL,
    SPEC,
    Control,
    SimulationSpec,
)


def widget_names(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """Every widget the served page of ``spec`` offers, top to bottom: the preset selector,
    each control's widget (a slider's exact box as ``<name>_exact``) and ``resample``."""
    names = ["preset"]
    for control in spec.controls:
        if control.widget != "none":
            names.append(control.name)
        if control.exact_label:
            names.append(f"{control.name}_exact")
    return (*names, "resample")


SHARE_KINDS = ("link", "embed")
"""What the share part copies: a link to the scene, or the iframe that embeds it."""

CONTROLS_MIN_WIDTH = 170
"""The narrowest column of the controls' grid, in px (as the page's other control grids)."""

CSS = f"""
:host {{ width: 100%; }}
.sdpa-controls, .sdpa-share {{
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 15px;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87));
}}
.sdpa-controls {{
  display: grid;
  align-content: start;
  grid-template-columns: repeat(auto-fill, minmax(min({CONTROLS_MIN_WIDTH}px, 100%), 1fr));
  gap: 4px 8px;
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
.sdpa-field label {{ display: block; line-height: 1.5; }}
.sdpa-field input, .sdpa-share textarea {{
  box-sizing: border-box; width: 100%; margin: 4px 0 6px; padding: 7px 8px;
  font: inherit; font-size: 15px; color: inherit;
  background: var(--mui-palette-background-paper, transparent);
  border: 1px solid color-mix(in srgb, currentColor 38%, transparent); border-radius: 4px;
}}
.sdpa-help {{ font-size: 12px; line-height: 1.4; opacity: 0.8; }}
.sdpa-action {{ justify-content: flex-end; }}
.sdpa-action button, .sdpa-share-buttons button {{
  font: inherit; font-size: 14px; font-weight: 500; padding: 6px 12px; margin: 4px 0 6px;
  cursor: pointer; border-radius: 4px; background: transparent;
  color: var(--sdpa-accent-text, #1565c0);
  border: 1px solid var(--sdpa-accent-border, #90caf9);
}}
.sdpa-action button:hover, .sdpa-share-buttons button:hover {{
  background: var(--sdpa-accent-hover, #e3f2fd);
}}
.sdpa-share {{ padding: 2px 4px 4px; }}
.sdpa-share-buttons {{ display: flex; flex-wrap: wrap; gap: 8px; }}
.sdpa-share label {{ display: block; line-height: 1.5; }}
.sdpa-share-status {{ font-size: 13px; line-height: 1.4; min-height: 1.4em; margin: 2px 0; }}
.sdpa-share textarea {{ resize: vertical; }}
.sdpa-field input:focus-visible,
.sdpa-share textarea:focus-visible, .sdpa-action button:focus-visible,
.sdpa-share-buttons button:focus-visible,
.sdpa-control input[type="range"]:focus-visible {{
  outline: 2px solid var(--mui-palette-primary-main, #1976d2);
  outline-offset: 2px;
}}
/* A row of its own for a group of buttons: its choices side by side, not wrapped. */
.sdpa-control-buttons {{ grid-column: 1 / -1; }}
.sdpa-buttons-caption {{ line-height: 1.5; }}
/* Separate buttons with a gap: in a narrow column a choice's buttons wrap onto a second
   line (the heatmap view's three need ~340 px) and each keeps its whole outline. */
.sdpa-buttons {{ display: flex; flex-wrap: wrap; gap: 4px; margin: 6px 0 4px; }}
.sdpa-buttons button {{
  flex: 1 1 auto; font: inherit; font-size: 14px; padding: 5px 10px; cursor: pointer;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87)); background: transparent;
  border: 1px solid color-mix(in srgb, currentColor 30%, transparent); border-radius: 4px;
}}
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


def shown_value(control: Control, value: object) -> str:
    """A value as the slider's label shows it: ``%g`` for a number, a whole number as is."""
    if isinstance(value, bool):
        return str(value)
    return format(value, "g") if control.kind == "number" else str(value)


def control_spec(control: Control, grid: Sequence[float] | None = None) -> dict[str, object]:
    """What the page needs to draw ``control``: its name, label, widget kind, for a slider
    the label of each of its positions (on ``grid``, the spec's unless given: the offline
    file's d_k steps are its own), for buttons each choice and its words, for a
    whole-number box its bounds (the page's ``number``)."""
    spec: dict[str, object] = {
        "name": control.name,
        "label": control.label,
        "widget": "number" if control.widget == "whole_number" else control.widget,
    }
    if control.widget == "slider":
        spec["positions"] = [shown_value(control, value) for value in grid or control.grid]
    if control.widget == "buttons":
        spec["choices"] = [[value, text] for value, text in control.choices.items()]
    if control.widget == "whole_number" and control.bounds is not None:
        spec["min"], spec["max"] = (int(bound) for bound in control.bounds)
    return spec


PRESET = "preset"
"""The name of the preset scenes' buttons (a choice applies a whole scene)."""

RESAMPLE = "resample"
"""The name of the Resample button (the next seed)."""

RESAMPLE_LABEL = "Resample"
"""The Resample button's words and accessible name."""

EXACT_SUFFIX = "_exact"
"""A slider's exact box is called its control's name and this (``d_k_exact``)."""


def preset_spec(labels: Mapping[str, str]) -> dict[str, object]:
    """What the page needs to draw the preset scenes' buttons: "none" first, then each
    scene's label by its key (``labels``: the served page's scenes, or the offline file's
    as it words them)."""
    return {
        "name": PRESET,
        "label": PRESET_LABEL,
        "widget": "preset",
        "choices": [["", NO_PRESET_LABEL], *([key, label] for key, label in labels.items())],
    }


def widget_spec(name: str, spec: SimulationSpec = SPEC) -> dict[str, object]:
    """What the page needs to draw the widget called ``name`` (one of
    :func:`app.page.controls.widget_names` of ``spec``): a control's (:func:`control_spec`),
    the preset scenes' choices (drawn as buttons, each applying a whole scene), a slider's
    exact box's bounds and help, or the Resample button's words.

    Raises:
        ValueError: if no widget is called ``name``.
    """
    if name == PRESET:
        return preset_spec({key: label for label, key in preset_options().items()})
    if name == RESAMPLE:
        return {"name": name, "label": RESAMPLE_LABEL, "widget": "action"}
    control = spec.by_name.get(name.removesuffix(EXACT_SUFFIX))
    exact = name.endswith(EXACT_SUFFIX)
    if control is None or control.widget == "none" or (exact and not control.exact_label):
        raise ValueError(f"no widget is called {name!r}")
    if exact:
        low, high = control.bounds or (0, 0)
        return {
            "name": name,
            "label": control.exact_label,
            "widget": "number",
            "min": int(low),
            "max": int(high),
            "help": control.help,
        }
    return control_spec(control)


def drawable(name: str, spec: SimulationSpec = SPEC) -> bool:
    """Whether the page's components can draw the widget called ``name`` (of ``spec``)."""
    try:
        widget_spec(name, spec)
    except ValueError:
        return False
    return True


WHOLE_ROW_WIDGETS = ("preset", "buttons")
"""The widget kinds that take a whole row of the controls' grid (their CSS says so too)."""


def whole_rows_first(names: Iterable[str], spec: SimulationSpec = SPEC) -> list[str]:
    """``names`` with the widgets that take a whole row first, the others after them in
    their order: those then pair up in a grid of two columns instead of leaving a hole
    beside one that a whole-row widget pushed down."""
    names = list(names)
    return sorted(
        names, key=lambda name: widget_spec(name, spec)["widget"] not in WHOLE_ROW_WIDGETS
    )


def parameter_shown_by(name: str) -> str | None:
    """The state parameter the widget ``name`` shows (None for an action's button)."""
    if name == RESAMPLE:
        return None
    return name.removesuffix(EXACT_SUFFIX)
