"""The URL sets the scene on load; bad values get a visible notice, never an error or echo."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

NOTICE_TITLE = "Some link values were adjusted"

INJECTED_JS = """() => {
  const found = [];
  const walk = (root) => {
    for (const element of root.querySelectorAll('*')) {
      if (element.tagName === 'SCRIPT' && /alert|sdpa-probe/.test(element.textContent)) {
        found.push('script: ' + element.textContent.slice(0, 80));
      }
      for (const attribute of element.getAttributeNames()) {
        if (attribute.startsWith('on') && /alert/.test(element.getAttribute(attribute))) {
          found.push(element.tagName + ' ' + attribute);
        }
      }
      if (element.tagName === 'IMG' && element.getAttribute('src') === 'x') found.push('img src=x');
      if (element.shadowRoot) walk(element.shadowRoot);
    }
  };
  walk(document);
  return found;
}"""
"""Elements that could only come from echoing the link's markup, in the page or shadow roots."""


DEEP_TEXT_JS = """(element) => {
  const text = (node) => node.nodeType === Node.TEXT_NODE ? node.textContent
    : [...(node.shadowRoot ? node.shadowRoot.childNodes : []), ...node.childNodes]
        .map(text).join(' ');
  return text(element);
}"""
"""The text of an element including what its components render in shadow roots."""


def _query(**values: str) -> str:
    return "?" + "&".join(f"{name}={quote(value, safe='')}" for name, value in values.items())


def test_url_parameters_set_every_control(app_page: AppPage) -> None:
    """A course link's parameters set the controls, the plots and the readouts on load."""
    app_page.open("?d_k=4&n=16&temperature=2&scaled=false&view=raw&causal=true&seed=3")
    page = app_page.page
    app_page.wait_histograms(4)

    heatmap = app_page.heatmap()
    assert heatmap["field"] == "raw"
    assert (heatmap["rows"], heatmap["cols"]) == (16, 16)
    assert heatmap["nanUpper"] == 16 * 15 // 2, "the causal mask should hide j > i"
    assert app_page.heatmap("weight")["rowSums"] == pytest.approx([1.0] * 16, abs=1e-4)

    shown = {"d_k (key dimension)": "4", "temperature": "2", "sequence length n": "16"}
    for name, value in shown.items():
        slider = page.get_by_role("slider", name=name, exact=True)
        expect(slider).to_have_attribute("aria-valuetext", value)
    expect(page.get_by_role("switch", name="scale by 1/√d_k")).not_to_be_checked()
    expect(page.get_by_role("switch", name="causal mask")).to_be_checked()
    view = page.get_by_role("group", name="heatmap view").get_by_role("button", name="raw")
    expect(view).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("spinbutton", name="seed")).to_have_value("3")
    expect(page.get_by_role("spinbutton", name="exact d_k")).to_have_value("4")
    expect(page.get_by_text(NOTICE_TITLE)).to_be_hidden()
    app_page.wait_url(
        d_k="4", n="16", temperature="2", scaled="false", view="raw", causal="true", seed="3"
    )


def test_readouts_reproduce_the_lesson(app_page: AppPage) -> None:
    """Seed 0 gives the lesson's numbers: d_k = 4 → 2.0 and 1.0; d_k = 1024 → 32.0 and 1.0."""
    app_page.open("?d_k=4&seed=0")
    app_page.wait_histograms(4)
    assert app_page.readout("std-raw") == "2.0"
    assert app_page.readout("std-scaled") == "1.0"
    expect(app_page.page.get_by_test_id("std-raw")).to_contain_text("√d_k = 2.0")

    box = app_page.page.get_by_role("spinbutton", name="exact d_k")
    box.fill("1024")
    box.press("Enter")
    app_page.wait_histograms(1024)
    app_page.wait_url(d_k="1024", seed="0")
    expect(app_page.page.get_by_test_id("std-raw").locator(".value")).to_have_text("32.0")
    expect(app_page.page.get_by_test_id("std-scaled").locator(".value")).to_have_text("1.0")
    expect(app_page.page.get_by_test_id("std-raw")).to_contain_text("√d_k = 32.0")


BAD_QUERIES = {
    # Each link breaks several controls at once (one page load each); the notice must
    # name every one, and the URL must show the value actually used.
    "not-a-number-or-out-of-range": (
        _query(d_k="abc", n="100000", temperature="0"),
        {"d_k": "64", "n": "1024", "temperature": "0.05"},
    ),
    "nan-and-inf": (_query(d_k="nan", temperature="inf"), {"d_k": "64", "temperature": "1"}),
    "8-kb-values": (_query(seed="7" * 8192, view="x" * 8192), {"seed": "0", "view": "weights"}),
    "markup": (
        _query(view="<script>alert(1)</script>", d_k='"><img src=x onerror=alert(1)>'),
        {"view": "weights", "d_k": "64"},
    ),
}


@pytest.mark.parametrize(("query", "fixed"), list(BAD_QUERIES.values()), ids=list(BAD_QUERIES))
def test_bad_link_values_show_a_notice_and_nothing_breaks(
    app_page: AppPage, query: str, fixed: dict[str, str]
) -> None:
    """Bad values are clamped or ignored with a visible notice; no NaN, no echoed markup.

    The fixture fails the test on any page error, console error, dialog (an ``alert``
    that ran) or server-side error, so a pass also means none of those happened.
    """
    response = app_page.open(query)
    page = app_page.page

    assert response.status == 200
    notice = page.locator(".query-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text(NOTICE_TITLE)
    text = notice.evaluate(DEEP_TEXT_JS)
    assert NOTICE_TITLE in text
    assert "<" not in text, "the notice must not echo markup"
    for name in fixed:
        assert name in text, f"the notice does not explain {name}: {text!r}"
    app_page.wait_url(**fixed)

    readouts = [app_page.readout(tile) for tile in ("std-raw", "std-scaled", "max-weight")]
    readouts.append(app_page.readout("entropy"))
    for text in readouts:
        assert text.lower() not in {"nan", "inf", "-inf"}
        assert float(text) >= 0
    weights = app_page.heatmap("weight")
    assert weights["rowSums"] == pytest.approx([1.0] * weights["rows"], abs=1e-3)
    assert page.evaluate(INJECTED_JS) == []
