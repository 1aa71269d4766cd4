"""What text.js's ``fill`` accepts of a Python format template, for the tests of every
catalogue of texts the offline page receives as data."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping

KNOWN_SPEC = re.compile(r"^(?:\.\d+[fg]|,|)$")
"""The format specs text.js's fill implements (as Python's format() reads them)."""


def template_fields(template: str) -> list[tuple[str, str]]:
    """The (name, format spec) of each replacement field of ``template``."""
    return [
        (name, spec or "")
        for _, name, spec, conversion in string.Formatter().parse(template)
        if name is not None
    ]


def unfillable(templates: Mapping[str, str] | Iterable[str]) -> list[str]:
    """The templates (of a mapping's values, or an iterable) ``fill`` cannot fill the way
    Python does: a positional or attribute field, a conversion, or an unknown spec."""
    values = templates.values() if isinstance(templates, Mapping) else templates
    bad = []
    for template in values:
        for _, name, spec, conversion in string.Formatter().parse(template):
            if name is None:
                continue
            if not name.isidentifier() or conversion or not KNOWN_SPEC.match(spec or ""):
                bad.append(template)
                break
    return bad
