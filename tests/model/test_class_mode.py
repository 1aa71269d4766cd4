"""Class mode on one process: a presenter's scene reaches the students who follow; a student
who moves stops following; nobody without the key presents (app/served/classroom.py,
app/served/class_seat.py). Sessions without a server: each update runs at once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.page.views.quiz import TALLY, tally_choice
from app.served.classroom import (
    MAX_KEY_LENGTH,
    PRESENT_PARAMETER,
    Classroom,
    checked_presenter_key,
    new_presenter_key,
)
from app.served.components.class_bar import PRESENTER, STUDENT, ClassBar
from app.served.session import Session
from app.simulation.query import compose_search

KEY = "presenter-key-for-tests"


def _session(room: Classroom, query: dict[str, str] | None = None) -> Session:
    return Session(query or {}, classroom=room)


def _class(students: int = 2) -> tuple[Classroom, Session, list[Session]]:
    """A presenter and ``students`` students, each student's page in a browser of its own
    that has shown its ballot, as class_bar.js does on a fresh browser."""
    room = Classroom(KEY)
    presenter = _session(room, {PRESENT_PARAMETER: KEY})
    pupils = [_session(room) for _ in range(students)]
    for pupil in pupils:
        pupil.seat.bar.claim = "none"
    return room, presenter, pupils


def _send(presenter: Session) -> None:
    """Press Send my scene on the presenter's page."""
    bar = presenter.seat.bar
    bar.send_presses = bar.send_presses + 1


def test_only_the_key_presents() -> None:
    room = Classroom(KEY)
    assert room.presents(KEY)
    for wrong in ["", KEY[:-1], KEY + "x", KEY.upper(), None, 7, [KEY], "x" * (MAX_KEY_LENGTH + 1)]:
        assert not room.presents(wrong)
    assert not Classroom("").presents("") and not Classroom("").enabled


def test_the_presenter_cookie_holds_a_token_not_the_key() -> None:
    """The presenter's page keeps a token derived from the key: it presents on a reload, it
    is not the key (a presenter link made of it presents nothing), and another key's class
    refuses it."""
    room = Classroom(KEY)
    token = room.presenter_token
    assert KEY not in token and not room.presents(token)
    assert room.presents_by_cookie(token)
    assert token == Classroom(KEY).presenter_token  # every process of the class agrees
    assert not Classroom(KEY + "-next").presents_by_cookie(token)
    for wrong in ["", token[:-1], token + "0", token.upper(), KEY, None, 7, "é" * len(token)]:
        assert not room.presents_by_cookie(wrong)
    assert Classroom("").presenter_token == "" and not Classroom("").presents_by_cookie("")


def test_the_presenter_s_address_loses_the_key() -> None:
    """The session writes the presenter's address without the key (the page keeps its
    cookie), and only the presenter's bar carries the token."""
    room, presenter, (student,) = _class(1)
    assert presenter.seat.bar.presenter_token == room.presenter_token
    assert student.seat.bar.presenter_token == ""
    search = compose_search(
        f"?{PRESENT_PARAMETER}={KEY}&id=007", presenter.state.query(), drop=(PRESENT_PARAMETER,)
    )
    assert KEY not in search and PRESENT_PARAMETER not in search and search.endswith("&id=007")


def test_a_student_sees_the_revealed_counts_beside_the_questions() -> None:
    """Hidden from the students until the presenter shows them: then the student's seat hands
    the lesson the counts it draws beside each question (shown_result), and hides them again."""
    _room, presenter, (student,) = _class(1)
    student.add_lesson()
    assert student.seat.answer("divisor", "8")
    assert student.lesson.drawn.class_result == {} and student.seat.result == {}
    presenter.seat.bar.revealed = True
    result = student.lesson.drawn.class_result
    assert result["answers"]["divisor"]["right"] == 1
    assert result["questions"]["divisor"]["right"] == "right"
    presenter.seat.bar.revealed = False
    assert student.lesson.drawn.class_result == {}


def test_the_charts_labels_do_not_say_which_choice_is_right() -> None:
    """The labels a projected chart shows give nothing away; which is right is a key of its
    own, drawn only with the counts."""
    for question in TALLY.values():
        assert question["right"] in question["choices"]
        assert not any("right" in label for label in question["choices"].values())


@given(st.text(max_size=200))
def test_no_other_text_presents(candidate: str) -> None:
    """Any text but the key itself, lone surrogates included, presents nothing and never
    raises."""
    assert Classroom(KEY).presents(candidate) == (candidate == KEY)


def test_presenter_keys_are_checked() -> None:
    assert len(new_presenter_key()) >= 16 and new_presenter_key() != new_presenter_key()
    assert checked_presenter_key(KEY) == KEY
    for bad in ["short", "with space in it", "x" * (MAX_KEY_LENGTH + 1), "nön-ascii-key-1234"]:
        with pytest.raises(ValueError, match="printable ASCII"):
            checked_presenter_key(bad)


def test_roles_and_counts() -> None:
    room, presenter, students = _class(2)
    assert presenter.seat.bar.role == PRESENTER
    assert [student.seat.bar.role for student in students] == [STUDENT, STUDENT]
    assert room.students == 2 and room.presented
    assert presenter.seat.bar.students == 2
    assert all(student.seat.bar.presented for student in students)
    students[0].seat.leave()
    assert presenter.seat.bar.students == 1 and room.students == 1
    presenter.seat.leave()
    assert not room.presented and not students[1].seat.bar.presented


def test_a_wrong_key_makes_a_student_and_no_key_no_class() -> None:
    room = Classroom(KEY)
    guess = _session(room, {PRESENT_PARAMETER: "guessed-key-0000"})
    assert not guess.seat.presenter and not room.presented and room.students == 1
    assert _session(Classroom(""), {PRESENT_PARAMETER: ""}).seat is None


def test_a_students_bar_comes_only_with_a_presenter() -> None:
    """In a class nobody presents a student's page holds no bar; when a presenter arrives,
    each student's page gets one, following."""
    room = Classroom(KEY)
    student = _session(room)
    assert student.seat.bar is None and student.layout.first_screen.classroom is None
    presenter = _session(room, {PRESENT_PARAMETER: KEY})
    assert presenter.layout.first_screen.classroom is presenter.seat.bar
    bar = student.seat.bar
    assert bar is not None and student.layout.first_screen.classroom is bar
    assert bar.role == STUDENT and bar.presented and bar.following


def test_send_my_scene_reaches_every_following_student() -> None:
    _room, presenter, students = _class(2)
    presenter.state.set_controls(d_k=1024, scaled=False, n=16)
    _send(presenter)
    assert presenter.seat.bar.reached == 2
    for student in students:
        assert (student.state.d_k, student.state.scaled, student.state.n) == (1024, False, 16)
        assert student.seat.bar.following


def test_a_student_who_moves_stops_following_and_can_go_back() -> None:
    _room, presenter, (follower, explorer) = _class(2)
    presenter.state.set_controls(d_k=256)
    _send(presenter)
    explorer.state.temperature = 3.0
    assert not explorer.seat.bar.following and follower.seat.bar.following
    presenter.state.set_controls(d_k=16, scaled=False)
    _send(presenter)
    assert (follower.state.d_k, follower.state.scaled) == (16, False)
    assert (explorer.state.d_k, explorer.state.temperature) == (256, 3.0)
    explorer.seat.bar.back_presses = 1
    assert explorer.seat.bar.following
    assert (explorer.state.d_k, explorer.state.scaled) == (16, False)
    # One control to rejoin: the page cannot set "following" itself.
    assert not explorer.seat.bar.accepts_from_page("following", False)
    explorer.state.n = 64
    assert not explorer.seat.bar.following
    explorer.seat.bar.back_presses = 2
    assert explorer.seat.bar.following and explorer.state.n == presenter.state.n


def test_students_follow_each_move_while_live() -> None:
    room, presenter, (student,) = _class(1)
    presenter.seat.bar.live = True
    assert room.live and presenter.seat.bar.reached == 1
    presenter.state.d_k = 512
    assert student.state.d_k == 512
    presenter.state.choose_preset("collapse")
    assert student.state.preset == "collapse"
    presenter.seat.bar.live = False
    presenter.state.d_k = 8
    assert student.state.d_k != 8


def test_a_student_arriving_in_a_presented_class_starts_on_its_scene() -> None:
    room, presenter, _students = _class(0)
    presenter.state.set_controls(d_k=2, temperature=0.5)
    _send(presenter)
    late = _session(room, {"d_k": "64"})
    assert (late.state.d_k, late.state.temperature) == (2, 0.5)


def test_a_students_page_cannot_present() -> None:
    """A student's page that forges the presenter's presses or switch is refused; the
    classroom also refuses a scene from any session that is not a presenter's."""
    room, presenter, (student, other) = _class(2)
    bar = student.seat.bar
    assert not bar.accepts_from_page("send_presses", 1)
    assert not bar.accepts_from_page("live", True)
    assert bar.accepts_from_page("back_presses", 3)
    for forged in [True, -1, 2**31, 1.5, "1", None]:
        assert not bar.accepts_from_page("back_presses", forged)
    assert not bar.accepts_from_page("following", False)
    student.state.d_k = 1024
    assert room.send_scene(student.seat, student.seat.scene()) == 0
    assert other.state.d_k != 1024
    presenter_bar = presenter.seat.bar
    assert presenter_bar.accepts_from_page("send_presses", 4)
    assert not presenter_bar.accepts_from_page("following", False)


def test_the_key_never_reaches_a_link_the_presenter_shares() -> None:
    _room, presenter, _students = _class(0)
    for kind in ("link", "embed"):
        assert KEY not in presenter.share_text(kind)
    assert PRESENT_PARAMETER not in presenter.state.query()


def test_scenes_sent_before_a_students_tick_fold_into_the_last() -> None:
    """A student's session applies scenes on its own tick: of several that arrive before
    it, only the last is applied, once."""
    room = Classroom(KEY)
    presenter = _session(room, {PRESENT_PARAMETER: KEY})
    ticks: list = []
    student = Session({}, classroom=room, defer=ticks.append)
    applied: list[int] = []
    student.state.param.watch(lambda event: applied.append(event.new), "d_k")
    for d_k in (8, 16, 32):
        presenter.state.d_k = d_k
        _send(presenter)
    scene_ticks = [tick for tick in ticks if getattr(tick, "__name__", "") == "_apply_scene"]
    assert len(scene_ticks) == 1
    scene_ticks[0]()
    assert applied == [32]


def test_the_class_bar_words_are_complete() -> None:
    bar = ClassBar()
    for key in ("students_many", "sent_many"):
        assert "{count}" in bar.texts[key]
    assert "{browsers}" in bar.texts["voters"] and "{pages}" in bar.texts["voters"]
    assert all(isinstance(text, str) and text for text in bar.texts.values())


@pytest.mark.parametrize(
    ("question", "answer", "choice"),
    [
        ("divisor", "8", "right"),
        ("divisor", " 8.0 ", "right"),
        ("divisor", "64", "wrong"),
        ("divisor", "", None),
        ("sqrt", "np.sqrt", "right"),
        ("sqrt", "log", "wrong"),
        ("matching", {"d16": "sqrt4", "d64": "sqrt8", "large": "one_hot", "std": "about_one"}, "4"),
        ("matching", {"d16": "sqrt8"}, "0"),
        ("matching", {"d16": "sqrt4", "std": "about_one"}, "2"),
        ("matching", {}, None),
        ("matching", {f"k{i}": "x" for i in range(5)}, None),
        ("matching", {"d16": 4}, None),
        ("divisor", "8" * 33, None),
        ("divisor", 8, None),
        ("nope", "8", None),
        (None, None, None),
    ],
)
def test_an_answer_counts_as_what_it_grades_to(question, answer, choice) -> None:
    assert tally_choice(question, answer) == choice
    if choice is not None:
        assert choice in TALLY[question]["choices"]


@given(
    st.one_of(st.none(), st.text(max_size=5)),
    st.recursive(
        st.text(max_size=40),
        lambda c: st.dictionaries(st.text(max_size=8), c, max_size=6),
        max_leaves=8,
    ),
)
def test_no_answer_breaks_the_tally(question, answer) -> None:
    choice = tally_choice(question, answer)
    assert choice is None or choice in TALLY[question]["choices"]


class _Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Timers:
    """The seats' timers, run when the test says (the event loop's ``call_later``)."""

    def __init__(self) -> None:
        self.waiting: list[tuple[float, object]] = []

    def __call__(self, delay: float, callback: object) -> None:
        self.waiting.append((delay, callback))

    def run(self) -> None:
        waiting, self.waiting = self.waiting, []
        for _delay, callback in waiting:
            callback()


def test_the_class_answers_are_counted_once_per_student_and_shown_when_revealed() -> None:
    _room, presenter, (first, second) = _class(2)
    clock = _Clock()
    timers = _Timers()
    for student in (first, second):
        student.seat.clock = clock
        student.seat.later = timers
    assert first.seat.answer("divisor", "64")
    clock.now += 1
    assert first.seat.answer("divisor", "8")  # the last answer counts
    assert second.seat.answer("divisor", "8")
    assert second.seat.answer("sqrt", "sqrt")  # within the interval: counted at its end
    assert sum(presenter.seat.bar.answers["sqrt"].values()) == 0
    clock.now += 1
    timers.run()
    counts = presenter.seat.bar.answers
    assert counts["divisor"] == {"right": 2, "wrong": 0}
    assert counts["sqrt"] == {"right": 1, "wrong": 0}
    assert sum(counts["matching"].values()) == 0
    assert first.seat.bar.answers == {} and not first.seat.bar.revealed
    presenter.seat.bar.revealed = True
    assert first.seat.bar.revealed and first.seat.bar.answers == counts
    second.seat.leave()
    assert presenter.seat.bar.answers["divisor"] == {"right": 1, "wrong": 0}
    presenter.seat.bar.reset_presses = 1
    assert presenter.seat.bar.answers["divisor"] == {"right": 0, "wrong": 0}
    assert not presenter.seat.answer("divisor", "8")  # a presenter's answer is no student's


def test_quiz_answers_reach_the_class_through_the_lesson() -> None:
    """The lesson component hands a page's quiz message to the seat; malformed messages
    count as nothing."""
    _room, presenter, (student,) = _class(1)
    drawn = student.lesson.drawn
    for message in (
        {"quiz": "8"},
        {"quiz": {"question": "divisor"}},
        {"quiz": {"question": ["divisor"], "answer": "8"}},
        {"quiz": {"question": "divisor", "answer": {"x": "8"}}},
    ):
        drawn.take_message(message)
    assert presenter.seat.bar.answers["divisor"] == {"right": 0, "wrong": 0}
    drawn.take_message({"quiz": {"question": "divisor", "answer": "8"}})
    assert presenter.seat.bar.answers["divisor"] == {"right": 1, "wrong": 0}


def test_a_students_page_cannot_show_or_reset_the_answers() -> None:
    _room, presenter, (student,) = _class(1)
    assert student.seat.bar is not None
    assert not student.seat.bar.accepts_from_page("revealed", True)
    assert not student.seat.bar.accepts_from_page("reset_presses", 1)
    assert presenter.seat.bar.accepts_from_page("revealed", True)
    assert not presenter.seat.bar.accepts_from_page("revealed", "true")
