"""Messages a hostile page could send a component through ``model.send_msg``, by family.

A component's ``_handle_msg`` receives whatever JSON the client sent: every family below is
a way a message can be wrong (its shape, its names, its values' types and ranges). Tests of
each component draw their cases from :func:`hostile_messages`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

BAD_VALUES: tuple[object, ...] = (
    None,
    True,
    False,
    "",
    "64",
    "<script>alert(1)</script>",
    -1,
    10**30,
    -(10**30),
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    [],
    [1],
    {},
    {"index": 1},
)
"""Values of the wrong type, size or shape for any field of a message."""


def hostile_messages(names: Sequence[str], fields: Sequence[str]) -> Iterator[tuple[str, object]]:
    """``(family, message)`` pairs for a component that takes messages naming one of
    ``names`` with one of ``fields``: not a dict, no name, unknown names, and every bad
    value in every field."""
    for message in (None, 1, "x", [], ["name", names[0]], True):
        yield "not a dict", message
    yield "no name", {field: 0 for field in fields}
    for name in ("", "nope", "__class__", "bokeh-session-id", names[0].upper(), 7, None):
        yield "unknown name", {"name": name, **{field: 0 for field in fields}}
    for name in names:
        yield "no value", {"name": name}
        for field in fields:
            for value in BAD_VALUES:
                yield "bad value", {"name": name, field: value}
