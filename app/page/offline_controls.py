"""The page's controls as data: each offline control's drawing spec (the served page's,
app/served/components/controls.py), which the page's script draws with the served page's own
drawing code (app/page/assets/control_drawing.js).

A control's spec entry says which widget it gets (``slider``, ``switch`` or ``buttons``),
its label and its slider grid or choices; the page offers every control marked
``offline``, each slider on the page's own steps. Nothing here names a control: each
function reads a spec (the app's, :data:`app.simulation.spec.SPEC`, unless given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.page.controls import PRESET, control_spec, preset_spec
from app.simulation.presets import Preset
from app.simulation.spec import SPEC, Control, SimulationSpec


def offline_controls(spec: SimulationSpec = SPEC) -> tuple[Control, ...]:
    """The controls of ``spec`` the exported page offers, in the spec's order."""
    return tuple(control for control in spec.controls if control.offline)


def first_screen(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The offline controls on the first screen, beside or above the plots (spec order)."""
    return tuple(control.name for control in offline_controls(spec) if control.first_screen)


def under_more(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The offline controls under "More controls" (spec order): neither on the first
    screen nor offered by a lesson section."""
    return tuple(
        control.name
        for control in offline_controls(spec)
        if not control.first_screen and not control.lesson_section
    )


OFFLINE_CONTROLS: tuple[Control, ...] = offline_controls(SPEC)
"""The app's controls the exported page offers, in the spec's order."""


def section_controls(section: str, spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The offline controls a lesson section offers (``Control.lesson_section``), in spec
    order: the page shows them in that section, as the served page does."""
    return tuple(name for name in spec.in_section(section) if spec.by_name[name].offline)


def widget_specs(
    grids: Mapping[str, Sequence[float]],
    presets: Mapping[str, Preset],
    spec: SimulationSpec = SPEC,
) -> dict[str, dict[str, object]]:
    """What the page draws each of its widgets from, by name: the preset scenes' buttons
    (``presets`` as the page words them) and each offline control of ``spec``, a slider
    over ``grids[name]`` if given, else its spec grid."""
    return {
        PRESET: preset_spec({key: scene.label for key, scene in presets.items()}),
        **{
            control.name: control_spec(control, grids.get(control.name))
            for control in offline_controls(spec)
        },
    }
