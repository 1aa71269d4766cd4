r"""Untrusted URL query values → valid control values, with a friendly notice for each fix.

Every value is text from whoever wrote the link: it is parsed, clamped into range or
ignored, and never echoed back except as a short, character-filtered excerpt. The offline
page (``app/page/assets/query.js``) reads links with the same rules and writes its notices from
the same templates (:data:`NOTICE_TEXTS`), both handed to it as data by :func:`query_spec`;
the tests compare the two value for value.

The rules, for both pages:

* Numbers are read as Python's ``float()`` reads them: ASCII or any other Unicode decimal
  digits (``٣٢`` and ``３２`` are 32, as they are to ``int()``), a sign, a decimal point,
  an exponent, ``_`` between digits; ``inf`` and ``nan`` are refused as not finite.
  Whole-number parameters round a fraction half to even; values out of range are clamped.
* Words (true/false, views, presets) are matched after ``strip()`` and ``lower()``.
* A value over :data:`MAX_VALUE_LENGTH` characters is refused unread; when a name repeats
  the last value wins; unknown names are ignored silently (course pages add their own).
* A control that picks one of another's items (``row``, one of ``n`` queries) is at most
  that count − 1 once the preset and the link's values are merged (:data:`INDEX_LIMITS`).
* Notices show what was sent: a number with the digits that tell it from another
  (:func:`shown_number`), text with every character outside a safe set as an escape
  (:func:`excerpt`: ``true\u200b``, ``ra\u0301w``), so a refused value never looks valid.
* Names are compared as sent; only the ASCII prefix ``bokeh-`` in any case is Bokeh's
  (:func:`is_reserved_name`): a name that folds to it only under Unicode's rules (a Kelvin
  sign for the ``k``) is a course page's own, as it is to Tornado and to Bokeh.
"""

from __future__ import annotations

import functools
import math
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote_plus, urlencode

from app.simulation.address import OMITTED, read_omitted
from app.simulation.presets import PRESETS
from app.simulation.spec import SPEC, SimulationSpec

MAX_VALUE_LENGTH = 64
"""Longer query values are refused unread."""

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")

RESERVED_PREFIX = "bokeh-"
"""Query names Bokeh reads for its own use (session ids, tokens, resource addresses): the
URL the app writes never carries them, whatever the page was opened with."""

NOTICE_TEXTS = {
    "not_a_number": "{name}: “{excerpt}” is not a number, so it was ignored.",
    "not_finite": "{name}: “{excerpt}” is not a finite number, so it was ignored.",
    "below": "{name} = {value} is below the smallest value {low}; using {low}.",
    "above": "{name} = {value} is above the largest value {high}; using {high}.",
    "rounded": "{name} must be a whole number; {value} was rounded to {rounded}.",
    "past_count": "{name} = {value} is past the last of {count} = {total}; using {last}.",
    "omitted": "{name}: the parameter is {length} characters long, too long to keep in the "
    "address, so it was left out.",
    "not_boolean": "{name}: “{excerpt}” is not true or false, so it was ignored.",
    "not_a_choice": "{name}: “{excerpt}” is not one of {listed}, so it was ignored.",
    "too_long": "{name}: the value is {length} characters long, so it was ignored.",
}
"""The notice for each fix, as ``str.format`` templates with named fields (``excerpt`` is
:func:`excerpt` of the value, ``listed`` the words it may be, joined by ``", "``, numbers
as :func:`shown_number` writes them): both pages write them from here, the offline page
with text.js's ``fill`` (:func:`query_spec`)."""

INDEX_LIMITS = {"row": "n"}
"""Controls that pick one of another control's items, by the name of that count: the
value is at most the count − 1 (query i of n queries)."""

QueryArgs = Mapping[str, Sequence[bytes | str] | bytes | str]
"""Query arguments as Tornado and ``pn.state.session_args`` hold them (name → values)."""


@dataclass(frozen=True)
class QueryParameter:
    """One URL parameter the app reads; its name is also the SimulationState parameter's."""

    name: str
    kind: str
    """``integer``, ``number``, ``boolean`` or ``choice``."""
    bounds: tuple[float, float] | None = None
    """Smallest and largest value of a number."""
    choices: tuple[str, ...] = ()
    """The words a ``choice`` takes."""
    blank: bool = False
    """Whether an empty value is a valid ``choice`` (``preset=``: no preset)."""


@functools.cache
def query_parameters(spec: SimulationSpec = SPEC) -> tuple[QueryParameter, ...]:
    """The parameters a page of ``spec`` reads and writes, in the order the URL shows them:
    the preset, then each control in the spec's order."""
    return (
        # First: a link may name a scene and then change some of its controls.
        QueryParameter("preset", "choice", choices=tuple(PRESETS), blank=True),
        *(
            QueryParameter(control.name, control.kind, control.bounds, tuple(control.choices))
            for control in spec.controls
        ),
    )


@functools.cache
def query_parameter_names(spec: SimulationSpec = SPEC) -> tuple[str, ...]:
    """The names of :func:`query_parameters`, in the URL's order."""
    return tuple(parameter.name for parameter in query_parameters(spec))


PARAMETERS: tuple[QueryParameter, ...] = query_parameters(SPEC)
"""The parameters the app reads and writes, in the order the URL shows them."""

PARAMETER_NAMES = query_parameter_names(SPEC)


@dataclass
class ParsedQuery:
    """Valid control values read from a query string, and the notices for what was fixed."""

    values: dict[str, object] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


SHOWN_AS_SENT = re.compile(r"[A-Za-z0-9.+\-_? ]")
"""The characters a notice shows as they are; every other one is shown as an escape."""


def escaped(character: str) -> str:
    r"""``character`` as Python writes it in an escape: ``\x3c``, ``\u200b``, ``\U0001f600``."""
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def excerpt(text: str, limit: int = 20) -> str:
    """A short, safe excerpt of untrusted text, showing what was sent: the first ``limit``
    characters, ASCII letters, digits, space and ``.+-_?`` as they are, every other one as
    its escape (:func:`escaped`), then ``…`` if there were more.

    The notice is shown as HTML by the page's alert: nothing that could make markup or an
    entity (``<>&;"'``), a link (``:/``) or a bidirectional trick survives, and what looks
    valid but is not (``true`` with a zero-width space, ``raw`` with a combining accent, a
    Kelvin sign for a ``k``) shows the characters that make it differ.
    """
    shown = "".join(c if SHOWN_AS_SENT.fullmatch(c) else escaped(c) for c in text[:limit])
    return shown + ("…" if len(text) > limit else "")


def shown_number(number: float) -> str:
    """``number`` with as many digits as tell it from every other float (Python's
    ``repr``), a whole number below 10¹⁶ without its ``.0``: ``0.95000000001``, ``2000``,
    ``1e+300``."""
    number = float(number)  # an int has no is_integer() before Python 3.12
    if number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    return repr(number)


def is_reserved_name(name: str) -> bool:
    """Whether query name ``name`` is Bokeh's (:data:`RESERVED_PREFIX` in any ASCII case).

    Only ASCII letters fold: ``str.lower`` also turns a Kelvin sign into ``k`` (and the
    browser's ``toLowerCase`` too), which neither Tornado nor Bokeh do, so such a name is
    a course page's own and is kept.
    """
    prefix = name[: len(RESERVED_PREFIX)]
    return prefix.isascii() and prefix.lower() == RESERVED_PREFIX


def notice(key: str, **values: object) -> str:
    """The notice :data:`NOTICE_TEXTS` ``[key]`` with ``values`` in its fields."""
    return NOTICE_TEXTS[key].format(**values)


def _number(name: str, text: str, notices: list[str]) -> float | None:
    try:
        number = float(text)
    except ValueError:
        notices.append(notice("not_a_number", name=name, excerpt=excerpt(text)))
        return None
    if not math.isfinite(number):
        notices.append(notice("not_finite", name=name, excerpt=excerpt(text)))
        return None
    return number


def _clamped(name: str, number: float, bounds: tuple[float, float], notices: list[str]) -> float:
    low, high = bounds
    if number < low:
        notices.append(notice("below", name=name, value=shown_number(number), low=_shown(low)))
        return low
    if number > high:
        notices.append(notice("above", name=name, value=shown_number(number), high=_shown(high)))
        return high
    return number


def _shown(bound: float) -> str:
    return shown_number(float(bound))


def _integer(parameter: QueryParameter, text: str, notices: list[str]) -> int | None:
    name = parameter.name
    number = _number(name, text, notices)
    if number is None:
        return None
    if not number.is_integer():
        rounded = round(number)
        notices.append(notice("rounded", name=name, value=shown_number(number), rounded=rounded))
        number = rounded
    assert parameter.bounds is not None
    return int(_clamped(name, number, parameter.bounds, notices))


def _real(parameter: QueryParameter, text: str, notices: list[str]) -> float | None:
    number = _number(parameter.name, text, notices)
    if number is None:
        return None
    assert parameter.bounds is not None
    return _clamped(parameter.name, number, parameter.bounds, notices)


def _boolean(parameter: QueryParameter, text: str, notices: list[str]) -> bool | None:
    word = text.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    notices.append(notice("not_boolean", name=parameter.name, excerpt=excerpt(text)))
    return None


def _choice(parameter: QueryParameter, text: str, notices: list[str]) -> str | None:
    word = text.lower()
    if word in parameter.choices or (parameter.blank and word == ""):
        return word
    listed = ", ".join(parameter.choices)
    notices.append(
        notice("not_a_choice", name=parameter.name, excerpt=excerpt(text), listed=listed)
    )
    return None


_READERS = {"integer": _integer, "number": _real, "boolean": _boolean, "choice": _choice}


def _text(raw: Sequence[bytes | str] | bytes | str) -> str:
    if isinstance(raw, bytes | str):
        raw = [raw]
    last = raw[-1] if raw else ""
    return last.decode("utf-8", errors="replace") if isinstance(last, bytes) else str(last)


def parse_query(args: QueryArgs, spec: SimulationSpec = SPEC) -> ParsedQuery:
    """Parse untrusted query arguments (as in ``pn.state.session_args``) into the values of
    ``spec``'s controls.

    Unknown names are ignored silently (course pages add their own); a known name with a
    bad value is clamped or ignored and explained in ``notices``. When a name repeats, the
    last value wins. Never raises for any input.
    """
    parsed = ParsedQuery()
    for parameter in query_parameters(spec):
        if parameter.name not in args:
            continue
        text = _text(args[parameter.name]).strip()
        if len(text) > MAX_VALUE_LENGTH:
            parsed.notices.append(notice("too_long", name=parameter.name, length=len(text)))
            continue
        value = _READERS[parameter.kind](parameter, text, parsed.notices)
        if value is not None:
            parsed.values[parameter.name] = value
    return parsed


def limit_indexes(values: dict[str, object], counts: Mapping[str, object]) -> list[str]:
    """Clamp each control of :data:`INDEX_LIMITS` in ``values`` (in place) to its count − 1,
    the count taken from ``values`` or else from ``counts`` (the current state's); return
    the notices for what was clamped."""
    notices = []
    for name, count_name in INDEX_LIMITS.items():
        index = values.get(name)
        total = values.get(count_name, counts.get(count_name))
        if not isinstance(index, int) or not isinstance(total, int) or index < total:
            continue
        last = total - 1
        notices.append(
            notice("past_count", name=name, value=index, count=count_name, total=total, last=last)
        )
        values[name] = last
    return notices


def index_limits(counts: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """:data:`INDEX_LIMITS` as data for query.js's ``applyQuery``: by control, the name of
    its count, the count a page starts with (from ``counts``, its first state's values) and
    the template of the notice (:data:`NOTICE_TEXTS` ``["past_count"]``)."""
    return {
        name: {"count": count, "default": counts[count], "notice": NOTICE_TEXTS["past_count"]}
        for name, count in INDEX_LIMITS.items()
    }


def omitted_notices(args: QueryArgs) -> list[str]:
    """The notices for the parameters the server left out of a page's address as too long
    to keep (:data:`app.simulation.address.OMITTED`, written by the request guard). Never raises."""
    raw = args.get(OMITTED, [])
    values = [raw] if isinstance(raw, bytes | str) else list(raw)
    texts = [_text([value]) for value in values]
    return [
        notice("omitted", name=excerpt(item.name), length=f"{item.length:,}")
        for item in read_omitted(texts)
    ]


def format_query_value(value: object) -> str:
    """How a control value is written into the URL (booleans as true/false, floats short)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def query_value(args: QueryArgs, name: str) -> str:
    """The last value of query argument ``name`` as text ("" when the query lacks it); bytes
    are decoded as UTF-8, undecodable ones replaced. Never raises."""
    return _text(args[name]) if name in args else ""


def parse_embed(args: QueryArgs) -> bool:
    """Whether the query asks for the compact embed layout (``embed=true``); never raises."""
    if "embed" not in args:
        return False
    return _text(args["embed"]).strip().lower() in TRUE_WORDS


SHOWN_CONTROLS = "controls"
"""The query parameter that names the only controls a page shows (``controls=d_k,scaled``)."""


def parse_shown_controls(
    args: QueryArgs, names: Sequence[str]
) -> tuple[tuple[str, ...] | None, list[str]]:
    """The controls ``controls=…`` asks the page to show, in the link's order, and the
    notices for the names it ignored; None when the link names no known control.

    ``names`` are the controls a page can show. Names are comma-separated and matched after
    ``strip()`` and ``lower()``; a repeated one counts once. Never raises.
    """
    if SHOWN_CONTROLS not in args:
        return None, []
    text = _text(args[SHOWN_CONTROLS]).strip()
    if len(text) > MAX_VALUE_LENGTH:
        return None, [notice("too_long", name=SHOWN_CONTROLS, length=len(text))]
    shown: list[str] = []
    notices: list[str] = []
    for word in (part.strip().lower() for part in text.split(",")):
        if word in names:
            if word not in shown:
                shown.append(word)
        elif word:
            listed = ", ".join(names)
            notices.append(
                notice("not_a_choice", name=SHOWN_CONTROLS, excerpt=excerpt(word), listed=listed)
            )
    return (tuple(shown) or None), notices


def compose_search(current: str, values: Mapping[str, str], drop: Sequence[str] = ()) -> str:
    r"""The URL query (``?…``) the app writes: ``values`` first, in their order, then every
    parameter of ``current`` (the page's query) that the app does not write, byte for byte
    and in its order.

    A course page's own parameters (``id=007``, ``ref=…?x=1``, ``foo=[1,2,3]``) thus come
    back exactly as it sent them. Names are compared decoded, as Tornado reads them
    (``d%5Fk`` is ``d_k``); Bokeh's reserved ``bokeh-…`` names are always dropped
    (:func:`is_reserved_name`: ``bo\u212aeh-…``, with a Kelvin sign, is kept), and so is the
    served page's note of what the server left out (:data:`app.simulation.address.OMITTED`; the
    offline page is never sent one, so its query.js keeps that as a link's own), and any
    name of ``drop`` (the served page's presenter key).
    """
    kept = []
    for piece in current.removeprefix("?").split("&"):
        if not piece:
            continue
        name = unquote_plus(piece.partition("=")[0])
        if name in values or name == OMITTED or name in drop or is_reserved_name(name):
            continue
        kept.append(piece)
    return "?" + "&".join(filter(None, [urlencode(dict(values)), *kept]))


@functools.cache
def _unicode_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Every Unicode decimal digit zero (each begins a run 0–9) and every space, by code point."""
    characters = [chr(c) for c in range(sys.maxunicode + 1)]
    zeros = tuple(ord(c) for c in characters if unicodedata.decimal(c, None) == 0)
    return zeros, tuple(ord(c) for c in characters if c.isspace())


def query_spec(spec: SimulationSpec = SPEC) -> dict:
    """The rules above as data, for the offline page's query.js (one source of truth):
    ``spec``'s parameters, with the templates of its notices (:data:`NOTICE_TEXTS`), which
    it fills as :func:`notice` does."""
    return {
        "parameters": [
            {
                "name": parameter.name,
                "kind": parameter.kind,
                "bounds": list(parameter.bounds) if parameter.bounds else None,
                "choices": list(parameter.choices),
                "blank": parameter.blank,
            }
            for parameter in query_parameters(spec)
        ],
        "true": list(TRUE_WORDS),
        "false": list(FALSE_WORDS),
        "maxLength": MAX_VALUE_LENGTH,
        "reservedPrefix": RESERVED_PREFIX,
        "notices": dict(NOTICE_TEXTS),
        # What float() and str.strip() treat as digits and as space, from this Python's
        # Unicode tables: JavaScript's differ, and have no digit values at all.
        "digitZeros": list(_unicode_tables()[0]),
        "spaces": list(_unicode_tables()[1]),
    }
