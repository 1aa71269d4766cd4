"""The simulation's state: every control as a bounded, documented parameter."""

from __future__ import annotations

import math
import numbers

import param

from app.controls_spec import (
    D_K_BOUNDS,
    D_K_DEFAULT,
    N_BOUNDS,
    N_DEFAULT,
    ROW_BOUNDS,
    SEED_BOUNDS,
    TEMPERATURE_BOUNDS,
    TEMPERATURE_DEFAULT,
    VIEWS,
)
from app.presets import PRESETS, apply_preset, preset_matches
from app.query import PARAMETER_NAMES, QueryArgs, format_query_value, parse_query

CONTROL_NAMES = ("d_k", "temperature", "n", "scaled", "view", "causal", "seed", "row")
"""The parameters a preset sets (every control)."""


class SimulationState(param.Parameterized):
    """What the student has chosen: the controls of the simulation, nothing derived.

    Values set from untrusted sources go through :meth:`apply_query`, which clamps or
    ignores bad ones and explains each in :attr:`notice`.
    """

    d_k = param.Integer(
        default=D_K_DEFAULT, bounds=D_K_BOUNDS, doc="Key (and query) dimension d_k."
    )
    temperature = param.Number(
        default=TEMPERATURE_DEFAULT,
        bounds=TEMPERATURE_BOUNDS,
        doc="Softmax temperature: logits are divided by it; higher is flatter, lower sharper.",
    )
    n = param.Integer(
        default=N_DEFAULT, bounds=N_BOUNDS, doc="Sequence length: number of queries and keys."
    )
    scaled = param.Boolean(default=True, doc="Divide the raw scores by √d_k before the softmax.")
    view = param.Selector(default="weights", objects=list(VIEWS), doc="What the heatmap shows.")
    causal = param.Boolean(default=False, doc="Causal mask: query i may attend only to keys j ≤ i.")
    seed = param.Integer(default=0, bounds=SEED_BOUNDS, doc="Seed of the sampled queries and keys.")
    row = param.Integer(
        default=0,
        bounds=ROW_BOUNDS,
        doc="Query i whose weights are compared scaled vs unscaled (clamped to n − 1).",
    )
    preset = param.Selector(
        default="",
        objects=["", *PRESETS],
        doc="The preset scene the controls show ('' once a control moves away from it).",
    )
    notice = param.String(
        default="", doc="Plain-text explanation of the query values that were fixed or ignored."
    )

    def apply_query(self, args: QueryArgs) -> None:
        """Set the controls from untrusted query arguments; explain what was fixed in ``notice``.

        A ``preset`` is applied first, so the link's other values override parts of it.
        """
        parsed = parse_query(args)
        values = dict(parsed.values)
        self.preset = values.pop("preset", self.preset)
        self.param.update(**values)
        self.notice = " ".join(parsed.notices)

    @param.depends("preset", watch=True)
    def _apply_preset(self) -> None:
        if self.preset:
            apply_preset(self, self.preset)

    @param.depends(*CONTROL_NAMES, watch=True)
    def _leave_preset(self) -> None:
        if self.preset and not preset_matches(self, self.preset):
            self.preset = ""

    def resample(self) -> None:
        """Move to the next seed: a fresh draw of Q and K (and of the histogram's pairs)."""
        self.seed = self.seed + 1 if self.seed < SEED_BOUNDS[1] else 0

    def query(self) -> dict[str, str]:
        """The controls as URL query values, in the order the URL shows them."""
        return {name: format_query_value(getattr(self, name)) for name in PARAMETER_NAMES}

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
