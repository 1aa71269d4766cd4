"""Preset scenes as data: each sets every control at once, to show one point of the lesson."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from app.simulation.spec import ASSUMPTION_CONTROLS, CONTROL_BY_NAME, SPEC


@dataclass(frozen=True)
class Preset:
    """A scene: its selector label, what to look at, and a value for every control."""

    label: str
    description: str
    values: Mapping[str, object]


@dataclass(frozen=True)
class Reach:
    """How far a page's controls go, which a scene's words may cite: its largest d_k."""

    d_k_top: int


SERVED_REACH = Reach(d_k_top=int(CONTROL_BY_NAME["d_k"].bounds[1]))
"""The served page's reach: d_k up to its slider's end."""

LESSON_ASSUMPTIONS: Mapping[str, object] = MappingProxyType(
    {name: CONTROL_BY_NAME[name].default for name in ASSUMPTION_CONTROLS}
)
"""The lesson's assumptions (unit variances, no correlation, no QK-norm, float64, the row
max subtracted): every scene below keeps them."""

CONTROL_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {control.name: control.default for control in SPEC.controls}
)
"""Every control's default: what a scene sets a control it does not name to (a control
added to the spec takes its default in every scene, with no scene to edit)."""


def _spread(d_k: float) -> str:
    """√d_k as a scene's words cite it: "about 2", "about 1.4", "about 23"."""
    root = math.sqrt(d_k)
    return format(round(root) if root >= 10 else round(root, 1), "g")


@dataclass(frozen=True)
class _Scene:
    # The words are str.format templates: a value of the scene by its control's name, the
    # page's largest d_k (`d_k_top`), and √d_k of both (`spread`, `spread_top`).
    label: str
    description: str
    values: Mapping[str, object]

    def on(self, reach: Reach, fit: Callable[[dict[str, object]], dict[str, object]]) -> Preset:
        """This scene on a page that goes as far as ``reach``, its values through ``fit``."""
        values = fit({**CONTROL_DEFAULTS, **self.values, **LESSON_ASSUMPTIONS})
        fields = {
            **values,
            "d_k_top": reach.d_k_top,
            "spread": _spread(float(values["d_k"])),  # type: ignore[arg-type]
            "spread_top": _spread(reach.d_k_top),
        }
        return Preset(
            self.label.format(**fields),
            self.description.format(**fields),
            # Read-only, so a caller cannot change a scene for every later session.
            MappingProxyType(values),
        )


SCENES: Mapping[str, _Scene] = MappingProxyType(
    {
        "lesson": _Scene(
            "Lesson: d_k = {d_k} vs {d_k_top}",
            "At d_k = {d_k} the raw q·k have a standard deviation of about {spread} and the "
            "scaled ones about 1; drag d_k to {d_k_top} and the raw spread grows to about "
            "{spread_top} while the scaled one stays at 1.",
            {
                "d_k": 4,
                "temperature": 1.0,
                "n": 32,
                "scaled": True,
                "view": "raw",
                "causal": False,
                "seed": 0,
                "row": 0,
            },
        ),
        "collapse": _Scene(
            "Unscaled collapse (d_k = {d_k}, scale off)",
            "Without the scale every row of the weights is nearly one-hot: the mean max "
            "weight is close to 1, the entropy close to 0, and the orange collapse curves "
            "show the gradient vanishing.",
            {
                "d_k": 1024,
                "temperature": 1.0,
                "n": 32,
                "scaled": False,
                "view": "weights",
                "causal": False,
                "seed": 0,
                "row": 0,
            },
        ),
        "temperature": _Scene(
            "Temperature: sharp vs flat",
            "At temperature {temperature:g} the rows are sharp, most weight on one or two "
            "keys; drag the temperature up to 4 and they flatten towards uniform attention.",
            {
                "d_k": 64,
                "temperature": 0.25,
                "n": 32,
                "scaled": True,
                "view": "weights",
                "causal": False,
                "seed": 0,
                "row": 0,
            },
        ),
        "causal": _Scene(
            "Causal mask",
            "Query i may attend only to keys up to i, so the upper triangle is masked (grey) "
            "and the first rows, with only a few keys to share, are sharper than the last; "
            "in the one-query bars, query {row} shares its weight among keys 0 to {row} only.",
            {
                "d_k": 64,
                "temperature": 1.0,
                "n": 32,
                "scaled": True,
                "view": "weights",
                "causal": True,
                "seed": 0,
                "row": 7,
            },
        ),
    }
)
"""Preset key (the ``preset`` URL value) → the scene as written for any page, in the order
a selector lists them: :func:`presets_within` gives it the values and words of one page."""


def presets_within(
    reach: Reach, fit: Callable[[dict[str, object]], dict[str, object]] = dict
) -> dict[str, Preset]:
    """The preset scenes as a page that goes as far as ``reach`` shows them: each scene's
    values passed through ``fit`` (onto the page's own slider steps, say), its words citing
    those values and that reach, never a value the page cannot show."""
    return {key: scene.on(reach, fit) for key, scene in SCENES.items()}


PRESETS: Mapping[str, Preset] = MappingProxyType(presets_within(SERVED_REACH))
"""Preset key (the ``preset`` URL value) → scene on the served page, in the order a selector
lists them."""


def preset_options() -> dict[str, str]:
    """Label → key, for a selector widget."""
    return {preset.label: key for key, preset in PRESETS.items()}


def preset_named(key: object) -> Preset:
    """The preset ``key``, as a link or a selector names it.

    Raises:
        KeyError: if ``key`` names no preset; the message lists the valid keys.
    """
    preset = PRESETS.get(key) if isinstance(key, str) else None
    if preset is None:
        # The key may come from a URL: show only a short repr of it.
        shown = repr(key)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        raise KeyError(f"unknown preset {shown}: choose one of {', '.join(PRESETS)}")
    return preset


def preset_matches(values: Mapping[str, object], key: str) -> bool:
    """Whether control ``values`` (name → value) are every value preset ``key`` sets."""
    return all(values.get(name) == wanted for name, wanted in PRESETS[key].values.items())
