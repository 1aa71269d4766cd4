"""What every page loads the same reaches a browser once: the served bundle, its stylesheet
and the page data come with a year's ``immutable`` lifetime from ``sdpa-sim``, and a second
page in the same browser takes them from its cache, styled as the first."""

from __future__ import annotations

from typing import Any

from conftest import DRAWN_JS
from procs_support import FrontServer

from app.page.bundle import served_bundle
from app.served.page_data import CACHE_CONTROL

STYLED_JS = """(name) => {
  // Each component's shadow root links the bundle's stylesheet, loaded with its rules.
  const hosts = [...document.querySelectorAll('*')].filter((el) => el.shadowRoot);
  const linked = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { walk(el.shadowRoot); }
    }
    for (const link of root.querySelectorAll('link[rel="stylesheet"]')) {
      if (link.href.endsWith(name)) linked.push(link.sheet ? link.sheet.cssRules.length : 0);
    }
  };
  hosts.forEach((host) => walk(host.shadowRoot));
  return linked;
}"""
"""The number of rules of every loaded link to the stylesheet ``name`` in any shadow root."""

SHARED = ("/_bundle_path/dist/", "/_bundle_css/dist/", "/page-data/")
"""What every page loads the same, by a part of its address."""


def shared_kind(url: str) -> str | None:
    """Which of :data:`SHARED` ``url`` is, if any."""
    return next((part for part in SHARED if part in url), None)


def test_the_bundle_its_stylesheet_and_the_page_data_are_fetched_once(
    chromium: Any, guarded_server: FrontServer
) -> None:
    context = chromium.new_context()
    problems: list[str] = []
    try:
        first = context.new_page()
        first.on("pageerror", lambda error: problems.append(str(error)))
        headers: dict[str, tuple[int, str]] = {}
        first.on(
            "response",
            lambda response: (
                headers.__setitem__(
                    response.url, (response.status, response.headers.get("cache-control", ""))
                )
                if shared_kind(response.url)
                else None
            ),
        )
        first.goto(guarded_server.url)
        first.wait_for_function(DRAWN_JS)
        kinds = {shared_kind(url) for url in headers}
        assert kinds == set(SHARED), headers
        for url, (status, cache_control) in headers.items():
            assert status == 200 and cache_control == CACHE_CONTROL, (url, cache_control)
        stylesheet = served_bundle().with_suffix(".css").name
        rules = first.evaluate(STYLED_JS, stylesheet)
        assert len(rules) >= 3 and all(count > 50 for count in rules), rules

        # A second page of the same browser: none of them goes to the network again.
        second = context.new_page()
        second.on("pageerror", lambda error: problems.append(str(error)))
        cdp = context.new_cdp_session(second)
        cdp.send("Network.enable")
        received: dict[str, dict] = {}
        cdp.on(
            "Network.responseReceived",
            lambda event: (
                received.__setitem__(event["response"]["url"], event["response"])
                if shared_kind(event["response"]["url"])
                else None
            ),
        )
        second.goto(guarded_server.url)
        second.wait_for_function(DRAWN_JS)
        assert {shared_kind(url) for url in received} == set(SHARED), received.keys()
        for url, response in received.items():
            cached = response.get("fromDiskCache") or response.get("fromMemoryCache")
            assert cached, f"{url} was fetched again"
        assert second.evaluate(STYLED_JS, stylesheet) == rules
        assert problems == [], problems
    finally:
        context.close()
