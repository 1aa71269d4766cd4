"""The simulation's state: every control as a bounded, documented parameter."""

from __future__ import annotations

import functools
import math
import numbers
from typing import ClassVar

import param

from app.simulation.presets import PRESETS, preset_matches, preset_named
from app.simulation.query import (
    QueryArgs,
    format_query_value,
    limit_indexes,
    omitted_notices,
    parse_query,
    query_parameter_names,
)
from app.simulation.spec import SEED_BOUNDS, SPEC, Control, SimulationSpec


def _parameter(control: Control) -> param.Parameter:
    """The state parameter of ``control``: its kind, default, bounds and doc."""
    if control.kind == "integer":
        return param.Integer(default=control.default, bounds=control.bounds, doc=control.doc)
    if control.kind == "number":
        return param.Number(default=control.default, bounds=control.bounds, doc=control.doc)
    if control.kind == "boolean":
        return param.Boolean(default=control.default, doc=control.doc)
    return param.Selector(default=control.default, objects=list(control.choices), doc=control.doc)


class SimulationState(param.Parameterized):
    """What the student has chosen: the controls of the simulation, nothing derived.

    Its parameters are the controls of :attr:`spec` (the app's, :data:`app.simulation.spec.SPEC`,
    added below the class; :meth:`for_spec` gives the state of another spec). Values set
    from untrusted sources go through :meth:`apply_query`, which clamps or ignores bad ones
    and explains each in :attr:`notice`.
    """

    spec: ClassVar[SimulationSpec] = SPEC
    """The controls this state holds."""

    preset = param.Selector(
        default="",
        objects=["", *PRESETS],
        doc="The preset scene the controls show ('' once a control moves away from it).",
    )
    notice = param.String(
        default="", doc="Plain-text explanation of the query values that were fixed or ignored."
    )

    @classmethod
    def for_spec(cls, spec: SimulationSpec) -> type[SimulationState]:
        """The state class whose controls are ``spec``'s: this class for the app's spec,
        else a subclass with a parameter for each of ``spec``'s controls, made once per spec.

        Every method reads :attr:`spec`; a parameter of the app's that ``spec`` lacks is
        kept at its default and read by nothing.
        """
        return cls if spec is cls.spec else _state_class(cls, spec)

    def apply_query(self, args: QueryArgs) -> None:
        """Set the controls from untrusted query arguments; explain what was fixed in ``notice``.

        A ``preset`` gives every control its scene's value, then the link's other values
        override parts of it (the scene is kept only if they change nothing). A row past the
        scene's n is the last one, with a notice (:func:`app.simulation.query.limit_indexes`), and
        the parameters the server left out as too long are named
        (:func:`app.simulation.query.omitted_notices`).
        """
        parsed = parse_query(args, self.spec)
        values = dict(parsed.values)
        key = values.pop("preset", "")
        merged = {**(dict(PRESETS[key].values) if key else {}), **values}
        notices = [
            *parsed.notices,
            *limit_indexes(merged, self.control_values()),
            *omitted_notices(args),
        ]
        self.param.update(**self._with_preset(merged, key), notice=" ".join(notices))

    def choose_preset(self, key: str) -> None:
        """Show preset scene ``key``: every control set in one update ('' leaves the scene).

        Raises:
            KeyError: if ``key`` names no preset.
        """
        if key == "":
            self.preset = ""
        else:
            self.param.update(preset=key, **preset_named(key).values)

    def set_controls(self, **values: object) -> None:
        """Set controls in one update; the preset scene is left if they move away from it.

        The values must be valid: untrusted ones go through :meth:`coerce` first.
        """
        self.param.update(**self._with_preset(values, self.preset))

    def _with_preset(self, values: dict[str, object], key: str) -> dict[str, object]:
        """``values`` and the preset they leave the state in: ``key`` if every control
        still has its scene's value once they are set, else ''."""
        if key:
            key = key if preset_matches({**self.control_values(), **values}, key) else ""
        return {**values, "preset": key}

    def resample(self) -> None:
        """Move to the next seed: a fresh draw of Q and K (and of the histogram's pairs)."""
        self.set_controls(seed=self.seed + 1 if self.seed < SEED_BOUNDS[1] else 0)

    def control_values(self) -> dict[str, object]:
        """Every control's value now, by name: what a refresh reads, taken at once so that a
        refresh run off the event loop computes one consistent state while this one moves on."""
        return {name: getattr(self, name) for name in self.spec.names}

    def query(self) -> dict[str, str]:
        """The controls as URL query values, in the order the URL shows them."""
        return {
            name: format_query_value(getattr(self, name))
            for name in query_parameter_names(self.spec)
        }

    def coerce(self, name: str, value: object) -> object | None:
        """The value control ``name`` takes for ``value`` from an untrusted page (a widget's
        value as a client sent it), or None when it cannot take it.

        Numbers are clamped into the parameter's bounds; a whole-number control takes only
        whole numbers; NaN, infinities, booleans for numbers and any other type are refused,
        as is a choice not among the parameter's objects. Never raises.
        """
        parameter = self.param[name]
        if isinstance(parameter, param.Boolean):
            return value if isinstance(value, bool) else None
        if isinstance(parameter, param.Selector):
            return value if isinstance(value, str) and value in parameter.objects else None
        if not isinstance(parameter, param.Number):
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
        if not isinstance(value, numbers.Integral):
            value = float(value)
            if not math.isfinite(value):
                return None
            if isinstance(parameter, param.Integer):
                if not value.is_integer():
                    return None
                value = int(value)
        low, high = parameter.bounds
        # Compared as they are: an int of any size never goes through a float here.
        clamped = min(max(value, low), high)
        return int(clamped) if isinstance(parameter, param.Integer) else float(clamped)


for _control in SPEC.controls:
    SimulationState.param.add_parameter(_control.name, _parameter(_control))


@functools.cache
def _state_class(base: type[SimulationState], spec: SimulationSpec) -> type[SimulationState]:
    """A subclass of ``base`` holding ``spec``'s controls (:meth:`SimulationState.for_spec`)."""
    members: dict[str, object] = {c.name: _parameter(c) for c in spec.controls}
    members.update(spec=spec, __doc__=base.__doc__, __module__=base.__module__)
    return type(base.__name__, (base,), members)
