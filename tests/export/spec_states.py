"""States for the Python↔JavaScript parity tests, generated from a spec.

Each control the offline kernel mirrors (:attr:`app.simulation.spec.Control.mirror`) is
set, alone, to each of its extremes (a number's smallest and largest slider position in
the file, or its bounds without a grid; both values of a switch; every choice); then a
bounded number of combinations sets every such control at once to one of its extremes or
its default, drawn with a fixed seed. Served-only controls keep their defaults (the file
keeps the exported values). A new mirrored control is thereby compared with no edit here.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from app.page.kernel_data import ExportData, slider_grids
from app.simulation.spec import SPEC, Control, SimulationSpec

COMBINATIONS = 16
"""How many states set every mirrored control at once (bounded: the pairs of extremes of a
dozen controls would be hundreds of states)."""

COMBINATION_SEED = 46
"""The draw of the combinations: fixed, so each run compares the same states."""


def extremes(control: Control, grids: Mapping[str, list]) -> tuple:
    """The values a control is compared at besides its default: both values of a switch,
    every choice, else the smallest and largest of the file's slider positions (the spec's
    bounds for a number without a grid)."""
    if control.kind == "boolean":
        values: tuple = (False, True)
    elif control.kind == "choice":
        values = tuple(control.choices)
    else:
        grid = grids.get(control.name) or control.grid
        values = (min(grid), max(grid)) if grid else tuple(control.bounds or ())
    return tuple(value for value in values if value != control.default)


def spec_states(data: ExportData, spec: SimulationSpec = SPEC) -> dict[str, dict]:
    """Named changes to the default state: the default, each mirrored control alone at each
    of its extremes, then :data:`COMBINATIONS` states moving them all at once."""
    grids = slider_grids(data)
    mirrored = [spec.by_name[name] for name in spec.mirrored]
    states: dict[str, dict] = {"default": {}}
    for control in mirrored:
        for value in extremes(control, grids):
            states[f"{control.name}={value}"] = {control.name: value}
    draw = random.Random(COMBINATION_SEED)
    wanted = len(states) + COMBINATIONS
    # Bounded tries: a spec of one or two switches has fewer distinct combinations.
    for _ in range(COMBINATIONS * 20):
        if len(states) == wanted:
            break
        changes = {}
        for control in mirrored:
            value = draw.choice((control.default, *extremes(control, grids)))
            if value != control.default:
                changes[control.name] = value
        states["; ".join(f"{name}={value}" for name, value in changes.items())] = changes
    return states


def single_changes(data: ExportData, spec: SimulationSpec = SPEC) -> dict[str, dict]:
    """Each control the file computes (mirrored, or feeding only the view) alone at each of
    its extremes: the changes a student makes one at a time."""
    grids = slider_grids(data)
    return {
        f"{control.name}={value}": {control.name: value}
        for control in spec.controls
        if control.mirror is not False
        for value in extremes(control, grids)
    }
