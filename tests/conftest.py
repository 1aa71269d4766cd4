"""Suite-wide rules and the one Chromium every browser test shares.

Under CI no test may be skipped. Playwright's sync API allows one instance per thread, so
the served-app tests (tests/browser) and the offline-page tests (tests/export) share one
session-wide browser from here.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS
from redis_support import RedisServer, start_redis

if TYPE_CHECKING:
    from playwright.sync_api import Browser


INTERRUPTED_EXIT_CODE = 130
"""What a shell reports for a command stopped by Ctrl-C (128 + SIGINT)."""

_interrupts = 0


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: stop the run. A terminal sends SIGINT to the whole process group, so Chromium,
    Playwright's driver and the test servers die at once; Playwright then reports a closed
    connection instead of the KeyboardInterrupt, and pytest would go on failing every test
    left. The flag makes the next test end the run; a second Ctrl-C leaves at once."""
    global _interrupts
    _interrupts += 1
    if _interrupts > 1:
        os._exit(INTERRUPTED_EXIT_CODE)
    raise KeyboardInterrupt


def pytest_configure(config: pytest.Config) -> None:
    """Make Ctrl-C stop the whole run promptly (see :func:`_on_interrupt`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_interrupt)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """After a Ctrl-C that a test swallowed, start no other test."""
    if _interrupts:
        pytest.exit("interrupted by Ctrl-C", returncode=INTERRUPTED_EXIT_CODE)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """Debian's headless Chromium, launched once for the session through Playwright."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
    finally:
        try:
            playwright.stop()
        except Exception:
            # After Ctrl-C the driver is gone with the rest of the process group.
            if not _interrupts:
                raise


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Under CI (``CI=true``) turn a skipped test into a failure: CI must run every test."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where every test must run: {reason}"


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server of the test's own on a loopback port (class mode's bus); its absence
    fails the test (scripts/test.sh installs Debian's)."""
    try:
        server = start_redis(tmp_path_factory.mktemp("redis") / "redis.log")
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    server.stop()
