"""Messages a hostile page could send a component through ``model.send_msg``, by family.

A component's ``_handle_msg`` receives whatever JSON the client sent: every family below is
a way a message can be wrong (its shape, its names, its values' types and ranges). Tests of
each component draw their cases from :func:`hostile_messages`.
"""

from __future__ import annotations

import json
import math
import random
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


def hostile_share_requests() -> Iterator[tuple[str, object]]:
    """``(family, message)`` pairs for the share request (``{"share": "link" | "embed"}``)
    that no page sends: an unknown kind, a wrong type, a near miss, extra fields alone."""
    for value in BAD_VALUES:
        yield "bad kind", {"share": value}
    for kind in ("LINK", "link ", "embeds", "__class__", "<img src=x>", "x" * 100_000):
        yield "unknown kind", {"share": kind}
    yield "nested", {"share": {"share": "link"}}
    yield "list of kinds", {"share": ["link", "embed"]}


def hostile_name_lists(names: Sequence[str]) -> Iterator[tuple[str, object]]:
    """``(family, value)`` pairs for a property a page sets to a list of distinct names
    among ``names`` (the lesson's open sections): not a list, unknown or repeated names,
    names of the wrong type, and lists far longer than any page sends."""
    for value in BAD_VALUES:
        if not isinstance(value, list):
            yield "not a list", value
    yield "not a list", names[0]
    for name in ("", "nope", "__class__", names[0].upper(), f"{names[0]} ", "<img src=x>"):
        yield "unknown name", [name]
    yield "repeated name", [names[0], names[0]]
    for value in BAD_VALUES:
        yield "not a name", [value]
        yield "not a name beside a good one", [names[0], value]
    yield "nested", [[names[0]]]
    yield "huge", [names[0]] + ["nope"] * 100_000


# --- The session's own channel (app/served/channel.py) -------------------------------------------

CHANNEL_BODY = {"name": "d_k", "index": 1}
"""A body a receiver would take: the refused messages below fail on their envelope only."""


def _nested(depth: int, inner: str = "1") -> str:
    """``inner`` inside ``depth`` JSON arrays, as text."""
    return "[" * depth + inner + "]" * depth


def refused_channel_texts(targets: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(family, text)`` pairs of channel messages no receiver may get, for a channel whose
    known receivers are ``targets``: text that is not JSON, JSON that is not an object, an
    object with keys missing or added, a target unknown or not a string, nesting past any
    move's (whole message, ``msg`` or ``to``) and numbers past any range.

    A page's messages are text, one move ``{"to": target, "msg": body}``. A few texts here
    are longer than :data:`app.served.channel.MAX_MESSAGE_BYTES` (the route closes the channel on
    those before any parsing) or no valid UTF-8 (lone surrogates, which a websocket cannot
    carry as text): a test over a socket leaves them out."""
    target, body = targets[0], json.dumps(CHANNEL_BODY)
    not_json = ["", " ", "{", "}", "[", "nul", "to=controls", "\x00", "\ud800", "\ufeff{}"]
    not_json += ["{'to': 'controls', 'msg': {}}", '{"to": "controls", "msg": }']
    not_json += ['{"to": "controls"', f'{{"to": "{target}", "msg": {body}}} trailing']
    not_json += [f'{{"to": "{target}", "msg": {body},}}', f'{{to: "{target}", msg: {body}}}']
    for text in not_json:
        yield "not JSON", text
    for value in (None, True, 0, -1.5, "controls", [], [target, CHANNEL_BODY], {}):
        yield "not an object", json.dumps(value)
    yield "not an object", json.dumps([{"to": target, "msg": CHANNEL_BODY}])
    yield "missing keys", json.dumps({"to": target})
    yield "missing keys", json.dumps({"msg": CHANNEL_BODY})
    for key in ("", "x", "TO", "to ", "__proto__", "constructor", "name", "index"):
        yield "extra keys", json.dumps({"to": target, "msg": CHANNEL_BODY, key: 1})
    yield "extra keys", json.dumps({"To": target, "msg": CHANNEL_BODY})
    unknown = ["", "nope", target.upper(), f" {target}", f"{target} ", f"{target}\x00"]
    unknown += [target * 2, f"../{target}", "__proto__", "constructor", "toString", "\ud800"]
    unknown += [",".join(targets), "*", "all"]
    for name in unknown:
        yield "unknown target", json.dumps({"to": name, "msg": CHANNEL_BODY})
    for value in (None, True, 0, 1.5, [], [target], {target: 1}, {"name": target}):
        yield "target not a string", json.dumps({"to": value, "msg": CHANNEL_BODY})
    for literal in ("NaN", "Infinity", "-Infinity", "1e400", "9" * 400, "-" + "9" * 4000):
        yield "target not a string", f'{{"to": {literal}, "msg": {body}}}'
    for depth in (64, 500, 999, 1000, 1001, 2000, 2040):
        yield "deep nesting", _nested(depth)
        yield "deep nesting", f'{{"to": "{target}", "msg": {_nested(depth - 2, body)}}}'
        yield "deep nesting", f'{{"to": {_nested(depth)}, "msg": {body}}}'
    yield "deep nesting", '{"a":' * 600 + "1" + "}" * 600
    for literal in ("1e400", "-1e400", "9" * 4000, "0." + "0" * 4000 + "1", "9" * 5000):
        yield "huge number", literal
        yield "huge number", f'[{literal}, {{"to": "{target}", "msg": {body}}}]'


def refused_channel_binaries(targets: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """``(family, message)`` pairs of binary messages for the channel, which takes text
    only: empty, control bytes, no UTF-8, a well-formed move's bytes, and what looks like a
    frame of the session's (:func:`app.served.channel.frame_message`'s length-prefixed header)."""
    move = json.dumps({"to": targets[0], "msg": CHANNEL_BODY}).encode("utf-8")
    yield "empty", b""
    for data in (b"\x00", b"\x00" * 4096, b"\xff" * 64, b"\xc3", bytes(range(256))):
        yield "odd bytes", data
    yield "a move as bytes", move
    yield "a move as bytes", move.decode("utf-8").encode("utf-16")
    header = json.dumps({"to": targets[0], "arrays": [["x", "float64", 8, 10**9]]}).encode()
    yield "a frame", len(header).to_bytes(4, "little") + header
    yield "a frame", (2**32 - 1).to_bytes(4, "little") + header


# --- Queued work: one page asking for heavy jobs again and again ----------------------------------

CSV_BUTTONS = ("matrix", "histogram")
"""The files the assumptions section's buttons ask for."""

QUEUED_WORK_KINDS = ("downloads", "resample", "train", "mixed")
"""The families of :func:`queued_work_floods`: what a page asks the server to compute."""


def queued_work_floods(seed: int, cases: int = 3, length: int = 40) -> Iterator[tuple[str, list]]:
    """``(family, messages)`` pairs, ``cases`` of each family, drawn with ``random(seed)``:
    floods of ``length`` requests for heavy work from one page, as ``(target, msg)`` for
    the session's channel. Downloads press the two CSV buttons in any order and nudge σ_q
    between presses (a new file each time), Resample presses the next seed, Train
    alternates Train and Stop, and the mixed family draws from all three."""
    rng = random.Random(seed)
    download = [
        ("lesson", {"assumptions": {"download": which}}) for which in ("matrix", "histogram")
    ]
    nudge = [
        ("lesson", {"assumptions": {"control": {"name": "sigma_q", "index": i}}}) for i in (9, 11)
    ]
    resample = [("controls", {"name": "resample", "value": True})]
    train = [("lesson", {"training": "train"}), ("lesson", {"training": "stop"})]
    pools = {
        "downloads": download * 3 + nudge,
        "resample": resample,
        "train": train,
        "mixed": download + nudge + resample + train,
    }
    for family in QUEUED_WORK_KINDS:
        for _ in range(cases):
            yield family, [rng.choice(pools[family]) for _ in range(length)]
