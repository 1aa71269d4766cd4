"""Preset scenes as data: each sets every control at once, to show one point of the lesson."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from app.controls_spec import ASSUMPTION_CONTROLS, CONTROL_BY_NAME


@dataclass(frozen=True)
class Preset:
    """A scene: its selector label, what to look at, and a value for every control."""

    label: str
    description: str
    values: Mapping[str, object]


LESSON_ASSUMPTIONS: Mapping[str, object] = MappingProxyType(
    {name: CONTROL_BY_NAME[name].default for name in ASSUMPTION_CONTROLS}
)
"""The lesson's assumptions (unit variances, no correlation, no QK-norm, float64, the row
max subtracted): every scene below keeps them."""


def _preset(label: str, description: str, **values: object) -> Preset:
    # Read-only, so a caller cannot change a scene for every later session.
    return Preset(label, description, MappingProxyType({**values, **LESSON_ASSUMPTIONS}))


PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        "lesson": _preset(
            "Lesson: d_k = 4 vs 1024",
            "At d_k = 4 the raw q·k have a standard deviation of about 2 and the scaled ones "
            "about 1; drag d_k to 1024 and the raw spread grows to about 32 while the scaled "
            "one stays at 1.",
            d_k=4,
            temperature=1.0,
            n=32,
            scaled=True,
            view="raw",
            causal=False,
            seed=0,
            row=0,
        ),
        "collapse": _preset(
            "Unscaled collapse (d_k = 1024, scale off)",
            "Without the scale every row of the weights is nearly one-hot: the mean max "
            "weight is close to 1, the entropy close to 0, and the orange collapse curves "
            "show the gradient vanishing.",
            d_k=1024,
            temperature=1.0,
            n=32,
            scaled=False,
            view="weights",
            causal=False,
            seed=0,
            row=0,
        ),
        "temperature": _preset(
            "Temperature: sharp vs flat",
            "At temperature 0.25 the rows are sharp, most weight on one or two keys; drag "
            "the temperature up to 4 and they flatten towards uniform attention.",
            d_k=64,
            temperature=0.25,
            n=32,
            scaled=True,
            view="weights",
            causal=False,
            seed=0,
            row=0,
        ),
        "causal": _preset(
            "Causal mask",
            "Query i may attend only to keys up to i, so the upper triangle is masked (grey) "
            "and the first rows, with only a few keys to share, are sharper than the last; "
            "in the one-query bars, query 7 shares its weight among keys 0 to 7 only.",
            d_k=64,
            temperature=1.0,
            n=32,
            scaled=True,
            view="weights",
            causal=True,
            seed=0,
            row=7,
        ),
    }
)
"""Preset key (the ``preset`` URL value) → scene, in the order a selector lists them."""


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
