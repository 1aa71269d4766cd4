"""A sample of the hostile links in Chromium against the served app.

Each link is opened as a student's browser opens it. The ``app_page`` fixture fails a test
on any page error, console error, dialog (an ``alert`` that ran) or server-side error; here
each test also checks that no element was injected, that every request stayed on the app's
own origin, that the notice is visible exactly when the model says there is something to
explain (and says it), that no NaN or infinity is on screen, and that the URL the page ends
with is the one the model computes: the app's values, then the link's other parameters
byte for byte.
"""

from __future__ import annotations

import random
import re
import string
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from conftest import DRAWN_JS
from guard_cases import HEADER_ROUTED_TARGETS
from hostile_queries import BROWSER_LINKS, ROW_LINKS
from playwright.sync_api import expect
from procs_support import FrontServer
from test_url_state import DEEP_TEXT_JS, INJECTED_JS
from tornado.httputil import parse_qs_bytes

from app.page.views.heatmap import row_outline
from app.simulation.query import compose_search
from app.simulation.state import SimulationState

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

SCREEN_NUMBERS_JS = """() => {
  const texts = [];
  const walk = (root) => {
    for (const element of root.querySelectorAll('*')) {
      if (element.getAttribute('role') === 'slider') {
        texts.push(element.getAttribute('aria-valuetext') || '');
      }
      if (element.tagName === 'INPUT') texts.push(element.value);
      if (element.classList && element.classList.contains('value')) texts.push(element.textContent);
      if (element.shadowRoot) walk(element.shadowRoot);
    }
  };
  walk(document);
  return texts;
}"""
"""What the page shows as numbers: the sliders' values, the boxes, the readout values."""


OUTLINE_JS = """() => {
  const {data} = sdpaFigure('row_outline');
  return {top: [...data.top], bottom: [...data.bottom]};
}"""
"""The heatmap's dashed outline of the compared row (the component's ``row_outline`` source)."""


def expected_state(query: str) -> SimulationState:
    state = SimulationState()
    state.apply_query(parse_qs_bytes(query, keep_blank_values=True))
    return state


@pytest.mark.parametrize("query", list(BROWSER_LINKS.values()), ids=list(BROWSER_LINKS))
def test_hostile_link_in_chromium(app_page: AppPage, query: str) -> None:
    page = app_page.page
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    response = app_page.open(f"?{query}", lesson=False)
    # What Chromium asked for (it may encode a character the link left as it was).
    sent = urlsplit(response.request.url).query
    state = expected_state(sent)
    app_page.wait_url(**state.query())
    assert page.evaluate("window.location.search") == compose_search(f"?{sent}", state.query())

    notice = page.locator(".query-notice")
    if state.notice:
        expect(notice).to_be_visible()
        shown = " ".join(notice.evaluate(DEEP_TEXT_JS).split())
        for sentence in state.notice.split(". "):
            assert " ".join(sentence.split()) in shown
    else:
        expect(notice).to_be_hidden()
    if state.preset:
        expect(page.locator(".preset-scene")).to_be_visible()

    assert page.evaluate(INJECTED_JS) == []
    # Same-origin blob: URLs are the page's own module shims; data: URLs load nothing.
    own = (app_page.server.base_url + "/", f"blob:{app_page.server.base_url}/", "data:")
    foreign = [url for url in requests if not url.startswith(own)]
    assert foreign == [], foreign
    numbers = page.evaluate(SCREEN_NUMBERS_JS)
    assert numbers, "no numbers found on the page"
    for text in numbers:
        assert not any(word in text.lower() for word in ("nan", "inf")), numbers
    weights = app_page.heatmap("weight")
    assert weights["rowSums"] == pytest.approx([1.0] * weights["rows"], abs=1e-3)


@pytest.mark.parametrize(("query", "row"), list(ROW_LINKS.values()), ids=list(ROW_LINKS))
def test_a_row_past_n_is_the_last_row_in_chromium(app_page: AppPage, query: str, row: int) -> None:
    """The notice says so, the URL writes the row shown and the outline is drawn there."""
    page = app_page.page
    app_page.open(f"?{query}", lesson=False)
    state = expected_state(query)
    assert state.row == row
    app_page.wait_url(**state.query())
    notice = page.locator(".query-notice")
    expect(notice).to_be_visible()
    assert f"is past the last of n = {state.n}; using {row}." in notice.evaluate(DEEP_TEXT_JS)
    outline = page.evaluate(OUTLINE_JS)
    expected = row_outline(state.n, row)
    assert outline["top"] == expected["top"] and outline["bottom"] == expected["bottom"]


def test_a_link_too_long_to_keep_opens_the_page_with_a_notice(
    chromium: Any, guarded_server: FrontServer
) -> None:
    """``?x=<25,000 characters>&d_k=8``: the page renders (its websocket opens), says the
    parameter was too long to keep, and its address keeps the rest."""
    rng = random.Random(25)
    long = "".join(rng.choices(string.ascii_letters + string.digits + "-_", k=25_000))
    page = chromium.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    try:
        page.goto(f"{guarded_server.url}?x={long}&d_k=8&id=7")
        page.wait_for_function(DRAWN_JS)
        notice = page.locator(".query-notice")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("x: the parameter is 25,002 characters long")
        page.wait_for_function(
            "() => !location.search.includes('sdpa-omitted') && location.search.includes('id=7')"
        )
        search = page.evaluate("location.search")
        names = [piece.partition("=")[0] for piece in search[1:].split("&")]
        assert "d_k=8" in search.split("&") and "x" not in names, search[:200]
        assert problems == [], problems
    finally:
        page.close()


@pytest.mark.parametrize("serving", ["sdpa-sim", "panel serve"])
@pytest.mark.parametrize("target", HEADER_ROUTED_TARGETS, ids=range(len(HEADER_ROUTED_TARGETS)))
def test_a_link_with_bokehs_parameters_loads_nothing_and_says_why(
    request: pytest.FixtureRequest, chromium: Any, serving: str, target: str
) -> None:
    """Chromium opens a link carrying ``bokeh-*`` parameters: ``sdpa-sim``'s guard and plain
    ``panel serve``'s authorize callback (app/server/plain_serve.py) answer with a plain 4xx that
    says why, and no script runs (but plain ``/``, which Bokeh redirects to the page without
    its query); nothing is requested from another host."""
    server = request.getfixturevalue("guarded_server" if serving == "sdpa-sim" else "app_server")
    page = chromium.new_page()
    hosts: list[str] = []
    # Requests that reach a host (a page's data: and blob: addresses have none).
    page.on("request", lambda sent: hosts.append(urlsplit(sent.url).hostname or "local"))
    try:
        response = page.goto(server.base_url + target.replace("KNOWN", "abc"))
        assert response is not None
        if serving == "panel serve" and target.startswith("/?"):
            assert urlsplit(response.url).query == "" and response.status == 200
        else:
            assert 400 <= response.status < 500, response.status
            expect(page.locator("body")).to_contain_text(
                re.compile("load the page (again )?without")
            )
            assert page.evaluate("typeof window.Bokeh") == "undefined"
        assert set(hosts) <= {"127.0.0.1", "local"}, hosts
    finally:
        page.close()
