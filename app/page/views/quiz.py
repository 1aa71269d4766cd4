"""The lesson's "Test yourself": three questions with immediate feedback.

The grading is pure functions (:func:`check_divisor`, :func:`check_sqrt_blank`,
:func:`check_matching` and the ``*_feedback`` functions built on them), testable without a
server. Answers are untrusted text: they are length-capped, compared, and never shown back.
Both pages grade on the page with lesson.js's copy of them (app/page/lesson.py's
``quiz_spec`` hands it these words and tables; tests/export check it answer for answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_ANSWER_LENGTH = 32
"""Longer answers are refused unread (and the text boxes accept no more)."""

HEADING = "### Test yourself"
"""The quiz's heading (Markdown), above :data:`app.page.lesson_text.QUIZ`."""

PROMPTS = (
    "**1.** By what are the scores divided when d_k = 64?",
    "**2.** Fill in the blank: `A = softmax(Q @ K.T / np.____(d_k), axis=-1)`",
    "**3.** Match each item on the left with its value.",
)
"""The three questions (Markdown), in order."""

DIVISOR_LABEL = "Divisor when d_k = 64"
DIVISOR_PLACEHOLDER = "a number"
SQRT_LABEL = "Missing NumPy function"
SQRT_PLACEHOLDER = "its name"
CHOOSE_LABEL = "choose…"
"""The answer boxes' labels and hints, and the matching lists' empty choice."""

CODE_CSS = "code { color: var(--sdpa-code-text, #b0004a); }"
"""Code in the questions: Panel's Markdown colours it for a dark code block (#82aaff, 2.3:1
on white); this red-violet reads at 7:1 on white, and the dark theme's pink on #121212."""

CHECK_LABEL = "Check answer {number}"
"""Each question's Check button (a distinct accessible name per question)."""

_SQRT_ANSWER = re.compile(r"(?:np\.|numpy\.)?sqrt(?:\(\))?")


@dataclass(frozen=True)
class Feedback:
    """What to show after Check: ``correct`` is None when there was nothing to grade."""

    correct: bool | None
    title: str
    message: str

    @property
    def severity(self) -> str:
        """The Alert severity: success when right, error when wrong, info when unanswered."""
        return {True: "success", False: "error", None: "info"}[self.correct]


def _clean(text: object) -> str | None:
    """The answer stripped of surrounding spaces, or None if it is not text or too long."""
    if not isinstance(text, str) or len(text) > MAX_ANSWER_LENGTH:
        return None
    return text.strip()


def check_divisor(text: object) -> bool:
    """Question 1: is ``text`` the divisor when d_k = 64, that is the number 8?"""
    answer = _clean(text)
    if not answer:
        return False
    try:
        return float(answer) == 8.0
    except ValueError:
        return False


def check_sqrt_blank(text: object) -> bool:
    """Question 2: does ``text`` fill ``np.____(d_k)`` with sqrt (np.sqrt, sqrt() too)?"""
    answer = _clean(text)
    return bool(answer) and _SQRT_ANSWER.fullmatch(answer.lower()) is not None


@dataclass(frozen=True)
class MatchItem:
    """A left-hand item of question 3, its accessible label and the key of its match."""

    key: str
    label: str
    answer: str


MATCH_ITEMS = (
    MatchItem("d16", "d_k = 16", "sqrt4"),
    MatchItem("d64", "d_k = 64", "sqrt8"),
    MatchItem("large", "large unscaled scores", "one_hot"),
    MatchItem("std", "scaled score std", "about_one"),
)
"""Question 3's left column, in the lesson's order."""

MATCH_CHOICES = {
    "one_hot": "one-hot softmax",
    "sqrt8": "√d = 8",
    "about_one": "≈ 1",
    "sqrt4": "√d = 4",
}
"""Question 3's right column: key → label, in an order that gives nothing away."""


def check_matching(answers: Mapping[str, object]) -> dict[str, bool]:
    """Question 3: for each item key, whether its chosen match is right (missing is wrong)."""
    return {item.key: answers.get(item.key) == item.answer for item in MATCH_ITEMS}


DIVISOR_FEEDBACK = {
    None: Feedback(None, "No answer yet", "Type a number, then press Check."),
    True: Feedback(
        True,
        "Right: 8",
        "√64 = 8. The raw scores q·k have standard deviation √d_k = 8, so dividing by "
        "8 brings them back to a spread of about 1.",
    ),
    False: Feedback(
        False,
        "Not quite",
        "The scores are divided by √d_k, not by d_k: √d_k is the standard deviation of q·k. "
        "What is the square root of 64?",
    ),
}
"""Question 1's feedback: unanswered (None), right (True), wrong (False)."""

SQRT_BLANK_FEEDBACK = {
    None: Feedback(None, "No answer yet", "Type the NumPy function, then press Check."),
    True: Feedback(
        True,
        "Right: np.sqrt",
        "The scores are divided by √d_k, the square root of the key dimension, so their "
        "spread stays at 1 whatever d_k is.",
    ),
    False: Feedback(
        False,
        "Not quite",
        "The blank is the NumPy function that turns d_k into the standard deviation of q·k: "
        "not d_k itself, but its square root.",
    ),
}
"""Question 2's feedback: unanswered (None), right (True), wrong (False)."""

MATCHING_FEEDBACK = {
    None: Feedback(None, "No answer yet", "Choose a match for each item, then press Check."),
    True: Feedback(
        True,
        "All four match",
        "√16 = 4 and √64 = 8 are the divisors. Without them, large scores make the "
        "softmax one-hot; after dividing, the scores have standard deviation ≈ 1.",
    ),
    False: Feedback(
        False,
        "{right} of {total} match",
        "Look again at: {wrong}. The divisor is the square root of d_k, and it is chosen "
        "so the scaled scores have a standard deviation of about 1.",
    ),
}
"""Question 3's feedback: unanswered (None), all right (True), some wrong (False: a
template of how many are right, of how many, and the wrong items' labels)."""


def divisor_feedback(text: object) -> Feedback:
    """Grade question 1 and explain, without repeating the answer given."""
    if isinstance(text, str) and not text.strip():
        return DIVISOR_FEEDBACK[None]
    return DIVISOR_FEEDBACK[check_divisor(text)]


def sqrt_blank_feedback(text: object) -> Feedback:
    """Grade question 2 and explain, without repeating the answer given."""
    if isinstance(text, str) and not text.strip():
        return SQRT_BLANK_FEEDBACK[None]
    return SQRT_BLANK_FEEDBACK[check_sqrt_blank(text)]


def matching_feedback(answers: Mapping[str, object]) -> Feedback:
    """Grade question 3, naming the items (fixed labels, never the input) that are wrong."""
    if not any(answers.get(item.key) for item in MATCH_ITEMS):
        return MATCHING_FEEDBACK[None]
    results = check_matching(answers)
    right = sum(results.values())
    if right == len(MATCH_ITEMS):
        return MATCHING_FEEDBACK[True]
    wrong = ", ".join(item.label for item in MATCH_ITEMS if not results[item.key])
    template = MATCHING_FEEDBACK[False]
    return Feedback(
        False,
        template.title.format(right=right, total=len(MATCH_ITEMS)),
        template.message.format(wrong=wrong),
    )


QUESTIONS = ("divisor", "sqrt", "matching")
"""The quiz's questions by the key both pages give them (``data-check``), in order."""

TALLY = {
    "divisor": {
        "title": "1. Divisor when d_k = 64",
        "choices": {"right": "8", "wrong": "another answer"},
        "right": "right",
    },
    "sqrt": {
        "title": "2. Missing NumPy function",
        "choices": {"right": "sqrt", "wrong": "another answer"},
        "right": "right",
    },
    "matching": {
        "title": "3. Matching",
        "choices": {
            str(right): (
                "all four match" if right == len(MATCH_ITEMS) else f"{right} of {len(MATCH_ITEMS)}"
            )
            for right in range(len(MATCH_ITEMS), -1, -1)
        },
        "right": str(len(MATCH_ITEMS)),
    },
}
"""How a class's answers are counted (class mode): each question's title, the choices an
answer counts as, by key, with their labels, and the key of the right one (the labels do
not say which is right: a projected chart shows it only once the answers are shown);
question 3 counts how many items match."""


def tally_choice(question: object, answer: object) -> str | None:
    """The choice of :data:`TALLY` an untrusted answer to ``question`` counts as (graded
    here, as the page grades it), or None when it counts as nothing: an unknown question,
    an empty or malformed answer. Never raises."""
    if question in ("divisor", "sqrt"):
        if _clean(answer) in (None, ""):
            return None
        check = check_divisor if question == "divisor" else check_sqrt_blank
        return "right" if check(answer) else "wrong"
    if question != "matching" or not isinstance(answer, Mapping):
        return None
    if len(answer) > len(MATCH_ITEMS) or not all(
        isinstance(key, str) and _clean(value) is not None for key, value in answer.items()
    ):
        return None
    if not any(answer.get(item.key) for item in MATCH_ITEMS):
        return None
    return str(sum(check_matching(answer).values()))
