"""Suite-wide rules and the one Chromium every browser test shares.

Under CI no test may be skipped. Playwright's sync API allows one instance per thread, so
the served-app tests (tests/browser) and the offline-page tests (tests/export) share one
session-wide browser from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """Debian's headless Chromium, launched once for the session through Playwright."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Under CI (``CI=true``) turn a skipped test into a failure: CI must run every test."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where every test must run: {reason}"
