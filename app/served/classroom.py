"""Class mode on one process: the presenter's scene reaches the students' sessions.

An instructor opens the page with the presenter link ``…/main?present=KEY`` (``sdpa-sim``
prints it at start; the key is new for each start unless ``--presenter-key`` gives one, and
reaches the app's processes as :data:`PRESENTER_KEY_ENV`). Every other session of the
process is a student's. The presenter's page can send its scene to the class at once, or
have the class follow each of its moves; a student's session takes a scene only while its
student follows (:class:`app.served.session.Session` decides, the classroom only delivers).

The class's quiz answers are counted per question and choice (the choice an answer counts as,
graded on the server), anonymously: a student's last answer to each question, dropped when
the student leaves. The presenter sees the counts; the students once the presenter shows
them.

The classroom holds sessions, never their pages: it calls a member's methods on the
presenter's event-loop tick, and each session moves its own page on its own next tick (the
scenes that arrive in between fold into the last one). Nothing is kept of a student beyond
its session, and nothing is written to disk.
"""

from __future__ import annotations

import functools
import hmac
import os
import secrets
from collections.abc import Mapping
from typing import Protocol

PRESENTER_KEY_ENV = "SDPA_SIM_PRESENTER_KEY"
"""The environment variable that gives the app's processes the presenter key (``sdpa-sim``
sets it; without it, plain ``panel serve`` has no class mode)."""

PRESENT_PARAMETER = "present"
"""The query parameter of the presenter link."""

MIN_KEY_LENGTH = 12
"""The shortest presenter key ``--presenter-key`` takes: a key short enough to guess would
let any student present."""

MAX_KEY_LENGTH = 128
"""The longest key compared; a longer ``?present=`` presents nothing."""

Scene = Mapping[str, object]
"""Every control's value and the preset scene, by name, as the presenter's state holds them."""


class ClassMember(Protocol):
    """What the classroom calls on a session that joined it."""

    def class_changed(self) -> None:
        """The class changed: students came or left, or a presenter did."""
        ...

    def take_scene(self, scene: Scene) -> None:
        """The presenter sent ``scene`` (a student's session applies it if its student
        follows)."""
        ...


def new_presenter_key() -> str:
    """A random presenter key (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def checked_presenter_key(key: str) -> str:
    """``key`` if it can serve as a presenter key: printable ASCII without spaces, at least
    :data:`MIN_KEY_LENGTH` and at most :data:`MAX_KEY_LENGTH` characters.

    Raises:
        ValueError: with a message that says what a key must be.
    """
    if not MIN_KEY_LENGTH <= len(key) <= MAX_KEY_LENGTH or not all(
        "!" <= character <= "~" for character in key
    ):
        raise ValueError(
            f"a presenter key is {MIN_KEY_LENGTH} to {MAX_KEY_LENGTH} printable ASCII "
            "characters without spaces"
        )
    return key


class Classroom:
    """The sessions of one process, the presenters among them, and the last scene sent.

    ``presenter_key`` is the key a presenter link carries; empty, nobody presents and the
    classroom stays empty (sessions do not join it).
    """

    def __init__(self, presenter_key: str = "") -> None:
        self._key = presenter_key.encode("utf-8")
        self._presenters: list[ClassMember] = []
        self._students: list[ClassMember] = []
        self.scene: Scene | None = None
        """The last scene a presenter sent, which a student who goes back to the
        instructor's scene takes; None before the first."""
        self.live = False
        """Whether the class follows each of the presenter's moves."""
        self.revealed = False
        """Whether the students see the class's answers (the presenter always does)."""
        self._answers: dict[ClassMember, dict[str, str]] = {}
        """Each student's last answer per question, as the choice it counts as; dropped when
        the student leaves."""

    @property
    def enabled(self) -> bool:
        """Whether a presenter link can present on this process."""
        return bool(self._key)

    def presents(self, candidate: object) -> bool:
        """Whether ``candidate`` (a link's untrusted ``?present=`` value) is the presenter
        key, compared in constant time; False for anything else, with no reason given."""
        if not self._key or not isinstance(candidate, str) or len(candidate) > MAX_KEY_LENGTH:
            return False
        try:
            given = candidate.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return hmac.compare_digest(given, self._key)

    @property
    def students(self) -> int:
        """How many students' sessions are connected."""
        return len(self._students)

    @property
    def presented(self) -> bool:
        """Whether a presenter's page is connected."""
        return bool(self._presenters)

    def join(self, member: ClassMember, *, presenter: bool) -> None:
        """Count ``member`` in, as a presenter or a student; tell whom it concerns."""
        if not self.enabled or member in self._presenters or member in self._students:
            return
        was_presented = self.presented
        (self._presenters if presenter else self._students).append(member)
        self._tell(presenters_only=not presenter or was_presented)

    def leave(self, member: ClassMember) -> None:
        """Count ``member`` out (its page closed); when the last presenter leaves, the class
        stops following live."""
        if member in self._presenters:
            self._presenters.remove(member)
            if not self._presenters:
                self.live = self.revealed = False
            self._tell(presenters_only=self.presented)
        elif member in self._students:
            self._students.remove(member)
            answered = self._answers.pop(member, None)
            self._tell(presenters_only=not (answered and self.revealed))

    def send_scene(self, presenter: ClassMember, scene: Scene) -> int:
        """Send ``scene`` from ``presenter`` to every student; return how many it reached
        (0 if ``presenter`` is not one: a student's session cannot send a scene)."""
        if presenter not in self._presenters:
            return 0
        self.scene = dict(scene)
        for student in list(self._students):
            student.take_scene(self.scene)
        return len(self._students)

    def follow_live(self, presenter: ClassMember, live: bool) -> None:
        """Have the class follow each of the presenter's moves (``live``), or stop (the
        presenter's session sends its scene as it goes live)."""
        if presenter in self._presenters:
            self.live = bool(live)

    def presenter_moved(self, presenter: ClassMember, scene: Scene) -> int:
        """A presenter's controls changed: while the class follows live, send the scene."""
        return self.send_scene(presenter, scene) if self.live else 0

    def record_answer(self, student: ClassMember, question: str, choice: str) -> bool:
        """Count ``student``'s answer to ``question`` as ``choice`` (its last answer to a
        question replaces the one before); False if ``student`` is not one."""
        if student not in self._students:
            return False
        self._answers.setdefault(student, {})[question] = choice
        self._tell(presenters_only=not self.revealed)
        return True

    def answer_counts(self, questions: Mapping[str, Mapping[str, object]]) -> dict:
        """How many students' last answers count as each choice of each question, for every
        question and choice of ``questions`` (``{question: {choice: …}}``), zeros included."""
        counts = {question: dict.fromkeys(choices, 0) for question, choices in questions.items()}
        for answers in self._answers.values():
            for question, choice in answers.items():
                if choice in counts.get(question, {}):
                    counts[question][choice] += 1
        return counts

    def reset_answers(self, presenter: ClassMember) -> None:
        """Forget every answer (a presenter's Reset)."""
        if presenter in self._presenters:
            self._answers.clear()
            self._tell(presenters_only=not self.revealed)

    def reveal(self, presenter: ClassMember, shown: bool) -> None:
        """Show the students the class's answers, or hide them (a presenter's switch)."""
        if presenter in self._presenters and self.revealed != bool(shown):
            self.revealed = bool(shown)
            self._tell(presenters_only=False)

    def _tell(self, *, presenters_only: bool) -> None:
        members = self._presenters if presenters_only else self._presenters + self._students
        for member in list(members):
            member.class_changed()


@functools.cache
def process_classroom() -> Classroom:
    """This process's classroom, keyed by :data:`PRESENTER_KEY_ENV` (no key: disabled)."""
    return Classroom(os.environ.get(PRESENTER_KEY_ENV, ""))
