"""Class mode in Chromium: one presenter and two students on a server with a presenter key.

The presenter sends a scene, both students take it; one student explores on their own and
the next scene passes them by while the other follows; one button (no switch) takes the
instructor's scene again; with Students follow me on, a presenter's move reaches the follower
by itself; a student's quiz answer shows on the presenter's chart only once the presenter
peeks (the projected bar says how many answered, never what or which is right), and in the
class's once shown: in the students' bars and beside each question of their lesson; a second
tab of the student's browser is the same voter (its answer replaces the first), and the
presenter's bar says how many browsers the answers come from against how many pages are
connected. The class bar is axe-clean on both roles' pages, light and dark.

The projector (issue 48): the presenter's address loses the key once its page keeps the
presenter cookie (a token, not the key), a reload still presents and a forged cookie does
not; the bar is at most :data:`CLOSED_BAR_PX` tall at 1280×800 with its answers closed.

The roll follows the pages (issue 48): a student who closes the tab is counted out within
:data:`COUNTED_OUT_S`, and the presenter's bar no longer says the last scene reached the
class as it was; a student who corrects an answer within the answer interval is counted
with the correction.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from axe_support import assert_axe_clean, axe_installed
from browser_support import FIGURES_HELPER_JS, AppServer, start_server, stop_server
from class_support import answer_divisor, class_bar, correct_9_to_8, count, open_answers, peek
from conftest import PAGE_TIMEOUT_MS, WIDE, AppPage
from playwright.sync_api import Browser, BrowserContext, expect

from app.served.classroom import PRESENT_PARAMETER, PRESENTER_COOKIE, PRESENTER_KEY_ENV, Classroom
from app.served.components.class_bar import BALLOT_STORAGE, CLASS_TEXTS
from app.simulation.spec import CONTROL_BY_NAME

pytestmark = pytest.mark.browser

KEY = "browser-test-presenter-key"
D_K = CONTROL_BY_NAME["d_k"].label
TEMPERATURE = CONTROL_BY_NAME["temperature"].label
COUNTED_OUT_S = 5.0
"""The longest a closed student's page may still count in the presenter's roll."""
CLOSED_BAR_PX = 80
"""The tallest the presenter's bar may be on the first screen at 1280×800, closed."""


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


def _assert_clean(pages: list[AppPage] | tuple[AppPage, ...]) -> None:
    """No page ran into a problem, and the server logged no error."""
    assert [problem for app in pages for problem in app.problems] == []
    assert not pages[0].server_errors()


def test_a_presenter_and_two_students(chromium: Browser, class_server: AppServer) -> None:
    presenter = _open(chromium, class_server, f"?{PRESENT_PARAMETER}={KEY}")
    follower = _open(chromium, class_server, "")
    explorer = _open(chromium, class_server, "?temperature=1")
    pages = (presenter, follower, explorer)
    try:
        panel = class_bar(presenter)
        expect(panel).to_contain_text(CLASS_TEXTS["students_many"].format(count=2))
        for student in (follower, explorer):
            expect(class_bar(student)).to_contain_text(CLASS_TEXTS["following"])

        # Send my scene: both students take the presenter's d_k.
        presenter.press(D_K, "End")
        presenter.wait_url(d_k="1024")
        panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
        expect(panel).to_contain_text(CLASS_TEXTS["sent_many"].format(count=2))
        follower.wait_url(d_k="1024")
        explorer.wait_url(d_k="1024")

        # The explorer moves: they stop following, and the next scene passes them by.
        explorer.press(TEMPERATURE, "ArrowRight")
        expect(class_bar(explorer)).to_contain_text(CLASS_TEXTS["exploring"])
        # One control to rejoin: the button back, and no switch beside it.
        expect(class_bar(explorer).get_by_role("switch")).to_have_count(0)
        expect(class_bar(explorer).get_by_role("button")).to_have_count(1)
        presenter.press(D_K, "Home")
        presenter.wait_url(d_k="1")
        panel.get_by_role("button", name=CLASS_TEXTS["send"]).click()
        follower.wait_url(d_k="1")
        expect(class_bar(follower)).to_contain_text(CLASS_TEXTS["following"])
        expect(class_bar(follower).get_by_role("button", name=CLASS_TEXTS["back"])).to_be_hidden()
        assert "d_k=1024" in explorer.page.url

        # Back to the instructor's scene, by keyboard.
        back = class_bar(explorer).get_by_role("button", name=CLASS_TEXTS["back"])
        back.focus()
        back.press("Enter")
        explorer.wait_url(d_k="1")
        expect(class_bar(explorer)).to_contain_text(CLASS_TEXTS["following"])

        # Students follow me: a move reaches the follower by itself.
        live = panel.get_by_role("switch", name=CLASS_TEXTS["live"])
        live.check()
        presenter.press(D_K, "ArrowRight")
        follower.wait_url(d_k=presenter.page.url.split("d_k=")[1].split("&")[0])

        # A question: the follower answers in the lesson. The projected bar says how many
        # answered, never what, until the presenter peeks (only there) or shows the class.
        answer_divisor(follower, "8")
        disclosure = open_answers(panel)
        expect(disclosure).to_contain_text(CLASS_TEXTS["answered"].format(count=1))
        expect(panel.locator(".sdpa-class-count")).to_have_count(0)
        expect(panel).not_to_contain_text(CLASS_TEXTS["right"])
        peek(panel)
        right = count(panel, "divisor", "right")
        expect(right).to_have_text("1")
        student_answers = class_bar(explorer).locator("details.sdpa-class-disclosure")
        expect(student_answers).to_be_hidden()
        beside = follower.page.locator(".quiz-question .sdpa-quiz-class")
        expect(beside).to_have_count(0)
        panel.get_by_role("switch", name=CLASS_TEXTS["reveal"]).check()
        expect(student_answers).to_be_visible()
        expect(count(open_answers(class_bar(explorer)), "divisor", "right")).to_have_text("1")
        # The follower sees the result where they answered, beside each question.
        expect(beside).to_have_count(3)
        divisor_result = follower.page.locator(
            '.quiz-question:has(button[data-check="divisor"]) .sdpa-quiz-class'
        )
        expect(count(divisor_result, "divisor", "right")).to_have_text("1")
        expect(divisor_result).to_contain_text(CLASS_TEXTS["right"])

        # A second tab of the follower's browser votes with the same ballot: one voter,
        # whose last answer counts; the presenter sees 2 browsers on 3 pages.
        voters = panel.locator(".sdpa-class-voters")
        expect(voters).to_have_text(CLASS_TEXTS["voters"].format(browsers=2, pages=2))
        tab = _open(chromium, class_server, "", context=follower.page.context)
        pages += (tab,)
        expect(class_bar(tab)).to_contain_text(CLASS_TEXTS["following"])
        expect(voters).to_have_text(CLASS_TEXTS["voters"].format(browsers=2, pages=3))
        # Once the tab has joined: a lesson asked for while the class bar arrives can stay
        # blank (an open problem: about one run in five when pressed at once; its component
        # is on the page, its figures never drawn).
        answer_divisor(tab, "64")
        wrong = count(panel, "divisor", "wrong")
        expect(wrong).to_have_text("1")
        expect(right).to_have_text("0")
        expect(count(divisor_result, "divisor", "wrong")).to_have_text("1")
        ballots = [
            app.page.evaluate("key => localStorage.getItem(key)", BALLOT_STORAGE)
            for app in pages[1:]
        ]
        assert ballots[0] == ballots[2] != ballots[1] and all(ballots)

        panel.get_by_role("button", name=CLASS_TEXTS["reset"]).click()
        expect(wrong).to_have_text("0")
        # Hidden again: the result leaves the students' questions.
        panel.get_by_role("switch", name=CLASS_TEXTS["reveal"]).uncheck()
        expect(beside).to_have_count(0)

        _assert_clean(pages)
    finally:
        for app in pages:
            app.page.context.close()


def test_the_projected_page_gives_nothing_away(chromium: Browser, class_server: AppServer) -> None:
    """The presenter's address loses the key once the page has its cookie, and a reload
    still presents; the bar is one line of the first screen, the answers closed below it."""
    presenter = _open(chromium, class_server, f"?{PRESENT_PARAMETER}={KEY}&d_k=8")
    student = _open(chromium, class_server, "")
    pages = [presenter, student]
    try:
        panel = class_bar(presenter)
        expect(panel.get_by_role("button", name=CLASS_TEXTS["send"])).to_be_visible()
        presenter.page.wait_for_function(
            "name => !new URLSearchParams(location.search).has(name)", arg=PRESENT_PARAMETER
        )
        assert KEY not in presenter.page.url and "d_k=8" in presenter.page.url
        # Not even one step back in the tab's history holds it.
        presenter.page.go_back()
        assert KEY not in presenter.page.url
        presenter.page.go_forward()
        cookies = {c["name"]: c for c in presenter.page.context.cookies()}
        token = cookies[PRESENTER_COOKIE]
        assert token["value"] == Classroom(KEY).presenter_token and KEY not in token["value"]
        assert token["sameSite"] == "Strict" and token["path"] == urlparse(class_server.url).path
        assert student.page.context.cookies() == []

        # The bar at 1280×800: one line, the answers' disclosure closed.
        box = panel.bounding_box()
        assert box is not None and box["height"] <= CLOSED_BAR_PX, box
        expect(panel.locator("details.sdpa-class-disclosure")).not_to_have_attribute("open", "")
        print(f"the presenter's bar, closed at 1280×800: {box['height']:.0f} px")

        # A reload, with the key gone from the address, still presents.
        presenter.page.reload()
        presenter.wait_ready()
        expect(panel.get_by_role("button", name=CLASS_TEXTS["send"])).to_be_visible()
        expect(class_bar(student)).to_contain_text(CLASS_TEXTS["following"])
        assert KEY not in presenter.page.url

        # A student's page with the presenter's token in a cookie of another site's presents
        # nothing, nor does a forged one.
        forged = chromium.new_context(viewport=WIDE)
        forged.add_cookies([{"name": PRESENTER_COOKIE, "value": "0" * 32, "url": class_server.url}])
        forged.add_init_script(FIGURES_HELPER_JS)
        intruder = _open(chromium, class_server, "", context=forged)
        pages.append(intruder)
        expect(class_bar(intruder)).to_contain_text(CLASS_TEXTS["following"])
        expect(class_bar(intruder).get_by_role("button", name=CLASS_TEXTS["send"])).to_have_count(0)

        _assert_clean(pages)
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
        expect(class_bar(student)).to_be_visible()
        # Everything the bars can show: the answers open and peeked at, shown to the class.
        panel = class_bar(presenter)
        peek(panel)
        assert_axe_clean(presenter.page, "served", f"{scheme}: class mode, the presenter peeking")
        panel.get_by_role("switch", name=CLASS_TEXTS["reveal"]).check()
        open_answers(class_bar(student))
        for app, role in ((presenter, "presenter"), (student, "student")):
            expect(class_bar(app)).to_be_visible()
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
        panel = class_bar(presenter)
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
        expect(class_bar(staying)).to_contain_text(CLASS_TEXTS["following"])
        print(f"corrected within {correct_9_to_8(staying, panel):.2f} s")

        _assert_clean(pages)
    finally:
        for app in pages:
            app.page.context.close()
