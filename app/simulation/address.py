"""How much of a page's address a served session can keep, and what it leaves out.

Bokeh keeps a page's query twice over: in the session's token (its payload carries every
argument and header of the page's request), and in the address of the page's websocket,
which BokehJS writes as the page's own query again, with the token in a header beside it.
Tornado reads request heads of at most 64 KiB, so a page whose query is a few tens of
kilobytes (``?x=<25,000 characters>``) is answered, and then its websocket is dropped
unanswered: the page says the connection could not be made, and nothing is logged.

So the request guard sends such a page to the same address without the parameters that
do not fit (:func:`fit_query`, a 303 See Other), naming each one left out, with its length,
in an :data:`OMITTED` parameter; the app explains them in its notice
(:func:`omitted_notices`) and writes its address without that parameter. What fits: each
``name=value`` piece at most :data:`MAX_KEPT_PIECE` characters, all of them together at
most :data:`MAX_KEPT_QUERY` (the longest left out first); the websocket's head then stays
well within Tornado's limit. This module imports nothing of the app, so the front and the
guard can use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote_plus

MAX_KEPT_PIECE = 4096
"""The longest ``name=value`` piece of a page's query that is kept (as sent, encoded)."""
MAX_KEPT_QUERY = 16384
"""The most characters of a page's query that are kept, all pieces together."""
OMITTED = "sdpa-omitted"
"""The parameter naming what the guard left out: ``<length>.<name>`` for each."""
MAX_OMITTED_NAME = 64
"""Characters of a left-out parameter's (decoded) name carried in :data:`OMITTED`."""
MAX_OMITTED_SHOWN = 10
"""At most this many left-out parameters are explained in the notice."""


@dataclass(frozen=True)
class Omitted:
    """A parameter left out of the address: its name (decoded, cut) and its length."""

    name: str
    length: int


def fit_query(query: str) -> tuple[str, list[Omitted]] | None:
    """The query (without ``?``) that keeps what fits of ``query``, in its order, followed
    by the :data:`OMITTED` pieces naming what does not; None when all of it fits."""
    pieces = query.split("&")
    if len(query) <= MAX_KEPT_QUERY and all(len(piece) <= MAX_KEPT_PIECE for piece in pieces):
        return None
    left_out = {index for index, piece in enumerate(pieces) if len(piece) > MAX_KEPT_PIECE}
    total = sum(len(piece) + 1 for index, piece in enumerate(pieces) if index not in left_out)
    for index in sorted(range(len(pieces)), key=lambda i: -len(pieces[i])):
        if total <= MAX_KEPT_QUERY:
            break
        if index not in left_out:
            left_out.add(index)
            total -= len(pieces[index]) + 1
    omitted = [
        Omitted(unquote_plus(pieces[index].partition("=")[0])[:MAX_OMITTED_NAME], len(piece))
        for index, piece in enumerate(pieces)
        if index in left_out
    ]
    kept = [piece for index, piece in enumerate(pieces) if index not in left_out and piece]
    marks = [f"{OMITTED}={quote(f'{item.length}.{item.name}', safe='')}" for item in omitted]
    return "&".join([*kept, *marks[:MAX_OMITTED_SHOWN]]), omitted


def read_omitted(values: Sequence[str]) -> list[Omitted]:
    """The parameters :data:`OMITTED` values name (``<length>.<name>``), at most
    :data:`MAX_OMITTED_SHOWN`; values of another form are skipped. Never raises."""
    found = []
    for value in values[:MAX_OMITTED_SHOWN]:
        length, dot, name = value.partition(".")
        if dot and length.isascii() and length.isdigit() and len(length) < 10:
            found.append(Omitted(name[:MAX_OMITTED_NAME], int(length)))
    return found
