"""Class mode's page helpers, shared by the one-process browser tests
(tests/browser/test_class_mode_browser.py) and the two-worker ones over Redis
(tests/proxy/test_class_across_processes.py): the class bar, its answers' counts, the
presenter's peek, a student's quick correction of an answer and how a page reads the roll.

Every helper takes an ``AppPage`` of either suite (``.page``, ``.open_lesson()``) and waits on
the page's state, never on time.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Locator, expect

from app.page.views.quiz import DIVISOR_LABEL
from app.served.class_seat import ANSWER_INTERVAL_S
from app.served.components.class_bar import CLASS_TEXTS

COUNT = '[data-question="{question}"] [data-choice="{choice}"] .sdpa-class-count'
"""Where a chart shows how many answers count as a choice of a question."""


def class_bar(app: Any) -> Locator:
    """The class bar on ``app``'s page."""
    return app.page.get_by_role("region", name=CLASS_TEXTS["region"])


def count(within: Locator, question: str, choice: str) -> Locator:
    """The count of ``choice`` in ``question``'s chart under ``within``."""
    return within.locator(COUNT.format(question=question, choice=choice))


def open_answers(bar: Locator) -> Locator:
    """Open the bar's answers disclosure (once) and return it."""
    disclosure = bar.locator("details.sdpa-class-disclosure")
    if disclosure.get_attribute("open") is None:
        disclosure.locator("summary").click()
    expect(disclosure).to_have_attribute("open", "")
    return disclosure


def peek(panel: Locator) -> None:
    """On the presenter's bar: open the answers and peek at the counts (this page only)."""
    open_answers(panel)
    button = panel.get_by_role("button", name=CLASS_TEXTS["peek"])
    if button.get_attribute("aria-pressed") != "true":
        button.click()
    expect(button).to_have_attribute("aria-pressed", "true")


def answer_divisor(app: Any, answer: str) -> None:
    """Open ``app``'s lesson and answer its divisor question with ``answer``."""
    app.open_lesson()
    box = app.page.get_by_label(DIVISOR_LABEL)
    box.fill(answer)
    box.press("Enter")


def correct_9_to_8(student: Any, panel: Locator, timeout_ms: int = 5_000) -> float:
    """The student checks 9, then 8 at once (within the answer interval); the presenter's
    peeked chart counts the 8 and not the 9. Returns how long the correction took (s)."""
    peek(panel)
    student.open_lesson()
    box = student.page.get_by_label(DIVISOR_LABEL)
    box.fill("9")
    started = time.monotonic()
    box.press("Enter")
    box.fill("8")
    box.press("Enter")
    corrected_within_s = time.monotonic() - started
    expect(count(panel, "divisor", "right")).to_have_text("1", timeout=timeout_ms)
    expect(count(panel, "divisor", "wrong")).to_have_text("0", timeout=timeout_ms)
    # Else the correction would not have tested the interval.
    assert corrected_within_s < ANSWER_INTERVAL_S
    return corrected_within_s


def student_status(app: Any) -> tuple[str, str]:
    """The title and detail a student's bar reads, as the status line shows them."""
    bar = class_bar(app)
    return (
        bar.locator(".sdpa-class-title").inner_text(),
        bar.locator(".sdpa-class-detail").inner_text(),
    )
