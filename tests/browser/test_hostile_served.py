"""Hostile links and hostile clients against the served app, through real sessions.

A protocol-level client (tests/protocol_client.py) opens each session as Chromium does: the
page, its websocket, the document, ``document_ready``. For a sample of the generated links
(tests/hostile_queries.py: every category), the page is served and the app writes the URL
the model tests expect (the app's values, then the link's other parameters byte for byte,
never Bokeh's) and shows the notice they expect. Then one session receives bad values for
every control over its websocket. The server's log must stay free of tracebacks and
errors throughout. No Chromium here: tests/browser/test_hostile_browser.py has that.
"""

from __future__ import annotations

import asyncio
import html
import math
import re
from typing import Any

import pytest
from hostile_messages import hostile_messages, hostile_share_requests
from hostile_queries import HostileQuery, hostile_queries, sample
from procs_support import run_async
from protocol_client import (
    ModelRecord,
    ProtocolError,
    ProtocolSession,
    map_get,
    move_event,
)
from tornado.httpclient import HTTPClientError
from tornado.httputil import parse_qs_bytes

from app.page.controls import widget_names, widget_spec
from app.simulation.address import fit_query
from app.simulation.query import compose_search
from app.simulation.spec import D_K_GRID
from app.simulation.state import SimulationState

TIMEOUT = 90.0
"""Seconds any one wait may take on a loaded CI machine."""

RUN_TIMEOUT = 600.0
"""Seconds a whole scenario may take (run in a thread of its own: Playwright's sync API,
used by the browser tests sharing this server, keeps an event loop in the test thread)."""

AT_ONCE = 3
"""Sessions opened together: enough to overlap, few enough for two cores."""

NOTICE_TITLE = "Some link values were adjusted"

TORNADO_MAX_HEAD = 65_536
"""Tornado's ``max_header_size``: a longer request line is refused, its connection closed."""

TORNADO_MAX_ARGUMENTS = 1000
"""Tornado 6.6 answers a query of more fields with a plain 400 (``max_arguments``)."""

LOG_PROBLEMS = ("Traceback", "ERROR", "Error running application handler")

SAMPLE = [
    *sample(hostile_queries(), per_category=3),
    HostileQuery("question-hash", "?d_k=5"),
    HostileQuery("question-hash", "d_k=8&ref=https://course.example/page?id=3"),
    HostileQuery("question-hash", "d_k=8?"),
    HostileQuery("unicode-digits", "d_k=%D9%A3%D9%A2&n=%EF%BC%93%EF%BC%92"),
]
"""Every category's first cases, and the links issue 11 names."""


def expected_state(query: str) -> SimulationState:
    state = SimulationState()
    state.apply_query(parse_qs_bytes(query, keep_blank_values=True))
    return state


def assert_log_clean(text: str) -> None:
    problems = [line for line in text.splitlines() if any(p in line for p in LOG_PROBLEMS)]
    assert problems == [], "\n".join(problems[:20])


def shown_text(markup: str) -> str:
    """The text the page shows for the alert's ``object`` (escaped HTML rendered from
    Markdown by panel-material-ui, decoded and inserted by the page)."""
    return re.sub(r"<[^>]+>", "", html.unescape(markup)).strip()


def notice_text(session: ProtocolSession) -> str:
    """The text of the page's notice (the alert with the notice's title), or "" for a page
    whose link needed none (it then holds no notice)."""
    found = list(session.index.find(lambda r: r.attributes.get("title") == NOTICE_TITLE))
    assert len(found) <= 1, "more than one notice in the document"
    return found[0].attributes.get("object", "") if found else ""


def served_query(query: str) -> str:
    """The query the page is built for: a query too long to keep is redirected without
    what does not fit (app/simulation/address.py), under plain panel serve too."""
    fitted = fit_query(query)
    return query if fitted is None else fitted[0]


async def open_link(base: str, case: HostileQuery) -> dict[str, Any]:
    """Open the page for ``case`` as a browser would (following a redirect); what the page
    shows once ready."""
    session = ProtocolSession(f"{base}?{case.query}", timeout=TIMEOUT, echo=False)
    try:
        try:
            await session.open()
        except HTTPClientError as error:
            return {"status": error.code}
        except ConnectionResetError:
            # Tornado closes a head it will not read while the client may still be sending
            # it: the client then sees a reset instead of the closed connection (599).
            return {"status": 599}
        await session.send_document_ready()
        query = served_query(case.query)
        state = expected_state(query)
        written = compose_search(f"?{query}", state.query())
        location = session.index.named("location")
        assert location is not None, "no Location in the document"
        try:
            await session.wait_for(
                lambda: location.attributes.get("search") == written, "the URL", timeout=TIMEOUT
            )
        except ProtocolError:
            return {"status": 200, "search": location.attributes.get("search"), "wanted": written}
        return {
            "status": 200,
            "search": written,
            "wanted": written,
            "notice": notice_text(session),
            "expected_notice": state.notice,
            "errors": session.errors,
        }
    finally:
        await session.close()


async def open_links(base: str, cases: list[HostileQuery]) -> list[dict[str, Any]]:
    limit = asyncio.Semaphore(AT_ONCE)

    async def one(case: HostileQuery) -> dict[str, Any]:
        async with limit:
            return await open_link(base, case)

    return await asyncio.gather(*(one(case) for case in cases))


def test_sampled_links_open_real_sessions_with_the_expected_url_and_notice(app_server) -> None:
    mark = app_server.log_size()
    results = run_async(open_links(app_server.url, SAMPLE), RUN_TIMEOUT)
    for case, result in zip(SAMPLE, results, strict=True):
        where = f"{case.category}: {case.query[:100]}"
        if len(case.query) > TORNADO_MAX_HEAD:
            # Refused by Tornado before any app code runs: the connection is closed.
            assert result["status"] == 599, where
            continue
        if case.query.count("&") + 1 > TORNADO_MAX_ARGUMENTS:
            assert result["status"] == 400, where  # Tornado's plain "Bad Request"
            continue
        if case.category == "reserved":
            # Plain panel serve: the app's authorize callback refuses Bokeh's parameters
            # before Bokeh reads them (app/server/plain_serve.py), with Panel's 403.
            assert result["status"] == 403, where
            continue
        assert result["status"] == 200, where
        assert result["search"] == result["wanted"], where
        assert shown_text(result["notice"]) == result["expected_notice"], where
        assert result["errors"] == [], where
    assert_log_clean(app_server.log_text(mark))


# --- Bad values over the websocket --------------------------------------------------------

BAD_VALUES: list[Any] = [
    -1, -2, 10**6, -(10**20), 2**63, 2.5, "3", "", None, True, [1], {"a": 1},
    {"type": "number", "value": "nan"}, {"type": "number", "value": "+inf"},
    "<img src=x onerror=alert(1)>", "x" * 100_000,
]  # fmt: skip
"""Values for any widget property: out of range, wrong types, NaN and infinities (as
BokehJS encodes them), markup, 100 kB."""

DRAWN_PROPERTIES = ("controls", "more", "values", "texts", "shares", "open_more_from")
"""The drawn controls' properties (app/served/components/controls.py), none of which a page sets."""


def drawn_records(session: ProtocolSession) -> tuple[ModelRecord, ModelRecord]:
    """The drawn controls' component model (whose data events are moves) and data model
    (``controls`` and ``values``)."""
    (data,) = session.index.find(
        lambda record: "controls" in record.attributes and "values" in record.attributes
    )
    component = session.index.component_of(data.id)
    assert component is not None
    return component, data


def drawn_index(data: ModelRecord | dict[str, Any], name: str) -> Any:
    """The position the page's drawn slider ``name`` was last sent (by ``data``, the drawn
    controls' data model, or a message that carries ``values``)."""
    values = data.attributes.get("values") if isinstance(data, ModelRecord) else data["values"]
    return map_get(map_get(values, name), "index")


def as_bokeh_json(value: Any) -> Any:
    """``value`` as BokehJS encodes it: NaN and infinities as number objects, dicts as
    maps (JSON itself has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
        return {"type": "number", "value": text}
    if isinstance(value, dict):
        entries = [[key, as_bokeh_json(item)] for key, item in value.items()]
        return {"type": "map", "entries": entries}
    if isinstance(value, list):
        return [as_bokeh_json(item) for item in value]
    return value


def data_event(component: ModelRecord, message: Any) -> dict[str, Any]:
    """A data event carrying ``message`` for the drawn controls, as BokehJS encodes one."""
    data = as_bokeh_json(message)
    values = {"type": "map", "entries": [["model", {"id": component.id}], ["data", data]]}
    return {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {"type": "event", "name": "data_event", "values": values},
    }


def map_items(value: Any) -> list[tuple[str, Any]]:
    """The items of a dict as Bokeh serializes it (a map's entries, or a JSON object's)."""
    if isinstance(value, dict) and value.get("type") == "map":
        return [tuple(entry) for entry in value.get("entries", [])]
    return list(value.items()) if isinstance(value, dict) else []


def valid(spec: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` is one the page may be sent for the widget ``spec`` describes (a
    slider's position and text, a box's whole number within bounds, a switch's boolean, a
    choice's value)."""
    shown = dict(map_items(value))
    kind = spec["widget"]
    if kind == "slider":
        index = shown.get("index")
        return type(index) is int and 0 <= index < len(spec["positions"])
    if kind == "number":
        number = shown.get("value")
        return type(number) is int and spec["min"] <= number <= spec["max"]
    if kind == "switch":
        return isinstance(shown.get("value"), bool)
    return shown.get("value") in [choice for choice, _ in spec["choices"]]


async def send_bad_values(url: str) -> tuple[ProtocolSession, list[Any]]:
    """Send one session every family of hostile message and property for its drawn
    controls; then check that a real move still works. The session and every set of values
    it was sent."""
    session = ProtocolSession(url, timeout=TIMEOUT, echo=False, channel=False)
    await session.open()
    await session.send_document_ready()
    component, data = drawn_records(session)
    for _, message in hostile_messages(widget_names(), ["index", "value"]):
        await session.send_events([data_event(component, message)])
    for _, message in hostile_share_requests():
        await session.send_events([data_event(component, message)])
    for attr in DRAWN_PROPERTIES:
        for value in BAD_VALUES:
            event = {"kind": "ModelChanged", "model": {"id": data.id}, "attr": attr}
            await session.send_events([{**event, "new": value}])
    # Unknown models and attributes, and malformed events.
    await session.send_events([{"kind": "ModelChanged", "model": {"id": "nope"}, "attr": "x"}])
    await session.send_events([{"kind": "Bogus"}])
    # A valid move still works once all that has been handled. A plain move gets no
    # answer (the page shows it already), so a share request after it is the barrier: the
    # server handles a connection's messages in turn, and the link it answers with shows
    # the move's d_k.
    replies = session.index.messages.setdefault(component.id, [])

    def linked(d_k: int) -> bool:
        return any(
            isinstance(map_get(reply, "shared"), str) and f"d_k={d_k}&" in map_get(reply, "shared")
            for reply in replies
        )

    await session.send_events([move_event(component.id, "d_k", 5)])
    await session.send_events([data_event(component, {"share": "link"})])
    await session.wait_for(lambda: linked(D_K_GRID[5]), "a move")
    answered = len(replies)
    await session.send_events([move_event(component.id, "d_k", 3)])
    await session.send_events([data_event(component, {"share": "link"})])
    await session.wait_for(lambda: linked(D_K_GRID[3]), "the move")
    # The page shows the position it sent: nothing the session says after it may move it.
    for reply in replies[answered:]:
        values = map_get(reply, "values")
        if map_get(values, "d_k") is not None:
            assert drawn_index({"values": values}, "d_k") == 3, "the slider was pulled away"
    return session, list(replies)


def test_bad_widget_values_over_the_websocket_leave_no_traceback(app_server) -> None:
    mark = app_server.log_size()

    async def scenario() -> tuple[ProtocolSession, list[Any]]:
        session, replies = await send_bad_values(app_server.url)
        await session.close()
        return session, replies

    session, replies = run_async(scenario(), RUN_TIMEOUT)
    specs = {name: widget_spec(name) for name in widget_names()}
    for reply in replies:
        values = map_get(reply, "values")
        for name, value in map_items(values):
            assert valid(specs[name], value), (name, value)
    assert not any("websocket closed by the server" in error for error in session.errors)
    text = app_server.log_text(mark)
    assert_log_clean(text)
    assert "refused a change from a page" in text
    assert "refused a share request from a page" in text


@pytest.mark.parametrize("value", [-1, 63, 10**6, 2.5, None, "3"])
def test_a_bad_slider_index_is_put_back_where_the_state_is(app_server, value: Any) -> None:
    """Index -1 must not become d_k = 1024: the slider goes back to d_k = 64's position."""
    mark = app_server.log_size()

    async def scenario() -> tuple[Any, Any]:
        session = ProtocolSession(
            f"{app_server.url}?d_k=64", timeout=TIMEOUT, echo=False, channel=False
        )
        try:
            await session.open()
            await session.send_document_ready()
            component, _ = drawn_records(session)
            replies = session.index.messages.setdefault(component.id, [])
            await session.send_events([data_event(component, {"name": "d_k", "index": value})])
            # Refused: the server sends the drawn controls the state's values again.
            await session.wait_for(lambda: bool(replies), "the reply")
            values = map_get(replies[-1], "values")
            return drawn_index({"values": values}, "d_k"), map_get(
                map_get(values, "d_k_exact"), "value"
            )
        finally:
            await session.close()

    position, exact = run_async(scenario(), RUN_TIMEOUT)
    assert (position, exact) == (D_K_GRID.index(64), 64)
    assert_log_clean(app_server.log_text(mark))
