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

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from hostile_queries import BROWSER_LINKS, ROW_LINKS
from playwright.sync_api import expect
from test_url_state import DEEP_TEXT_JS, INJECTED_JS
from tornado.httputil import parse_qs_bytes

from app.query import compose_search
from app.state import SimulationState

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
  const {data} = Bokeh.documents[0].get_model_by_name('row_outline').data_source;
  return {top: [...data.top], bottom: [...data.bottom]};
}"""
"""The heatmap's dashed outline of the compared row (its renderer is named row_outline)."""


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
    assert outline["top"] == [row] and outline["bottom"] == [row + 1]
