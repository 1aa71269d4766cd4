"""The class bar above the plots: the presenter's class panel, or a student's "Following the
instructor" with the way back once they explore (class mode, app/served/classroom.py).

The presenter's page is on the projector: its bar is one line on the first screen (how many
students are connected, **Send my scene**, **Students follow me**, **Show the counts to the
class**) and the class's answers are in a disclosure below it, with how many browsers they
come from against how many pages are connected (one answer counts per browser). The counts
and which choice is right stay hidden there until they are shown to the class, or the
presenter peeks (on the presenter's page only). The presenter's page keeps a presenter
token in a cookie and takes the key out of its address bar, so that a photo of the screen
presents nothing and a reload still presents.

A student's page, while a class is presented, says whether it follows the instructor, with
one button back to the instructor's scene once the student explores, and keeps the ballot
its answers count under in the browser's storage, so that its tabs and reloads are one
voter. While the class bus is down every page says so first, then what it means there. A
page changes only what its role has (a student's page cannot send a scene: the presses it
could forge are refused like any value from a page).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import param

from app.compat import CheckedPageChanges
from app.page.bundle import BundledComponent
from app.page.views.quiz import TALLY
from app.served.classroom import PRESENT_PARAMETER, PRESENTER_COOKIE, PRESENTER_COOKIE_MAX_AGE_S

PRESENTER = "presenter"
STUDENT = "student"
Role = Literal["presenter", "student"]

CLASS_TEXTS = {
    "region": "Class",
    "students_one": "1 student connected",
    "students_many": "{count} students connected",
    "send": "Send my scene",
    "live": "Students follow me",
    "sent_one": "Your scene reached 1 student.",
    "sent_many": "Your scene reached {count} students.",
    "held": "Your scene reached the {count} here; the others take it once the class is back.",
    "following": "Following the instructor",
    "following_detail": "Your controls take the instructor's scene.",
    "exploring": "Exploring on your own",
    "exploring_detail": "You moved a control, so the instructor's moves no longer change yours.",
    "back": "Back to the instructor's scene",
    "answers": "The class's answers",
    "answered": "{count} answered",
    "right": "right answer",
    "voters": "One answer counts per browser. Browsers: {browsers}, pages connected: {pages}.",
    "hidden": "Counts hidden: they show here once you peek or show them to the class.",
    "peek": "Peek at the counts",
    "reveal": "Show the counts to the class",
    "reset": "Reset answers",
    "bus_down": "The class is not connected right now.",
    "bus_down_presenter": "Out of reach until it is back: {count} students on other servers "
    "(as last seen), whose answers count as they were.",
    "bus_down_following": "Your page works on its own until it is back, then takes the "
    "instructor's latest scene.",
    "bus_down_with_presenter": "You still follow the instructor.",
}
"""Every word of the class bar, for both roles (``{count}``, ``{browsers}`` and ``{pages}``
are filled on the page)."""

BALLOT_STORAGE = "sdpa-sim-ballot"
"""The key of the browser's localStorage under which a student's page keeps its ballot."""

CLAIM = re.compile(r"[0-9A-Za-z._-]{1,64}")
"""What a page may claim as its ballot: a ballot is 49 characters of hex and a dot, and a
page without one claims a word."""

MAX_CLAIM_LENGTH = 64
"""The longest claim :data:`CLAIM` takes."""

PRESENTER_PROPERTIES = ("live", "send_presses", "revealed", "reset_presses")
STUDENT_PROPERTIES = ("back_presses", "claim")
"""What each role's page may change on its bar."""

PRESS_LIMIT = 2**31 - 1
"""The largest press count a page may report (a counter, not a payload)."""

CLASS_BAR_CSS = """
:host { width: 100%; }
.sdpa-class {
  display: flex; flex-wrap: wrap; align-items: center; gap: 4px 14px;
  margin: 4px 10px; padding: 4px 12px; border-radius: 6px;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif; font-size: 15px;
  color: var(--sdpa-info-text, #014361);
  background: var(--sdpa-info-background, #e5f6fd);
  border: 1px solid var(--sdpa-info-border, #0288d1);
}
.sdpa-class[hidden] { display: none; }
.sdpa-class-status { display: flex; flex-direction: column; gap: 0; flex: 1 1 260px; }
.sdpa-class-title { font-weight: 500; }
.sdpa-class-detail { font-size: 14px; }
.sdpa-class-detail:empty { display: none; }
.sdpa-class button {
  font: inherit; font-weight: 500; padding: 4px 12px; border-radius: 4px; cursor: pointer;
  color: var(--sdpa-accent-text, #1565c0);
  background: var(--sdpa-paper, #fff);
  border: 1px solid var(--sdpa-accent-border, #1565c0);
}
.sdpa-class button:hover { background: var(--sdpa-accent-hover, #bbdefb); }
.sdpa-class button[aria-pressed="true"] {
  box-shadow: inset 0 0 0 2px var(--sdpa-accent-border, #1565c0);
}
.sdpa-class button:focus-visible, .sdpa-class input:focus-visible,
.sdpa-class summary:focus-visible {
  outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px;
}
.sdpa-class label { display: inline-flex; align-items: center; gap: 6px; cursor: pointer; }
.sdpa-class input[type="checkbox"] { width: 18px; height: 18px; margin: 0; }
.sdpa-class-disclosure { flex: 0 1 auto; }
.sdpa-class-disclosure[open] { flex: 1 1 100%; }
.sdpa-class-disclosure[hidden] { display: none; }
.sdpa-class-disclosure summary { cursor: pointer; font-weight: 500; padding: 4px 0; }
.sdpa-class-answers {
  display: flex; flex-wrap: wrap; align-items: flex-start; gap: 8px 24px; padding: 4px 0;
}
.sdpa-class-answers .sdpa-class-answers { flex: 1 1 100%; padding: 0; }
.sdpa-class-voters, .sdpa-class-hidden { flex: 1 1 100%; margin: 0; font-size: 14px; }
.sdpa-class [hidden] { display: none; }
"""
"""The bar's look: an info box (the dark theme's colours come from app/page/theme.py)."""

CLASS_CHART_CSS = """
.sdpa-class-question { flex: 1 1 240px; margin: 0; }
.sdpa-class-question figcaption { font-weight: 500; margin-bottom: 2px; }
.sdpa-class-question ul { list-style: none; margin: 0; padding: 0; }
.sdpa-class-choice {
  display: grid; grid-template-columns: 11em 1fr 2.5em; align-items: center; gap: 6px;
  font-size: 14px;
}
.sdpa-class-track { height: 10px; background: var(--sdpa-paper, #fff); border-radius: 2px; }
.sdpa-class-fill {
  display: block; height: 100%; border-radius: 2px;
  background: var(--sdpa-accent-border, #1565c0);
}
.sdpa-class-count { text-align: right; font-variant-numeric: tabular-nums; }
.sdpa-class-right { font-weight: 500; }
.sdpa-quiz-class {
  margin: 8px 0 0; padding: 6px 10px; border-radius: 4px; max-width: 32em;
  color: var(--sdpa-info-text, #014361);
  background: var(--sdpa-info-background, #e5f6fd);
  border: 1px solid var(--sdpa-info-border, #0288d1);
}
.sdpa-quiz-class .sdpa-class-question { font-size: 15px; }
"""
"""The answers' charts, in the bar and beside the lesson's questions."""

RESULT_TEXTS = ("answers", "answered", "right")
"""The words the lesson's charts of a revealed result use."""


def shown_result(counts: dict) -> dict:
    """What the lesson draws beside its questions (``class_result``): the class's ``counts``
    (``{question: {choice: count}}``) with each question's title and choices, and the words
    of the charts; ``{}`` while the counts are hidden from the students (no counts)."""
    if not counts:
        return {}
    return {
        "answers": counts,
        "questions": TALLY,
        "texts": {key: CLASS_TEXTS[key] for key in RESULT_TEXTS},
    }


class ClassBar(CheckedPageChanges, BundledComponent):
    """The class panel (``role="presenter"``) or a student's following bar
    (``role="student"``), drawn by class_bar.js; hidden on a student's page while no class
    is presented."""

    page_properties = (
        "live",
        "send_presses",
        "revealed",
        "reset_presses",
        "back_presses",
        "claim",
    )

    role = param.Selector(
        default=STUDENT, objects=[PRESENTER, STUDENT], doc="Whose page the bar is on."
    )
    students = param.Integer(
        default=0, bounds=(0, None), doc="How many students are connected (the presenter's)."
    )
    reached = param.Integer(
        default=-1,
        bounds=(-1, None),
        doc="How many students the presenter's last scene reached (-1: none sent yet).",
    )
    live = param.Boolean(
        default=False, doc="Whether the students follow each of the presenter's moves."
    )
    send_presses = param.Integer(
        default=0, bounds=(0, PRESS_LIMIT), doc="How many times Send my scene was pressed."
    )
    presented = param.Boolean(
        default=False, doc="Whether a presenter's page is connected (a student's bar shows)."
    )
    following = param.Boolean(
        default=True, doc="Whether the student's controls take the instructor's scene."
    )
    back_presses = param.Integer(
        default=0,
        bounds=(0, PRESS_LIMIT),
        doc="How many times Back to the instructor's scene was pressed.",
    )
    browsers = param.Integer(
        default=0,
        bounds=(0, None),
        doc="How many browsers the students' pages are, each one voter (the presenter's).",
    )
    claim = param.String(
        default="",
        doc="The ballot a student's page found in its browser's storage, or any other word "
        "when it has none (set once by the page; untrusted).",
    )
    ballot = param.String(
        default="",
        doc="The ballot the student's page votes with, which it keeps in its browser's "
        "storage (set by the server in answer to the claim).",
    )
    storage = param.String(
        default=BALLOT_STORAGE, doc="The localStorage key the ballot is kept under."
    )
    answers = param.Dict(
        default={},
        doc="How many students' last answers count as each choice of each question "
        "(``{question: {choice: count}}``): the presenter's always, a student's once shown.",
    )
    revealed = param.Boolean(
        default=False, doc="Whether the students see the class's answers (the presenter's switch)."
    )
    reset_presses = param.Integer(
        default=0, bounds=(0, PRESS_LIMIT), doc="How many times Reset answers was pressed."
    )
    bus_down = param.Boolean(
        default=False,
        doc="Whether the class bus between the server's processes is unreachable now.",
    )
    unreachable = param.Integer(
        default=0,
        bounds=(0, None),
        doc="How many students the other processes had when the bus went down (the "
        "presenter's: out of reach until it is back).",
    )
    held = param.Boolean(
        default=False,
        doc="Whether the presenter's last scene went while the bus was down and has not "
        "reached every process yet (``reached`` counts this process's students).",
    )
    presenter_token = param.String(
        default="",
        doc="The presenter's page keeps it in the presenter cookie (presenter_cookie), so that "
        "it presents after a reload without the key in its address (empty on students').",
    )
    presenter_cookie = param.String(default=PRESENTER_COOKIE, doc="The presenter cookie's name.")
    presenter_cookie_age = param.Integer(
        default=PRESENTER_COOKIE_MAX_AGE_S, doc="How long the browser keeps it, in seconds."
    )
    present_parameter = param.String(
        default=PRESENT_PARAMETER,
        doc="The presenter link's query parameter, which the presenter's page takes out of its "
        "address bar.",
    )
    texts = param.Dict(default=CLASS_TEXTS, doc="The bar's words (CLASS_TEXTS).")
    questions = param.Dict(
        default=TALLY, doc="Each question's title and choices' labels (quiz.TALLY)."
    )

    bundled_css = (CLASS_BAR_CSS, CLASS_CHART_CSS)

    def __init__(self, **params: Any) -> None:
        params.setdefault("sizing_mode", "stretch_width")
        params.setdefault("margin", 0)
        super().__init__(**params)

    def accepts_from_page(self, name: str, value: object) -> bool:
        """A page changes only its own role's properties (:data:`PRESENTER_PROPERTIES`,
        :data:`STUDENT_PROPERTIES`); a switch's value is a boolean, a press count a whole
        number in range and a claim a short plain word (:data:`CLAIM`)."""
        own = PRESENTER_PROPERTIES if self.role == PRESENTER else STUDENT_PROPERTIES
        if name not in own:
            return False
        if name in ("live", "revealed"):
            return isinstance(value, bool)
        if name == "claim":
            # Checked for its signature by the classroom; here only kept small and plain.
            return isinstance(value, str) and CLAIM.fullmatch(value) is not None
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= PRESS_LIMIT
