"""The class's roll follows the pages' connections, and a student's last answer counts
(issue 48, points 1 and 2): a page whose connection closed is counted out at once, and back
in with its answers if it returns; the presenter's bar never says a scene reached a class
that has changed since; an answer given within the answer interval waits for its end
instead of being dropped (app/served/classroom.py, app/served/class_seat.py,
app/served/session.py). Seats without a server, on one process and on two over a bus in
memory; the timers are the test's, on a clock it moves."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.events import ClientReconnected, ConnectionLost
from hypothesis import given, settings
from hypothesis import strategies as st
from panel.io.state import set_curdoc

import app.served.session
from app.page.views.quiz import MATCH_ITEMS, tally_choice
from app.served.class_seat import ANSWER_INTERVAL_S, ClassSeat
from app.served.classroom import PRESENT_PARAMETER, Classroom
from app.served.session import Session
from app.served.ticks import run_now
from model.test_class_ballot import NO_BALLOT, Clock, claim_ballot, class_rooms, open_seat
from model.test_class_bus import KEY


class Loop:
    """The seats' timers on ``clock``: each runs once the test moves the clock past its time
    (as an event loop's ``call_later`` would), in the order they fall due."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.timers: list[tuple[float, int, Callable[[], None]]] = []
        self._made = 0

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self._made += 1
        self.timers.append((self.clock.now + delay, self._made, callback))

    def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds``, running each timer due meanwhile at its time."""
        end = self.clock.now + seconds
        while self.timers:
            self.timers.sort()
            due, _made, callback = self.timers[0]
            if due > end:
                break
            self.timers.pop(0)
            self.clock.now = max(self.clock.now, due)
            callback()
        self.clock.now = end


def seat(
    room: Classroom,
    loop: Loop,
    *,
    presenter: bool = False,
    ballot: str = NO_BALLOT,
    started: bool = True,
) -> ClassSeat:
    """A session's seat in ``room`` on the test's clock and timers, started (unless not
    ``started``); a student's page then claims ``ballot`` (by default that of a browser of
    its own; another seat's ballot makes it a tab of that seat's browser)."""
    opened = open_seat(room, loop.clock, presenter=presenter, later=loop, started=started)
    if started and not presenter:
        claim_ballot(opened, ballot)
    return opened


@pytest.fixture
def loop() -> Loop:
    return Loop(Clock())


# 1. The roll follows connections ------------------------------------------------------


def test_a_closed_page_is_counted_out_at_once_and_its_answer_with_it(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    staying, leaving = seat(room, loop), seat(room, loop)
    loop.advance(1)
    assert leaving.answer("divisor", "8")
    bar = presenter.bar
    assert (bar.students, bar.browsers, bar.answers["divisor"]["right"]) == (2, 2, 1)
    leaving.page_lost()
    assert (bar.students, bar.browsers, bar.answers["divisor"]["right"]) == (1, 1, 0)
    assert room.students == 1
    # Bokeh ends the session later: nothing changes again.
    leaving.leave()
    assert (bar.students, bar.browsers) == (1, 1)
    staying.page_lost()
    assert bar.students == 0


def test_a_page_that_comes_back_is_counted_in_with_its_answers(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    ballot = student.bar.ballot
    loop.advance(1)
    assert student.answer("divisor", "64")
    student.page_lost()
    assert presenter.bar.students == 0 and not student.page_connected
    student.page_back()
    bar = presenter.bar
    assert (bar.students, bar.browsers, bar.answers["divisor"]["wrong"]) == (1, 1, 1)
    assert student.bar.ballot == ballot and student.page_connected
    # Twice back is once back.
    student.page_back()
    assert bar.students == 1
    loop.advance(1)
    assert student.answer("divisor", "8")
    assert bar.answers["divisor"] == {"right": 1, "wrong": 0}


def test_a_page_that_returns_after_a_reset_brings_no_answer(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    loop.advance(1)
    student.answer("divisor", "8")
    student.page_lost()
    presenter.bar.reset_presses += 1
    student.page_back()
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 0}


def test_a_page_back_keeps_a_later_answer_its_other_tab_gave_meanwhile(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    first = seat(room, loop)
    tab = seat(room, loop, ballot=first.bar.ballot)
    loop.advance(1)
    first.answer("divisor", "64")
    first.page_lost()
    loop.advance(1)
    tab.answer("divisor", "8")
    first.page_back()
    assert presenter.bar.answers["divisor"] == {"right": 1, "wrong": 0}
    assert (presenter.bar.students, presenter.bar.browsers) == (2, 1)


def test_the_last_presenter_away_and_back_takes_the_class_back(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    presenter.bar.live = True
    presenter.bar.revealed = True
    assert student.bar.presented and student.bar.live and student.bar.revealed
    presenter.page_lost()
    assert not student.bar.presented and not room.live and not room.revealed
    presenter.page_back()
    assert student.bar.presented and student.bar.live and student.bar.revealed


def test_a_page_lost_before_it_was_ready_joins_only_if_it_comes_back(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop, started=False)
    student.page_lost()
    student.start()  # the page's load arrives after its close
    assert presenter.bar.students == 0
    student.page_back()
    assert presenter.bar.students == 1


def test_the_bar_never_says_a_scene_reached_a_class_that_changed_since(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    students = [seat(room, loop) for _ in range(3)]
    presenter.bar.send_presses += 1
    assert presenter.bar.reached == 3
    students[0].page_lost()
    assert (presenter.bar.students, presenter.bar.reached) == (2, -1)
    presenter.bar.send_presses += 1
    assert presenter.bar.reached == 2
    seat(room, loop)  # a student comes: the statement goes too
    assert (presenter.bar.students, presenter.bar.reached) == (3, -1)


def test_a_closed_page_on_another_process_is_counted_out_of_the_class(loop: Loop) -> None:
    """Each process counts its own pages; the presenter's sees the sum, at once (the bus in
    memory carries each status as it is published)."""
    here, there = class_rooms(2, loop.clock)
    presenter = seat(here, loop, presenter=True)
    seat(here, loop)
    far = [seat(there, loop) for _ in range(2)]
    loop.advance(1)
    far[0].answer("divisor", "8")
    bar = presenter.bar
    assert (bar.students, bar.browsers, bar.answers["divisor"]["right"]) == (3, 3, 1)
    far[0].page_lost()
    assert (bar.students, bar.browsers, bar.answers["divisor"]["right"]) == (2, 2, 0)
    far[0].page_back()
    assert (bar.students, bar.browsers, bar.answers["divisor"]["right"]) == (3, 3, 1)


@pytest.fixture
def served_session(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., tuple[Session, Document]]]:
    """Sessions built as a server builds them, each on a document of its own whose page
    has loaded (its updates run at once: the document has no server to run them)."""
    monkeypatch.setattr(app.served.session, "served", lambda: True)
    monkeypatch.setattr(pn.state, "onload", lambda callback: callback())

    def build(room: Classroom, query: dict[str, str] | None = None) -> tuple[Session, Document]:
        document = Document()
        with set_curdoc(document):
            return Session(query or {}, classroom=room, defer=run_now, pace=run_now), document

    yield build


def test_bokehs_connection_events_count_a_session_out_and_back_in(
    served_session: Callable[..., tuple[Session, Document]],
) -> None:
    """The session hears from Bokeh that its page's websocket closed (ConnectionLost, at
    once) or that the page reconnected (ClientReconnected); the session itself is kept."""
    room = Classroom(KEY)
    presenter, _ = served_session(room, {PRESENT_PARAMETER: KEY})
    _student, document = served_session(room)
    assert presenter.seat.bar.students == 1
    document.callbacks.trigger_event(ConnectionLost())
    assert presenter.seat.bar.students == 0
    document.callbacks.trigger_event(ClientReconnected())
    assert presenter.seat.bar.students == 1


def test_a_failure_to_count_out_never_reaches_bokeh(
    served_session: Callable[..., tuple[Session, Document]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bokeh 3.9 tells of the lost connection from its websocket's close handler, before it
    detaches the connection: whatever goes wrong in the class stays in the log."""
    room = Classroom(KEY)
    student, document = served_session(room)

    def broken() -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(student.seat, "page_lost", broken)
    document.callbacks.trigger_event(ConnectionLost())


# 2. The last answer counts ------------------------------------------------------------


def test_a_quick_correction_counts_once_the_interval_ends(loop: Loop) -> None:
    """9 then 8 within half a second: the page says "Right: 8", and so does the chart."""
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    loop.advance(1)
    assert student.answer("divisor", "9")
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 1}
    loop.advance(0.2)
    assert student.answer("divisor", "8")
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 1}  # not yet
    assert [round(due - loop.clock.now, 6) for due, _, _ in loop.timers] == [0.3]
    loop.advance(0.3)
    assert presenter.bar.answers["divisor"] == {"right": 1, "wrong": 0}
    assert loop.timers == []


def test_a_flood_of_answers_waits_on_one_timer_and_the_last_counts(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    changes = []
    presenter.bar.param.watch(lambda event: changes.append(event.new), "answers")
    loop.advance(1)
    for answer in ["9", "8", "64", "8", "7", "8", "64"] * 20:
        assert student.answer("divisor", answer)
        loop.advance(0.01)
    # One count at once, then one per interval: never a queue of answers.
    assert len(loop.timers) <= 1
    assert len(changes) <= 1 + 1.4 / ANSWER_INTERVAL_S + 1
    loop.advance(1)
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 1}  # 64, the last


def test_answers_to_two_questions_within_the_interval_both_count_in_one_change(
    loop: Loop,
) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    loop.advance(1)
    student.answer("divisor", "9")
    changes = []
    presenter.bar.param.watch(lambda event: changes.append(event.new), "answers")
    loop.advance(0.1)
    student.answer("divisor", "8")
    student.answer("sqrt", "sqrt")
    student.answer("divisor", "")  # counts as nothing: does not replace the 8
    assert len(loop.timers) == 1 and changes == []
    loop.advance(0.5)
    assert len(changes) == 1
    assert presenter.bar.answers["divisor"]["right"] == 1
    assert presenter.bar.answers["sqrt"]["right"] == 1


def test_an_answer_that_waited_keeps_its_time_against_another_tab_on_another_process(
    loop: Loop,
) -> None:
    """Two tabs of one browser on two processes: the answer given last wins, even when the
    one given first was counted after it (it waited for its interval)."""
    here, there = class_rooms(2, loop.clock)
    presenter = seat(here, loop, presenter=True)
    waiting = seat(here, loop)
    tab = seat(there, loop, ballot=waiting.bar.ballot)
    loop.advance(1)
    waiting.answer("divisor", "9")
    loop.advance(0.1)
    waiting.answer("divisor", "64")  # waits until 0.5 s after the 9
    loop.advance(0.1)
    tab.answer("divisor", "8")  # given later, counted at once
    loop.advance(1)
    assert presenter.bar.answers["divisor"] == {"right": 1, "wrong": 0}


def test_an_answer_waiting_when_the_page_closes_counts_nothing(loop: Loop) -> None:
    (room,) = class_rooms(1, loop.clock)
    presenter = seat(room, loop, presenter=True)
    student = seat(room, loop)
    loop.advance(1)
    student.answer("divisor", "8")
    student.answer("divisor", "64")
    student.page_lost()
    student.leave()
    loop.advance(1)
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 0}


ANSWERS = st.one_of(
    st.sampled_from(["8", "9", "64", "sqrt", "d", "", "x"]),
    st.dictionaries(
        st.sampled_from([item.key for item in MATCH_ITEMS]),
        st.sampled_from(["sqrt4", "sqrt8", "flat", ""]),
        max_size=4,
    ),
)
QUESTIONS = st.sampled_from(["divisor", "sqrt", "matching"])


@settings(max_examples=60, deadline=None)
@given(
    processes=st.integers(1, 2),
    moves=st.lists(
        st.tuples(st.integers(0, 2), QUESTIONS, ANSWERS, st.floats(0, 0.8)),
        min_size=1,
        max_size=40,
    ),
)
def test_each_students_last_answer_to_each_question_counts(
    processes: int, moves: list[tuple[int, str, object, float]]
) -> None:
    """Whatever the pace of the answers, once the intervals have ended the class counts each
    student's last answer to each question that counts as a choice; and it changes at most
    once per interval per student."""
    loop = Loop(Clock())
    made = class_rooms(processes, loop.clock)
    presenter = seat(made[0], loop, presenter=True)
    students = [seat(made[index % processes], loop) for index in range(3)]
    counted: dict[ClassSeat, list[float]] = {student: [] for student in students}
    for student in students:
        original = student.classroom.record_answers

        def record(member, answers, original=original, student=student):
            if member is student:
                counted[student].append(loop.clock.now)
            return original(member, answers)

        student.classroom.record_answers = record  # type: ignore[method-assign]
    last: dict[tuple[int, str], str] = {}
    loop.advance(1)
    for index, question, answer, pause in moves:
        choice = tally_choice(question, answer)
        assert students[index].answer(question, answer) == (choice is not None)
        if choice is not None:
            last[(index, question)] = choice
        assert len(loop.timers) <= len(students)
        loop.advance(pause)
    loop.advance(ANSWER_INTERVAL_S)
    assert loop.timers == []
    expected = {
        question: {
            choice: sum(1 for (_i, q), c in last.items() if q == question and c == choice)
            for choice in presenter.bar.answers[question]
        }
        for question in presenter.bar.answers
    }
    assert presenter.bar.answers == expected
    for times in counted.values():
        gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
        assert all(gap >= ANSWER_INTERVAL_S - 1e-9 for gap in gaps)
