"""Untrusted URL query values → valid control values, with a friendly notice for each fix.

Every value is text from whoever wrote the link: it is parsed, clamped into range or
ignored, and never echoed back except as a short, character-filtered excerpt.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from app.controls_spec import (
    D_K_BOUNDS,
    N_BOUNDS,
    ROW_BOUNDS,
    SEED_BOUNDS,
    TEMPERATURE_BOUNDS,
    VIEWS,
)
from app.presets import PRESETS

MAX_VALUE_LENGTH = 64
"""Longer query values are refused unread."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass
class ParsedQuery:
    """Valid control values read from a query string, and the notices for what was fixed."""

    values: dict[str, object] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def excerpt(text: str, limit: int = 20) -> str:
    """A short, safe excerpt of untrusted text: letters, digits and ``.+-_`` only."""
    safe = re.sub(r"[^A-Za-z0-9.+\-_]", "", text)
    return safe[:limit] + ("…" if len(safe) > limit else "")


def _number(name: str, text: str, notices: list[str]) -> float | None:
    try:
        number = float(text)
    except ValueError:
        notices.append(f"{name}: “{excerpt(text)}” is not a number, so it was ignored.")
        return None
    if not math.isfinite(number):
        notices.append(f"{name}: “{excerpt(text)}” is not a finite number, so it was ignored.")
        return None
    return number


def _clamped(name: str, number: float, bounds: tuple[float, float], notices: list[str]) -> float:
    low, high = bounds
    if number < low:
        notices.append(f"{name} = {number:g} is below the smallest value {low:g}; using {low:g}.")
        return low
    if number > high:
        notices.append(f"{name} = {number:g} is above the largest value {high:g}; using {high:g}.")
        return high
    return number


def _integer(bounds: tuple[int, int]) -> Callable[[str, str, list[str]], object]:
    def parse(name: str, text: str, notices: list[str]) -> int | None:
        number = _number(name, text, notices)
        if number is None:
            return None
        if not number.is_integer():
            rounded = round(number)
            notices.append(f"{name} must be a whole number; {number:g} was rounded to {rounded}.")
            number = rounded
        return int(_clamped(name, number, bounds, notices))

    return parse


def _temperature(name: str, text: str, notices: list[str]) -> float | None:
    number = _number(name, text, notices)
    return None if number is None else _clamped(name, number, TEMPERATURE_BOUNDS, notices)


def _boolean(name: str, text: str, notices: list[str]) -> bool | None:
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    notices.append(f"{name}: “{excerpt(text)}” is not true or false, so it was ignored.")
    return None


def _view(name: str, text: str, notices: list[str]) -> str | None:
    word = text.strip().lower()
    if word in VIEWS:
        return word
    choices = ", ".join(VIEWS)
    notices.append(f"{name}: “{excerpt(text)}” is not one of {choices}, so it was ignored.")
    return None


def _preset(name: str, text: str, notices: list[str]) -> str | None:
    word = text.strip().lower()
    if word in PRESETS or word == "":
        return word
    choices = ", ".join(PRESETS)
    notices.append(f"{name}: “{excerpt(text)}” is not one of {choices}, so it was ignored.")
    return None


PARSERS: dict[str, Callable[[str, str, list[str]], object]] = {
    "preset": _preset,
    "d_k": _integer(D_K_BOUNDS),
    "temperature": _temperature,
    "n": _integer(N_BOUNDS),
    "scaled": _boolean,
    "view": _view,
    "causal": _boolean,
    "seed": _integer(SEED_BOUNDS),
    "row": _integer(ROW_BOUNDS),
}
"""Query parameter → parser; the names are also the SimulationState parameter names.

``preset`` comes first: a link may name a scene and then change some of its controls."""


def _text(raw: Sequence[bytes | str] | bytes | str) -> str:
    if isinstance(raw, (bytes, str)):
        raw = [raw]
    last = raw[-1] if raw else ""
    return last.decode("utf-8", errors="replace") if isinstance(last, bytes) else str(last)


def parse_query(args: Mapping[str, Sequence[bytes | str] | bytes | str]) -> ParsedQuery:
    """Parse untrusted query arguments (as in ``pn.state.session_args``) into control values.

    Unknown names are ignored silently (course pages add their own); a known name with a
    bad value is clamped or ignored and explained in ``notices``. When a name repeats, the
    last value wins. Never raises for any input.
    """
    parsed = ParsedQuery()
    for name, parser in PARSERS.items():
        if name not in args:
            continue
        text = _text(args[name]).strip()
        if len(text) > MAX_VALUE_LENGTH:
            parsed.notices.append(
                f"{name}: the value is {len(text)} characters long, so it was ignored."
            )
            continue
        value = parser(name, text, parsed.notices)
        if value is not None:
            parsed.values[name] = value
    return parsed


def format_query_value(value: object) -> str:
    """How a control value is written into the URL (booleans as true/false, floats short)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parse_embed(args: Mapping[str, Sequence[bytes | str] | bytes | str]) -> bool:
    """Whether the query asks for the compact embed layout (``embed=true``); never raises."""
    if "embed" not in args:
        return False
    return _text(args["embed"]).strip().lower() in _TRUE
