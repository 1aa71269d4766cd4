"""The quiz: pure grading functions, hostile input, and the view's widgets without a server."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.page.views.quiz import (
    MATCH_CHOICES,
    MATCH_ITEMS,
    MAX_ANSWER_LENGTH,
    check_divisor,
    check_matching,
    check_sqrt_blank,
    divisor_feedback,
    matching_feedback,
    sqrt_blank_feedback,
)

RIGHT_MATCHES = {item.key: item.answer for item in MATCH_ITEMS}

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "**bold** [link](javascript:alert(1))",
    "x" * 10_240,
    "8" * 10_240,
    " " * 10_000 + "8",
    "\x00\u202e8",
]


# --- question 1: the divisor --------------------------------------------------------------


@pytest.mark.parametrize("text", ["8", "8.0", " 8 ", "8.00", "+8", "\t8\n"])
def test_divisor_accepts_eight(text: str) -> None:
    assert check_divisor(text) is True


@pytest.mark.parametrize(
    "text", ["", "   ", "64", "√64", "eight", "8/1", "0.8", "nan", "inf", "-8", *HOSTILE]
)
def test_divisor_rejects_everything_else(text: str) -> None:
    assert check_divisor(text) is False


@pytest.mark.parametrize("value", [None, 8, 8.0, b"8", ["8"]])
def test_divisor_rejects_non_text(value: object) -> None:
    assert check_divisor(value) is False


# --- question 2: the blank ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["sqrt", "np.sqrt", "sqrt()", "SQRT", "Np.Sqrt", " sqrt ", "numpy.sqrt", "np.sqrt()"]
)
def test_blank_accepts_sqrt(text: str) -> None:
    assert check_sqrt_blank(text) is True


@pytest.mark.parametrize(
    "text", ["", "sqr", "square", "log", "sqrt(d_k)", "np.sqrt(", "np sqrt", "sqrtx", *HOSTILE]
)
def test_blank_rejects_everything_else(text: str) -> None:
    assert check_sqrt_blank(text) is False


def test_answers_longer_than_the_cap_are_refused_even_if_right_inside() -> None:
    padded = "sqrt".ljust(MAX_ANSWER_LENGTH + 1)
    assert check_sqrt_blank(padded.strip()) is True
    assert check_sqrt_blank(padded) is False
    assert check_divisor("8".center(MAX_ANSWER_LENGTH)) is True


# --- question 3: matching -----------------------------------------------------------------


def test_matching_all_right() -> None:
    assert check_matching(RIGHT_MATCHES) == dict.fromkeys(RIGHT_MATCHES, True)
    assert set(RIGHT_MATCHES.values()) == set(MATCH_CHOICES)


def test_matching_marks_each_wrong_or_missing_item() -> None:
    answers = {**RIGHT_MATCHES, "d64": "sqrt4"}
    del answers["std"]
    assert check_matching(answers) == {"d16": True, "d64": False, "large": True, "std": False}
    assert not any(check_matching({key: "<b>sqrt4</b>" for key in RIGHT_MATCHES}).values())


def test_matching_pairs_are_the_lessons() -> None:
    pairs = {item.label: MATCH_CHOICES[item.answer] for item in MATCH_ITEMS}
    assert pairs == {
        "d_k = 16": "√d = 4",
        "d_k = 64": "√d = 8",
        "large unscaled scores": "one-hot softmax",
        "scaled score std": "≈ 1",
    }


# --- feedback -----------------------------------------------------------------------------


def test_feedback_right_wrong_and_unanswered() -> None:
    assert divisor_feedback("8").severity == "success"
    assert divisor_feedback("64").severity == "error"
    assert divisor_feedback("  ").severity == "info"
    assert sqrt_blank_feedback("np.sqrt").correct is True
    assert sqrt_blank_feedback("log").correct is False
    assert sqrt_blank_feedback("").correct is None
    for feedback in (divisor_feedback("64"), sqrt_blank_feedback("log")):
        assert len(feedback.message) > 40, "a wrong answer still gets an explanation"


def test_matching_feedback_counts_and_names_wrong_items() -> None:
    assert matching_feedback(RIGHT_MATCHES).correct is True
    assert matching_feedback({}).correct is None
    feedback = matching_feedback({**RIGHT_MATCHES, "d16": "sqrt8", "large": "about_one"})
    assert feedback.correct is False
    assert feedback.title == "2 of 4 match"
    assert "d_k = 16" in feedback.message and "large unscaled scores" in feedback.message
    assert "d_k = 64" not in feedback.message


@pytest.mark.parametrize("text", HOSTILE)
def test_feedback_never_echoes_hostile_input(text: str) -> None:
    for feedback in (divisor_feedback(text), sqrt_blank_feedback(text)):
        assert feedback.correct is False
        shown = feedback.title + feedback.message
        assert "<" not in shown and "javascript" not in shown and "xxxx" not in shown
        assert len(shown) < 400


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_feedback_never_contains_the_answer(prefix: str, suffix: str) -> None:
    text = f"{prefix}ZQXJ{suffix}"
    for grade in (divisor_feedback, sqrt_blank_feedback):
        feedback = grade(text)
        assert feedback.correct is False
        assert "ZQXJ" not in feedback.title + feedback.message
    matched = matching_feedback(dict.fromkeys(RIGHT_MATCHES, text))
    assert "ZQXJ" not in matched.title + matched.message
