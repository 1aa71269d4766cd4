"""One answer per browser per class (issue 45, ballot stuffing): each student's page claims the
ballot its browser keeps, the classroom counts answers per voter, and the presenter's bar
shows how many browsers the answers come from against how many pages are connected; on one
process and across two over the class bus (app/served/classroom.py, class_seat.py,
components/class_bar.py). Seats without a server or a page (tests/model/test_class_mode.py
runs whole sessions): each update runs at once."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import pytest
from bokeh.document import Document
from bokeh.model import Model
from hostile_messages import BAD_VALUES
from hypothesis import given, settings
from hypothesis import strategies as st
from panel.io.state import set_curdoc

from app.page.views.quiz import tally_choice
from app.served.class_seat import ANSWER_INTERVAL_S, QUESTION_CHOICES, ClassSeat, Timer
from app.served.classroom import Classroom
from app.served.components.class_bar import MAX_CLAIM_LENGTH
from app.simulation.state import SimulationState
from model.test_class_bus import KEY, MemoryBus

NO_BALLOT = "none"
"""What class_bar.js claims when its browser keeps no ballot."""


class Clock:
    """One clock for the seats' answer interval and the classrooms' answer times, moved by
    the test: every answer is past the interval, and later than the one before."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def tick(self) -> None:
        self.now += ANSWER_INTERVAL_S


def open_seat(
    room: Classroom,
    clock: Clock,
    *,
    presenter: bool = False,
    later: Timer | None = None,
    started: bool = True,
) -> ClassSeat:
    """A session's seat in ``room``, on a state of its own, started as a session starts it
    (unless not ``started``); ``later`` runs its timers (at once unless given)."""
    seat = ClassSeat(
        room,
        SimulationState(),
        presenter=presenter,
        defer=lambda update: update(),
        show_bar=lambda bar: None,
        clock=clock,
        **({} if later is None else {"later": later}),
    )
    if started:
        seat.start()
    return seat


def claim_ballot(student: ClassSeat, claim: object) -> str:
    """What a student's page does: claim ``claim`` if the bar takes it from a page (as Panel
    would, through ``accepts_from_page``); the ballot the page then keeps."""
    bar = student.bar
    if bar.accepts_from_page("claim", claim):
        bar.claim = claim
    return bar.ballot


def class_rooms(processes: int, clock: Clock) -> list[Classroom]:
    """``processes`` classrooms of one class (over a bus in memory when more than one)."""
    rooms = [Classroom(KEY, clock=clock) for _ in range(processes)]
    if processes > 1:
        bus = MemoryBus()
        for index, room in enumerate(rooms):
            bus.join(f"process-{index}", room)
    return rooms


def answer_once(student: ClassSeat, clock: Clock, question: str, answer: object) -> bool:
    clock.tick()
    return student.answer(question, answer)


def test_the_tabs_of_one_browser_count_as_one_voter() -> None:
    clock = Clock()
    (room,) = class_rooms(1, clock)
    presenter = open_seat(room, clock, presenter=True)
    first = open_seat(room, clock)
    ballot = claim_ballot(first, NO_BALLOT)
    assert room.ballot_voter(ballot) is not None
    tabs = [open_seat(room, clock) for _ in range(7)]
    assert all(claim_ballot(tab, ballot) == ballot for tab in tabs)  # one browser: one ballot
    bar = presenter.bar
    assert (bar.students, bar.browsers) == (8, 1)
    for tab in (first, *tabs):
        assert answer_once(tab, clock, "divisor", "8")
    assert bar.answers["divisor"] == {"right": 1, "wrong": 0}
    assert answer_once(tabs[3], clock, "divisor", "64")  # the voter's last answer counts
    assert bar.answers["divisor"] == {"right": 0, "wrong": 1}
    # The answer stays while one of the browser's pages does.
    for tab in tabs:
        tab.leave()
    assert bar.answers["divisor"] == {"right": 0, "wrong": 1}
    first.leave()
    assert bar.answers["divisor"] == {"right": 0, "wrong": 0} and bar.browsers == 0


def test_a_page_that_shows_no_ballot_counts_nothing_until_it_does() -> None:
    """Answers given before the page shows its ballot wait for it; a second claim (a
    script's, to switch voters) changes nothing."""
    clock = Clock()
    (room,) = class_rooms(1, clock)
    presenter = open_seat(room, clock, presenter=True)
    student = open_seat(room, clock)
    assert answer_once(student, clock, "divisor", "8")
    assert presenter.bar.answers["divisor"]["right"] == 0
    ballot = claim_ballot(student, NO_BALLOT)
    assert presenter.bar.answers["divisor"]["right"] == 1
    other = claim_ballot(open_seat(room, clock), NO_BALLOT)
    assert other != ballot
    student.bar.claim = other
    assert student.bar.ballot == ballot and presenter.bar.browsers == 2


def _forgeries(room: Classroom, ballot: str) -> list[object]:
    voter, _, signature = ballot.partition(".")
    flipped = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    return [
        *BAD_VALUES,
        f"{voter}.{flipped}",  # another signature
        f"{'0' * 16}.{signature}",  # another voter under this signature
        Classroom("another-presenter-key", clock=room.clock)._ballot(voter),  # another class's
        ballot.upper(),
        ballot + "0",
        " " + ballot,
        voter,
        "x" * (MAX_CLAIM_LENGTH + 1),
        "\ud800" * 10,
        ballot.replace(".", "\u2024"),
    ]


def test_a_forged_ballot_is_refused() -> None:
    """A claim this class did not sign (another class's, tampered, malformed, not text)
    makes its page a new voter, never the claimed one, and never raises."""
    clock = Clock()
    (room,) = class_rooms(1, clock)
    presenter = open_seat(room, clock, presenter=True)
    owner = open_seat(room, clock)
    ballot = claim_ballot(owner, NO_BALLOT)
    forgeries = _forgeries(room, ballot)
    assert all(room.ballot_voter(forged) is None for forged in forgeries)
    voters = {room.ballot_voter(ballot)}
    for forged in forgeries:
        page = open_seat(room, clock)
        kept = claim_ballot(page, forged)
        assert kept != ballot
        if kept:  # the bar took the claim: a voter of its own
            voters.add(room.ballot_voter(kept))
        else:  # refused at the bar: the page votes as nobody, its answers wait
            assert answer_once(page, clock, "divisor", "64")
    assert None not in voters and len(voters) == presenter.bar.browsers
    assert presenter.bar.answers["divisor"] == {"right": 0, "wrong": 0}


@given(st.text(max_size=80))
def test_no_text_is_a_ballot_unless_signed(claim: str) -> None:
    assert Classroom(KEY).ballot_voter(claim) is None


def test_the_bar_takes_only_a_short_text_as_a_claim_and_only_on_a_students_page() -> None:
    clock = Clock()
    room = Classroom(KEY, clock=clock)
    presenter = open_seat(room, clock, presenter=True)
    bar = open_seat(room, clock).bar
    assert bar.accepts_from_page("claim", "x" * MAX_CLAIM_LENGTH)
    for value in (
        "",
        "x" * (MAX_CLAIM_LENGTH + 1),
        "é" * 10,
        *(v for v in BAD_VALUES if v != "64"),
    ):
        assert not bar.accepts_from_page("claim", value)
    assert not presenter.bar.accepts_from_page("claim", NO_BALLOT)
    assert not bar.accepts_from_page("ballot", "x") and not bar.accepts_from_page("browsers", 1)


# A generated family: browsers, their pages on one or two processes, scripts with forged
# ballots, answers and pages that leave; the class's counts are the voters' last answers.

QUESTIONS = {
    "divisor": st.sampled_from(["8", "64", " 8.0 ", "", "x"]),
    "sqrt": st.sampled_from(["np.sqrt", "log", ""]),
}


@dataclass
class Page:
    """One generated page: whose browser (None: a script claiming ``forged``), on which
    process, its answers, and whether it leaves at the end."""

    browser: int | None
    process: int
    answers: list[tuple[str, object]] = field(default_factory=list)
    leaves: bool = False
    forged: str = "forged"


@st.composite
def _pages(draw: st.DrawFn, processes: int) -> list[Page]:
    answers = st.lists(
        st.sampled_from(list(QUESTIONS)).flatmap(
            lambda question: QUESTIONS[question].map(lambda answer: (question, answer))
        ),
        max_size=3,
    )
    page = st.builds(
        Page,
        browser=st.one_of(st.none(), st.integers(0, 3)),
        process=st.integers(0, processes - 1),
        answers=answers,
        leaves=st.booleans(),
        forged=st.one_of(
            st.text(max_size=70),
            st.sampled_from([NO_BALLOT, f"{'0' * 16}.{'0' * 32}", "a" * 65]),
        ),
    )
    return draw(st.lists(page, min_size=1, max_size=10))


def _class_of(processes: int, pages: list[Page]) -> None:
    """Open, answer and close ``pages`` on ``processes`` processes; the presenter's bar and
    every process count each voter's last answers, and the voters."""
    clock = Clock()
    rooms = class_rooms(processes, clock)
    presenter = open_seat(rooms[0], clock, presenter=True)
    storage: dict[int, str] = {}
    seats: list[tuple[Page, ClassSeat, object]] = []
    for index, page in enumerate(pages):
        seat = open_seat(rooms[page.process], clock)
        if page.browser is None:
            # A script's forged claim: a voter of its own if the bar takes it, else none.
            voter = f"script {index}" if claim_ballot(seat, page.forged) else None
        else:
            storage[page.browser] = claim_ballot(seat, storage.get(page.browser, NO_BALLOT))
            voter = page.browser  # a browser's tabs are one voter
        seats.append((page, seat, voter))
    # Every voter's answers by process, in time order: a process keeps a voter's last
    # answers while one of its pages there is connected, and the class counts the latest.
    given: dict[tuple[object, int], dict[str, tuple[str, float]]] = {}
    for page, seat, voter in seats:
        for question, answer in page.answers:
            choice = tally_choice(question, answer)
            assert answer_once(seat, clock, question, answer) == (choice is not None)
            if choice is not None and voter is not None:
                given.setdefault((voter, page.process), {})[question] = (choice, clock.now)
    for page, seat, _voter in seats:
        if page.leaves:
            seat.leave()
    staying = {
        (voter, page.process)
        for page, _opened, voter in seats
        if not page.leaves and voter is not None
    }
    latest: dict[object, dict[str, tuple[str, float]]] = {}
    for (voter, process), answers in given.items():
        if (voter, process) in staying:
            for question, (choice, at) in answers.items():
                kept = latest.setdefault(voter, {})
                if question not in kept or kept[question][1] < at:
                    kept[question] = (choice, at)
    expected = {q: dict.fromkeys(choices, 0) for q, choices in QUESTION_CHOICES.items()}
    for answers in latest.values():
        for question, (choice, _at) in answers.items():
            expected[question][choice] += 1
    bar = presenter.bar
    voters = {voter for voter, _process in staying}
    pages_left = [page for page in pages if not page.leaves]
    assert bar.answers == expected
    assert bar.students == len(pages_left)
    assert bar.browsers == len(voters) <= bar.students
    for room in rooms:  # every process counts the same
        assert room.answer_counts(QUESTION_CHOICES) == expected and room.browsers == len(voters)


@settings(deadline=None)
@given(_pages(1))
def test_one_process_counts_each_voters_last_answers(pages: list[Page]) -> None:
    _class_of(1, pages)


@settings(deadline=None)
@given(_pages(2))
def test_two_processes_count_each_voters_last_answers(pages: list[Page]) -> None:
    """Across the bus a browser with tabs on both processes is one voter, and its latest
    answer counts, on both."""
    _class_of(2, pages)


@pytest.mark.parametrize("processes", [1, 2])
def test_eight_sessions_of_one_script_are_one_answer(processes: int) -> None:
    """The issue's case: a script opens eight sessions of one browser and answers in each;
    the class counts one answer, and the presenter sees eight pages from one browser."""
    pages = [Page(browser=0, process=i % processes, answers=[("divisor", "64")]) for i in range(8)]
    _class_of(processes, pages)


def test_a_status_carries_at_most_max_voters_those_who_answered_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process with more voters than a status may carry sends those who answered: the
    others would refuse a larger status whole."""
    import app.served.classroom as classroom_module

    monkeypatch.setattr(classroom_module, "MAX_VOTERS", 3)
    clock = Clock()
    first, second = class_rooms(2, clock)
    open_seat(second, clock, presenter=True)
    seats = [open_seat(first, clock) for _ in range(5)]
    for seat in seats:
        claim_ballot(seat, NO_BALLOT)
    assert answer_once(seats[4], clock, "divisor", "8")
    assert second.browsers == 3
    assert second.answer_counts(QUESTION_CHOICES)["divisor"]["right"] == 1


def _bar_data(document: Document) -> Model:
    """The class bar's data model in ``document``, found as a client finds it."""
    (model,) = [
        m
        for m in document.models
        if getattr(m, "data", None) is not None and hasattr(m.data, "claim")
    ]
    return model.data


def test_a_hostile_claim_from_the_page_is_refused_before_the_classroom_sees_it() -> None:
    """Claims sent as a page sends them (Bokeh's document, through the bar's checks): a
    value of the wrong type, size or characters changes nothing and never raises past
    Bokeh's own refusal; a plain word then makes the page a voter."""
    clock = Clock()
    (room,) = class_rooms(1, clock)
    open_seat(room, clock, presenter=True)
    student = open_seat(room, clock)
    document = Document()
    document.add_root(student.bar.get_root(document))
    data = _bar_data(document)
    hostile = [*BAD_VALUES, "x" * (MAX_CLAIM_LENGTH + 1), "é", "a b", "<b>", "\u2024" * 3]
    with set_curdoc(document):
        for value in hostile:
            if value == "64":  # a plain word: the page's claim, a voter of its own
                continue
            with contextlib.suppress(ValueError):  # Bokeh refused the type itself
                data.set_from_json("claim", value, setter=object())
        assert (student.bar.claim, student.bar.ballot, room.browsers) == ("", "", 0)
        data.set_from_json("claim", NO_BALLOT, setter=object())
    assert room.ballot_voter(student.bar.ballot) is not None and room.browsers == 1


def test_a_refused_press_from_the_presenters_page_sends_nothing() -> None:
    """A refused change is answered by sending the bar's value back (a trigger): the seat
    takes that for no act, so a forged press count sends no scene, as a forged claim makes
    no voter."""
    clock = Clock()
    (room,) = class_rooms(1, clock)
    presenter = open_seat(room, clock, presenter=True)
    student = open_seat(room, clock)
    claim_ballot(student, NO_BALLOT)
    document = Document()
    document.add_root(presenter.bar.get_root(document))
    with set_curdoc(document):
        _bar_data(document).set_from_json("send_presses", -1, setter=object())
    assert presenter.bar.reached == -1 and room.scene is None
    presenter.bar.send_presses = 1
    assert presenter.bar.reached == 1 and room.scene is not None
