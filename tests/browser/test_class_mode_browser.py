"""Class mode in Chromium: one presenter and two students on a server with a presenter key.

The presenter sends a scene, both students take it; one student explores on their own and
the next scene passes them by while the other follows; going back takes the instructor's
scene; with Students follow me on, a presenter's move reaches the follower by itself; a
student's quiz answer shows in the presenter's chart, and in the class's once revealed; a
second tab of the student's browser is the same voter (its answer replaces the first), and
the presenter's bar says how many browsers the answers come from against how many pages are
connected. The class bar is axe-clean on both roles' pages, light and dark.

The roll follows the pages (issue 48): a student who closes the tab is counted out within
:data:`COUNTED_OUT_S`, and the presenter's bar no longer says the last scene reached the
class as it was; a student who corrects an answer within the answer interval is counted
with the correction.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_support import assert_axe_clean, axe_installed
from browser_support import FIGURES_HELPER_JS, AppServer, start_server, stop_server
from conftest import PAGE_TIMEOUT_MS, WIDE, AppPage
from playwright.sync_api import Browser, BrowserContext, Locator, expect

from app.page.views.quiz import DIVISOR_LABEL
from app.served.class_seat import ANSWER_INTERVAL_S
from app.served.classroom import PRESENT_PARAMETER, PRESENTER_KEY_ENV
from app.served.components.class_bar import BALLOT_STORAGE, CLASS_TEXTS
from app.simulation.spec import CONTROL_BY_NAME

pytestmark = pytest.mark.browser

KEY = "browser-test-presenter-key"
D_K = CONTROL_BY_NAME["d_k"].label
TEMPERATURE = CONTROL_BY_NAME["temperature"].label
COUNTED_OUT_S = 5.0
"""The longest a closed student's page may still count in the presenter's roll."""


@pytest.fixture(scope="module")
def class_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """A server of its own with a presenter key (the shared one has no class mode)."""
    log_path: Path = tmp_path_factory.mktemp("class-mode") / "server.log"
    try:
        server = start_server(log_path, env={PRESENTER_KEY_ENV: KEY})
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    stop_server(server)


def _open(
    chromium: Browser,
    server: AppServer,
    query: str,
    scheme: str = "light",
    context: BrowserContext | None = None,
) -> AppPage:
    """A page of ``query``, in a browser of its own (a new context) or as a tab of
    ``context``'s."""
    if context is None:
        context = chromium.new_context(viewport=WIDE, color_scheme=scheme)
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        context.add_init_script(FIGURES_HELPER_JS)
    app = AppPage(page=context.new_page(), server=server, log_mark=server.log_size())
    app.page.on("pageerror", lambda error: app.problems.append(f"page error: {error}"))
    app.page.on(
        "console",
        lambda message: message.type == "error" and app.problems.append(message.text),
    )
    app.open(query, lesson=False)
    return app


def _class_bar(app: AppPage) -> Locator:
    """The class bar on ``app``'s page."""
    return app.page.get_by_role("region", name=CLASS_TEXTS["region"])


def _answer_divisor(app: AppPage, answer: str) -> None:
    """Open ``app``'s lesson and answer its divisor question with ``answer``."""
    app.open_lesson()
    box = app.page.get_by_label(DIVISOR_LABEL)
    box.fill(answer)
    box.press("Enter")


def test_a_presenter_and_two_students(chromium: Browser, class_server: AppServer) -> None:
    presenter = _open(chromium, class_server, f"?{PRESENT_PARAMETER}={KEY}")
    follower = _open(chromium, class_server, "")
    explorer = _open(chromium, class_server, "?temperature=1")
    pages = (presenter, follower, explorer)
    try:
        panel = _class_bar(presenter)
        expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=2))
        for student in (follower, explorer):
            expect(_class_bar(student)).to_contain_text(CLASS_TEXTS["following"])

        # Send my scene: both students take the presenter's d_k.
        presenter.press(D_K, "End")
        presenter.wait_url(d_k="1024")
        panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
        expect(panel).to_contain_text(CLASS_TEXTS["sent_many"].format(count=2))
        follower.wait_url(d_k="1024")
        explorer.wait_url(d_k="1024")

        # The explorer moves: they stop following, and the next scene passes them by.
        explorer.press(TEMPERATURE, "ArrowRight")
        expect(_class_bar(explorer)).to_contain_text(CLASS_TEXTS["exploring"])
        presenter.press(D_K, "Home")
        presenter.wait_url(d_k="1")
        panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
        follower.wait_url(d_k="1")
        expect(_class_bar(follower)).to_contain_text(CLASS_TEXTS["following"])
        assert "d_k=1024" in explorer.page.url

        # Back to the instructor's scene, by keyboard.
        back = _class_bar(explorer).get_by_role("button", name=CLASS_TEXTS["back"])
        back.focus()
        back.press("Enter")
        explorer.wait_url(d_k="1")
        expect(_class_bar(explorer)).to_contain_text(CLASS_TEXTS["following"])

        # Students follow me: a move reaches the follower by itself.
        live = panel.get_by_role("switch", name=CLASS_TEXTS["live"])
        live.check()
        presenter.press(D_K, "ArrowRight")
        follower.wait_url(d_k=presenter.page.url.split("d_k=")[1].split("&")[0])

        # A question: the follower answers in the lesson; the presenter's chart counts it,
        # and the class sees the counts once the presenter shows them.
        _answer_divisor(follower, "8")
        right = panel.locator('[data-question="divisor"] [data-choice="right"] .sdpa-class-count')
        expect(right).to_have_text("1")
        student_answers = _class_bar(explorer).locator(".sdpa-class-answers")
        expect(student_answers).to_be_hidden()
        panel.get_by_role("switch", name=CLASS_TEXTS["reveal"]).check()
        expect(student_answers).to_be_visible()
        expect(
            student_answers.locator(
                '[data-question="divisor"] [data-choice="right"] .sdpa-class-count'
            )
        ).to_have_text("1")

        # A second tab of the follower's browser votes with the same ballot: one voter,
        # whose last answer counts; the presenter sees 2 browsers on 3 pages.
        voters = panel.locator(".sdpa-class-voters")
        expect(voters).to_have_text(CLASS_TEXTS["voters"].format(browsers=2, pages=2))
        tab = _open(chromium, class_server, "", context=follower.page.context)
        pages += (tab,)
        expect(_class_bar(tab)).to_contain_text(CLASS_TEXTS["following"])
        expect(voters).to_have_text(CLASS_TEXTS["voters"].format(browsers=2, pages=3))
        # Once the tab has joined: a lesson asked for while the class bar arrives can stay
        # blank (an open problem: about one run in five when pressed at once; its component
        # is on the page, its figures never drawn).
        _answer_divisor(tab, "64")
        wrong = panel.locator('[data-question="divisor"] [data-choice="wrong"] .sdpa-class-count')
        expect(wrong).to_have_text("1")
        expect(right).to_have_text("0")
        ballots = [
            app.page.evaluate("key => localStorage.getItem(key)", BALLOT_STORAGE)
            for app in pages[1:]
        ]
        assert ballots[0] == ballots[2] != ballots[1] and all(ballots)

        panel.get_by_role("button", name=CLASS_TEXTS["reset"]).click()
        expect(wrong).to_have_text("0")

        problems = [problem for app in pages for problem in app.problems]
        assert problems == []
        assert not presenter.server_errors()
    finally:
        for app in pages:
            app.page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_class_bar_is_accessible(
    chromium: Browser, class_server: AppServer, scheme: str
) -> None:
    if not axe_installed():
        pytest.fail("npm's axe-core is missing: run `npm ci` (scripts/test.sh does)")
    presenter = _open(chromium, class_server, f"?{PRESENT_PARAMETER}={KEY}", scheme)
    student = _open(chromium, class_server, "", scheme)
    try:
        expect(_class_bar(student)).to_be_visible()
        for app, role in ((presenter, "presenter"), (student, "student")):
            expect(_class_bar(app)).to_be_visible()
            assert_axe_clean(app.page, "served", f"{scheme}: class mode, {role}")
    finally:
        for app in (presenter, student):
            app.page.context.close()


def test_a_closed_tab_leaves_the_roll_and_a_quick_correction_counts(
    chromium: Browser, class_server: AppServer
) -> None:
    presenter = _open(chromium, class_server, f"?{PRESENT_PARAMETER}={KEY}")
    staying = _open(chromium, class_server, "")
    leaving = _open(chromium, class_server, "")
    pages = [presenter, staying, leaving]
    try:
        panel = _class_bar(presenter)
        expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=2))
        panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
        reached_two = CLASS_TEXTS["sent_many"].format(count=2)
        expect(panel).to_contain_text(reached_two)

        # The tab closes: counted out at once, though Bokeh keeps its session for 15 s.
        closed_at = time.monotonic()
        leaving.page.close()
        pages.remove(leaving)
        expect(panel).to_contain_text(
            CLASS_TEXTS["students_one"], timeout=int(COUNTED_OUT_S * 1000)
        )
        counted_out_s = time.monotonic() - closed_at
        expect(panel).not_to_contain_text(reached_two)
        print(f"counted out {counted_out_s:.2f} s after the tab closed")
        assert counted_out_s <= COUNTED_OUT_S

        # 9, then 8 at once: the page says "Right: 8", and so does the presenter's chart.
        expect(_class_bar(staying)).to_contain_text(CLASS_TEXTS["following"])
        staying.open_lesson()
        box = staying.page.get_by_label(DIVISOR_LABEL)
        box.fill("9")
        started = time.monotonic()
        box.press("Enter")
        box.fill("8")
        box.press("Enter")
        corrected_within_s = time.monotonic() - started
        count = '[data-question="divisor"] [data-choice="{}"] .sdpa-class-count'
        expect(panel.locator(count.format("right"))).to_have_text("1")
        expect(panel.locator(count.format("wrong"))).to_have_text("0")
        print(f"corrected within {corrected_within_s:.2f} s")
        # Else the correction would not have tested the interval.
        assert corrected_within_s < ANSWER_INTERVAL_S

        problems = [problem for app in pages for problem in app.problems]
        assert problems == []
        assert not presenter.server_errors()
    finally:
        for app in pages:
            app.page.context.close()
