"""One session's seat in the class: its class bar, and the scenes between its state and the
process's classroom (app/served/classroom.py).

A student's checked quiz answers count in the class (:meth:`ClassSeat.answer`), once per
browser: the student's bar claims the ballot its browser keeps, and the classroom counts the
answers under that ballot's voter (app/served/classroom.py). The bar shows the counts to the
presenter, with how many browsers they come from against how many pages are connected, and
to the students once the presenter shows them.

A presenter's seat sends the presenter's scene when **Send my scene** is pressed and, while
**Students follow me** is on, after each of the presenter's moves (the moves of one tick
fold into one scene). A student's seat takes the scenes the classroom delivers while its
student follows; a move of the student's own stops following once a class has been
presented (during an outage of the class bus too), and the bar says so; **Back to the
instructor's scene** takes the last scene again and follows on.
Every change to the session's page runs on the session's own next tick (``defer``): the
classroom calls a seat from another session's tick or from the bus's threads, and the
scenes that arrive in between fold into the last one.

A seat is counted in the class while its page is connected: the session tells it when the
page's connection closes (:meth:`ClassSeat.page_lost`) or comes back
(:meth:`ClassSeat.page_back`), and when the session ends (:meth:`ClassSeat.leave`). A
presenter's bar says how many students the last scene reached only while the class has as
many students: a student who comes or goes makes it a statement about a class gone by. A
scene sent while the class bus is down reaches the students of this process only: the bar
says so (``held``) until every process has taken it, then how many students it reached.

Once the answers are shown to the class, a student's seat hands them to the lesson too
(``show_result``), which draws them beside each question.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import param

from app.page.views.quiz import TALLY, tally_choice
from app.served.classroom import Classroom, Scene
from app.served.components.class_bar import PRESENTER, STUDENT, ClassBar
from app.served.ticks import Later
from app.simulation.state import SimulationState

QUESTION_CHOICES = {question: table["choices"] for question, table in TALLY.items()}
"""Each question's choices, which the counts cover (zeros included)."""

ANSWER_INTERVAL_S = 0.5
"""The shortest time between two counts of a session's answers: an answer given sooner
waits for the interval's end, and only the last answer to each question given meanwhile
counts then (a held Enter key or a script costs the class one change per interval; a
quick correction still counts)."""

Timer = Callable[[float, Callable[[], None]], None]
"""Runs a callback after a delay in seconds (a served session's event loop: ``later_by``)."""


def _run_at_once(delay: float, callback: Callable[[], None]) -> None:
    callback()


class ClassSeat:
    """A session's place in ``classroom``: a presenter's (``presenter=True``) or a
    student's. Its bar is built only when the page has something to show: at once for a
    presenter, for a student once a class is presented (a student's page in a class that
    nobody presents costs nothing more); ``show_bar`` puts it on the page."""

    def __init__(
        self,
        classroom: Classroom,
        state: SimulationState,
        *,
        presenter: bool,
        defer: Later,
        show_bar: Callable[[ClassBar], None],
        clock: Callable[[], float] = time.monotonic,
        later: Timer = _run_at_once,
        show_result: Callable[[dict], None] | None = None,
    ) -> None:
        self.classroom = classroom
        self.state = state
        self.presenter = presenter
        self._defer = defer
        self._show_bar = show_bar
        self.bar: ClassBar | None = None
        """What the page shows of the class (app/served/components/class_bar.py), once
        built."""
        self.following = True
        """Whether the student's controls take the instructor's scenes."""
        self._scene_waiting: Scene | None = None
        self._scene_due = False
        self._class_due = False
        self._moves_due = False
        self._applying = False
        self.clock = clock
        """What the seat reads the time from (the answers' interval)."""
        self.later = later
        """What runs the count of the answers that wait for the interval's end (without a
        server: at once)."""
        self._last_answer = -ANSWER_INTERVAL_S
        self._pending: dict[str, tuple[str, float]] = {}
        """The answers waiting for the interval's end: the last choice per question, and
        when it was given (on the classroom's clock)."""
        self._started = False
        self.page_connected = True
        """Whether the session's page holds its connection (the seat counts in the class
        only then)."""
        self.show_result = show_result
        """Hears the class's answers a student may see (``{}`` while hidden): the lesson
        draws them beside its questions."""
        self.result: dict = {}
        """The class's answers as last shown to this student (``{}``: hidden)."""
        state.param.watch(self._on_state, [*state.spec.names, "preset"])

    def prepare(self) -> None:
        """Put a presenter's bar on the page from its first render, before the seat joins:
        its page takes the presenter key out of the address before the session first
        writes the address (each write is a new entry of the tab's history)."""
        if self.presenter and self.bar is None:
            self._show_class()

    def start(self) -> None:
        """Join the classroom (once the session follows its state and its page is there): a
        student arriving in a presented class starts on the instructor's last scene."""
        classroom = self.classroom
        self._started = True
        if not self.page_connected:
            # Its connection closed before the page was ready: it joins if it comes back.
            return
        classroom.join(self, presenter=self.presenter)
        self._show_class()
        if not self.presenter and classroom.presented and classroom.scene is not None:
            self.take_scene(classroom.scene)

    def scene(self) -> dict[str, object]:
        """The scene this session's state shows: every control and the preset."""
        return {**self.state.control_values(), "preset": self.state.preset}

    def leave(self) -> None:
        """The session ended: leave the classroom for good."""
        self.classroom.leave(self)

    def page_lost(self) -> None:
        """The session's page lost its connection (its tab closed, its network went): count
        it out of the class now, though its session stays a while in case it returns."""
        self.page_connected = False
        self.classroom.away(self)

    def page_back(self) -> None:
        """The session's page connected again: count it back in, with its answers, and show
        it the class as it is now."""
        if self.page_connected:
            return
        self.page_connected = True
        if self._started:
            self.classroom.join(self, presenter=self.presenter)
            self.class_changed()

    def answer(self, question: object, answer: object) -> bool:
        """The student checked ``answer`` to ``question`` (untrusted, from the page): count
        it in the class as the choice it grades to, as its browser's voter's (once its page
        has shown its ballot); within :data:`ANSWER_INTERVAL_S` of the last count, at the
        interval's end, if no later answer to the question replaced it. False if it counts
        as nothing (not a student's, malformed, empty)."""
        if self.presenter:
            return False
        choice = tally_choice(question, answer)
        if choice is None:
            return False
        now = self.clock()
        wait = self._last_answer + ANSWER_INTERVAL_S - now
        if wait <= 0 and not self._pending:
            self._last_answer = now
            return self.classroom.record_answer(self, str(question), choice)
        # Stamped now: on another process, a later answer of the same browser still wins.
        due = bool(self._pending)
        self._pending[str(question)] = (choice, self.classroom.clock())
        if not due:
            # One timer per seat, and one answer per question waiting for it.
            self.later(max(wait, 0.0), self._count_pending)
        return True

    def _count_pending(self) -> None:
        pending, self._pending = self._pending, {}
        if not pending:
            return
        self._last_answer = self.clock()
        # Each answer keeps its own time, so one given later elsewhere still wins; all in
        # one change of the class.
        self.classroom.record_answers(self, pending)

    # What the classroom calls (from any thread, under its lock) ----------------------------

    def class_changed(self) -> None:
        """Students or a presenter came or left: show it on this session's next tick."""
        if not self._class_due:
            self._class_due = True
            self._defer(self._show_class)

    def take_scene(self, scene: Scene) -> None:
        """A presenter sent ``scene``: apply it on this session's next tick if the student
        follows then (scenes sent before that tick fold into the last)."""
        self._scene_waiting = scene
        if not self._scene_due:
            self._scene_due = True
            self._defer(self._apply_scene)

    # This session's own tick ------------------------------------------------------------

    def _show_class(self) -> None:
        self._class_due = False
        classroom = self.classroom
        shown = self.presenter or classroom.revealed
        values = {
            "students": classroom.students,
            "browsers": classroom.browsers,
            "presented": classroom.presented,
            "live": classroom.live,
            "revealed": classroom.revealed,
            "bus_down": classroom.bus_connected is False,
            "unreachable": classroom.unreachable,
            "answers": classroom.answer_counts(QUESTION_CHOICES) if shown else {},
        }
        if not self.presenter:
            self._show_result(values["answers"] if classroom.revealed else {})
        if self.bar is not None:
            if self.bar.held:
                if classroom.scene_everywhere:
                    # The scene held back by the outage has reached every process now.
                    values.update(held=False, reached=values["students"])
            elif self.bar.reached not in (-1, values["students"]):
                # The roll changed since the scene went: "reached N" would now be stale.
                values["reached"] = -1
            self.bar.param.update(**values)
        elif self.presenter or classroom.presented or values["bus_down"]:
            self.bar = ClassBar(
                role=PRESENTER if self.presenter else STUDENT,
                following=self.following,
                presenter_token=classroom.presenter_token if self.presenter else "",
                **values,
            )
            # What a page may change on its bar is what the seat acts on.
            self.bar.param.watch(self._on_bar, list(ClassBar.page_properties))
            self._show_bar(self.bar)

    def _set_following(self, following: bool) -> None:
        self.following = following
        if self.bar is not None:
            self.bar.following = following

    def _apply_scene(self) -> None:
        self._scene_due = False
        scene, self._scene_waiting = self._scene_waiting, None
        if scene is None or self.presenter or not self.following:
            return
        # Only what differs: setting a parameter to its own value still costs its checks.
        values = {
            name: value for name, value in scene.items() if getattr(self.state, name) != value
        }
        if not values:
            return
        self._applying = True
        try:
            self.state.param.update(**values)
        finally:
            self._applying = False

    def _on_state(self, *events: param.parameterized.Event) -> None:
        if self._applying:
            return
        if self.presenter:
            if self.classroom.live and not self._moves_due:
                self._moves_due = True
                self._defer(self._send_moves)
        elif self.following and self._in_a_class():
            # The student moved a control: their moves are theirs now (a scene that reaches
            # this process after an outage passes them by).
            self._set_following(False)

    def _in_a_class(self) -> bool:
        """Whether this student is in a class: one is presented, was (a scene came), or the
        bus is down (its presenter may be on another process)."""
        classroom = self.classroom
        return (
            classroom.presented or classroom.scene is not None or classroom.bus_connected is False
        )

    def _show_result(self, result: dict) -> None:
        if result != self.result:
            self.result = result
            if self.show_result is not None:
                self.show_result(result)

    def _reached(self, count: int) -> None:
        if self.bar is not None:
            # Sent while the bus is down, it reached only this process's students.
            self.bar.param.update(reached=count, held=self.classroom.bus_connected is False)

    def _send_moves(self) -> None:
        self._moves_due = False
        if self.classroom.live:
            self._reached(self.classroom.presenter_moved(self, self.scene()))

    def _on_bar(self, *events: param.parameterized.Event) -> None:
        for event in events:
            if event.type == "triggered":
                # A refused change from the page, its value sent back: no act of the page's.
                continue
            if event.name == "send_presses":
                self._reached(self.classroom.send_scene(self, self.scene()))
            elif event.name == "live":
                self.classroom.follow_live(self, bool(event.new))
                if event.new:
                    self._reached(self.classroom.send_scene(self, self.scene()))
            elif event.name == "revealed":
                self.classroom.reveal(self, bool(event.new))
            elif event.name == "reset_presses":
                self.classroom.reset_answers(self)
            elif event.name == "claim":
                self.bar.ballot = self.classroom.vote_as(self, event.new)
            elif event.name == "back_presses":
                self._set_following(True)
                self._back_to_the_instructor()

    def _back_to_the_instructor(self) -> None:
        if self.classroom.scene is not None:
            self._scene_waiting = self.classroom.scene
            self._apply_scene()
