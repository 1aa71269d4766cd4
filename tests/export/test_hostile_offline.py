"""A sample of the hostile links in Chromium against the offline page (file://).

The ``open_export`` fixture fails a test whose page logs an error, shows a dialog (an
``alert`` that ran) or tries to reach the network. Each test here also checks that no
element was injected, that the notice says what the served app's parser says (plus what
the page had to fit to its limits), that no NaN or infinity is on screen, and that the URL
the page writes keeps the link's other parameters byte for byte, without Bokeh's.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qsl

import pytest
from hostile_queries import BROWSER_LINKS
from tornado.httputil import parse_qs_bytes

from app.export.page import URL_NAMES
from app.page.offline_controls import OFFLINE_CONTROLS
from app.simulation.query import compose_search, parse_query
from app.simulation.spec import CONTROL_BY_NAME

from .conftest import OfflinePage
from .test_browser import press

pytestmark = pytest.mark.browser

LINKS = {
    **BROWSER_LINKS,
    "100kB": "d_k=" + "9" * 100_000 + "&course=" + "y" * 100_000,
    "reserved": "bokeh-session-id=KNOWN&d_k=8&Bokeh-Token=t&keep=1",
}
"""The served sample (tests/browser/test_hostile_browser.py), with what only a page that
needs no server can be opened with: 100 kB values and Bokeh's reserved names."""

INJECTED_JS = r"""() => {
  const found = [];
  const walk = (root) => {
    for (const element of root.querySelectorAll('*')) {
      const tag = element.tagName;
      const payload = /alert\(1\)|evil\.example/;  // what the links carry; bundles do not
      if (tag === 'SCRIPT' && payload.test(element.textContent)) found.push('script');
      if (tag === 'IMG' && element.getAttribute('src') === 'x') found.push('img src=x');
      if (['SVG', 'IFRAME'].includes(tag.toUpperCase())) found.push(tag);
      for (const attribute of element.getAttributeNames()) {
        const value = element.getAttribute(attribute);
        if (attribute.startsWith('on') && /alert/.test(value)) found.push(`${tag} ${attribute}`);
        if (/evil|javascript:/.test(value)) found.push(`${tag} ${attribute}=${value}`);
      }
      if (element.shadowRoot) walk(element.shadowRoot);
    }
  };
  walk(document);
  return found;
}"""
"""Elements only a link's markup could have made, in the page or any shadow root."""

NOTICE_TEXT_JS = """(name) => {
  const model = Bokeh.documents[0].get_model_by_name(name);
  return Bokeh.index.find_one(model).shadow_el.textContent;
}"""


def served_notices(query: str) -> list[str]:
    return parse_query(parse_qs_bytes(query, keep_blank_values=True)).notices


def assert_nothing_injected_or_infinite(opened: OfflinePage) -> None:
    assert opened.page.evaluate(INJECTED_JS) == []
    snapshot = opened.snapshot()
    numbers = [v for v in snapshot["state"].values() if isinstance(v, int | float)]
    numbers += [snapshot[key] for key in ("raw_std", "scaled_std", "mean_max_weight")]
    assert all(math.isfinite(number) for number in numbers), snapshot
    readouts = opened.page.locator("#sdpa-readouts").inner_text().lower()
    assert "nan" not in readouts and "inf" not in readouts
    opened.open_sections()
    for control in OFFLINE_CONTROLS:
        if control.widget != "slider":
            continue
        slider = opened.page.get_by_role("slider", name=control.label, exact=True)
        text = slider.get_attribute("aria-valuetext")
        assert text and "nan" not in text.lower() and "inf" not in text.lower()


def written_search(opened: OfflinePage) -> str:
    """The page's query once it has written its state (its own parameters come first)."""
    opened.page.wait_for_function(
        "(first) => window.location.search.startsWith(`?${first}=`)", arg=URL_NAMES[0]
    )
    return opened.page.evaluate("window.location.search")


@pytest.mark.parametrize("query", list(LINKS.values()), ids=list(LINKS))
def test_hostile_link_offline(open_export, query: str) -> None:
    opened = open_export(f"?{query}")
    assert_nothing_injected_or_infinite(opened)

    notices = served_notices(query)
    shown = opened.page.evaluate(NOTICE_TEXT_JS, "notice")
    visible = opened.model("notice", "m.visible")
    if notices:
        assert visible
        assert all(text in shown for text in notices), (notices, shown)
    elif visible:  # only what the page had to fit to its own limits
        assert "offline page" in shown, shown

    # The page's own values first, then the link's others as compose_search keeps them.
    search = written_search(opened)
    own = "&".join(search[1:].split("&")[: len(URL_NAMES)])
    written = dict(parse_qsl(own, keep_blank_values=True))
    assert list(written) == list(URL_NAMES), search[:200]
    assert search == compose_search(f"?{query}", written)


def test_a_preset_link_shows_its_scene_until_a_control_leaves_it(open_export) -> None:
    opened = open_export("?preset=collapse&course=x")
    snapshot = opened.snapshot()
    assert snapshot["preset"] == "collapse"
    assert (snapshot["state"]["d_k"], snapshot["state"]["scaled"]) == (512, False)
    assert opened.model("scene", "m.visible") is True
    scene = opened.page.evaluate(NOTICE_TEXT_JS, "scene")
    assert "Unscaled collapse" in scene
    # The file's presets fit it (d_k = 512): nothing of the link needed adjusting.
    assert "d_k = 512" in scene
    assert opened.model("notice", "m.visible") is False
    assert "preset=collapse" in written_search(opened)

    press(opened, "slider", CONTROL_BY_NAME["temperature"].label, "ArrowRight")
    assert opened.snapshot()["preset"] == ""
    assert opened.model("scene", "m.visible") is False
    opened.page.wait_for_function("() => window.location.search.startsWith('?preset=&')")
    assert opened.page.evaluate("window.location.search").endswith("&course=x")
