"""Class mode: the presenter's scene reaches the students' sessions, and their answers the
presenter's, on one process or, over the class bus (app/served/class_bus.py), on several.

An instructor opens the page with the presenter link ``…/main?present=KEY`` (``sdpa-sim``
prints it at start; the key is new for each start unless ``--presenter-key`` gives one, and
reaches the app's processes as :data:`PRESENTER_KEY_ENV`); its page then keeps
:attr:`Classroom.presenter_token` in :data:`PRESENTER_COOKIE` and takes the key out of its
address, and a request with that cookie presents too. Every other session of the
process is a student's. The presenter's page can send its scene to the class at once, or
have the class follow each of its moves; a student's session takes a scene only while its
student follows (:class:`app.served.session.Session` decides, the classroom only delivers).

The class's quiz answers are counted per question and choice (the choice an answer counts as,
graded on the server), anonymously and once per browser: each student's page shows the
classroom a ballot (:meth:`Classroom.vote_as`), a voter id the classroom signed and the page
keeps in the browser's storage, so the tabs and reloads of one browser are one voter, whose
last answer to each question counts; a voter's answers are dropped when its last page
leaves. The presenter sees the counts, and how many browsers they come from against how
many pages are connected; the students see the counts once the presenter shows them.

The roll follows the pages' connections: a page whose connection closed is counted out at
once (:meth:`Classroom.away`), though Bokeh keeps its session for a while in case it comes
back; if it does (:meth:`Classroom.join` again), it is counted in with what it left with.

While the class bus is down, the other processes' students are out of reach
(:attr:`Classroom.unreachable`, as last seen) and their voters' answers count as they were;
a scene sent meanwhile reaches this process's students, and every other process once the
bus is back: each status carries the newest scene and when it was sent, and a process
takes a scene only if it is newer than its own (:attr:`Classroom.scene_everywhere` says
when every process has it).

The classroom holds sessions, never their pages: it calls a member's methods under its lock
from whichever thread acts (a session's tick, the bus's listening thread, its heartbeat),
and each session moves its own page on its own next tick (the scenes that arrive in between
fold into the last one). Nothing is kept of a student beyond its session, and nothing is
written to disk.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.simulation.presets import PRESETS
from app.simulation.spec import SPEC, SimulationSpec
from app.simulation.state import SimulationState

PRESENTER_KEY_ENV = "SDPA_SIM_PRESENTER_KEY"
"""The environment variable that gives the app's processes the presenter key (``sdpa-sim``
sets it; without it, plain ``panel serve`` has no class mode)."""

PRESENT_PARAMETER = "present"
"""The query parameter of the presenter link."""

PRESENTER_COOKIE = "sdpa-sim-presenter"
"""The cookie a presenter's page keeps its presenter token in (:attr:`Classroom.presenter_token`),
so that it can take the key out of its address bar and still present after a reload."""

PRESENTER_COOKIE_MAX_AGE_S = 12 * 3600
"""How long the presenter's browser keeps the cookie: a teaching day (a new start of the
server, with a new key, makes it worthless sooner)."""

TOKEN_LENGTH = 32
"""The presenter token's length in hex digits (128 bits)."""

STATUS_EVERY_S = 0.1
"""The most often a process on the class bus publishes a changed status."""

HEARTBEAT_S = 1.0
"""How often a process on the class bus publishes its status even when nothing changed."""

SILENT_AFTER_S = 3.5
"""A process whose last status on the bus is older than this counts as gone."""

MIN_KEY_LENGTH = 12
"""The shortest presenter key ``--presenter-key`` takes: a key short enough to guess would
let any student present."""

MAX_KEY_LENGTH = 128
"""The longest key compared; a longer ``?present=`` presents nothing."""

MAX_VOTERS = 2000
"""The most voters a process's status on the bus may carry (a status over it is refused)."""

VOTER = re.compile(r"[0-9a-f]{16}")
"""A voter id: 64 random bits, in hex."""

BALLOT = re.compile(r"(?P<voter>[0-9a-f]{16})\.[0-9a-f]{32}")
"""A ballot: a voter id and its signature (the first 128 bits of its HMAC-SHA256, in hex)."""

Answer = tuple[str, float]
"""The choice an answer counts as, and when it was given (the wall clock, so that the last
of one voter's answers on two processes wins)."""

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


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` run under its classroom's lock: sessions call it from their own ticks (in
    worker threads, with Bokeh 3.10) and the bus from its threads."""

    @functools.wraps(method)
    def run(self: Classroom, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class ClassBus(Protocol):
    """What a classroom publishes through (app/served/class_bus.py's RedisBus)."""

    def publish(self, payload: dict[str, Any]) -> None:
        """Send ``payload`` to the class's other processes."""
        ...


class Classroom:
    """The sessions of one process, the presenters among them, and the last scene sent;
    with a bus (:meth:`connect`), the class across the processes that share it.

    ``presenter_key`` is the key a presenter link carries; empty, nobody presents and the
    classroom stays empty (sessions do not join it). ``spec`` holds the controls a scene
    may set (the app's unless given: the process's pages are of one spec).
    """

    def __init__(
        self,
        presenter_key: str = "",
        spec: SimulationSpec = SPEC,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = presenter_key.encode("utf-8")
        # Derived from the presenter key, as the bus's: every process of the class accepts
        # the ballots of the others, and a new start (a new key) makes every ballot new.
        self._ballot_key = hmac.new(b"sdpa-sim ballot", self._key, hashlib.sha256).digest()
        self.clock = clock
        """What an answer's time is read from (the last of a voter's answers counts)."""
        self.spec = spec
        """The controls a scene may set."""
        self._presenters: list[ClassMember] = []
        self._students: list[ClassMember] = []
        self.scene: Scene | None = None
        """The last scene a presenter sent, which a student who goes back to the
        instructor's scene takes; None before the first."""
        self.scene_at = 0.0
        """When :attr:`scene` was sent (on :attr:`clock`; 0 before the first): a scene from
        the bus is taken only if newer, so one sent during an outage reaches the other
        processes once it ends (every status carries the newest scene)."""
        self._live = False
        self._revealed = False
        self._voters: dict[ClassMember, str] = {}
        """The voter each student's page showed the ballot of."""
        self._answers: dict[str, dict[str, Answer]] = {}
        """Each voter's last answer per question; dropped when its last page leaves."""
        self._waiting: dict[ClassMember, dict[str, Answer]] = {}
        """The answers of students whose page has not shown a ballot yet: they count once
        it has, as its voter's."""
        self._away: dict[ClassMember, _Away] = {}
        """The members whose page lost its connection and whose session is still kept,
        with what they take back if the page returns (dropped as the session ends)."""
        self._lock = threading.RLock()
        self._bus: ClassBus | None = None
        self._beating = threading.Event()
        """Set while the heartbeat thread runs (it then publishes the status changes)."""
        self._others: dict[str, tuple[dict[str, Any], float]] = {}
        """The other processes' last status on the bus, by origin, and when it came."""
        self._unreachable: dict[str, dict[str, Any]] = {}
        """While the bus is down, the other processes' statuses as last seen: their
        students are out of reach, their voters' answers count as they were."""
        self._status_dirty = False
        self._status_sent_at = 0.0
        self.bus_connected: bool | None = None
        """Whether the class bus is reachable now; None without a bus."""

    @property
    def enabled(self) -> bool:
        """Whether a presenter link can present on this process."""
        return bool(self._key)

    @property
    def presenter_token(self) -> str:
        """What a presenter's browser keeps in :data:`PRESENTER_COOKIE`: derived from the key
        (the key itself is never stored), the same on every process of the class, worthless
        once the server starts with another key; "" when nobody can present."""
        if not self._key:
            return ""
        token = hmac.new(self._key, b"sdpa-sim presenter cookie", hashlib.sha256).hexdigest()
        return token[:TOKEN_LENGTH]

    def presents_by_cookie(self, candidate: object) -> bool:
        """Whether ``candidate`` (a request's untrusted :data:`PRESENTER_COOKIE`) is
        :attr:`presenter_token`, compared in constant time."""
        if not self._key or not isinstance(candidate, str) or len(candidate) != TOKEN_LENGTH:
            return False
        try:
            given = candidate.encode("ascii")
        except UnicodeEncodeError:
            return False
        return hmac.compare_digest(given, self.presenter_token.encode("ascii"))

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

    # The class as the pages see it: this process and the others on the bus --------------

    def _fresh_others(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        return [status for status, seen in self._others.values() if now - seen < SILENT_AFTER_S]

    @property
    @_locked
    def students(self) -> int:
        """How many students' pages are connected, in every process of the class."""
        return len(self._students) + sum(other["students"] for other in self._fresh_others())

    @property
    @_locked
    def presented(self) -> bool:
        """Whether a presenter's page is connected, in any process of the class."""
        return bool(self._presenters) or any(o["presenters"] for o in self._fresh_others())

    @property
    @_locked
    def live(self) -> bool:
        """Whether the class follows each of a presenter's moves."""
        return self._live or any(other["live"] for other in self._fresh_others())

    @property
    @_locked
    def revealed(self) -> bool:
        """Whether the students see the class's answers (the presenters always do)."""
        return self._revealed or any(other["revealed"] for other in self._fresh_others())

    @property
    @_locked
    def unreachable(self) -> int:
        """How many students the other processes had when the bus went down (as last seen),
        out of reach until it is back; 0 while it is up."""
        return sum(status["students"] for status in self._unreachable.values())

    @property
    @_locked
    def scene_everywhere(self) -> bool:
        """Whether every process of the class has taken the newest scene sent (each says so
        in its status); False while the bus is down."""
        if self.bus_connected is False:
            return False
        return all(other.get("scene_at", 0.0) >= self.scene_at for other in self._fresh_others())

    @property
    @_locked
    def browsers(self) -> int:
        """How many voters (browsers) the students' pages are, in every process of the class:
        fewer than :attr:`students` when a browser has several tabs, more never."""
        return len(self._class_box())

    @_locked
    def answer_counts(self, questions: Mapping[str, Mapping[str, object]]) -> dict:
        """How many voters' last answers count as each choice of each question, in every
        process of the class, for every question and choice of ``questions``
        (``{question: {choice: …}}``), zeros included."""
        counts = {question: dict.fromkeys(choices, 0) for question, choices in questions.items()}
        for answers in self._class_box().values():
            for question, (choice, _at) in answers.items():
                if choice in counts.get(question, {}):
                    counts[question][choice] += 1
        return counts

    def _local_box(self) -> dict[str, dict[str, Answer]]:
        """This process's voters, each with its answers (none yet: an empty dict)."""
        return {voter: self._answers.get(voter, {}) for voter in set(self._voters.values())}

    def _class_box(self) -> dict[str, dict[str, Answer]]:
        """Every voter of the class with its last answer to each question: a voter with
        pages on several processes is one, and its latest answer counts."""
        box: dict[str, dict[str, Answer]] = {}
        others = [*self._fresh_others(), *self._unreachable.values()]
        for voters in [self._local_box(), *(other["voters"] for other in others)]:
            for voter, answers in voters.items():
                kept = box.setdefault(voter, {})
                for question, (choice, at) in answers.items():
                    if question not in kept or kept[question][1] < at:
                        kept[question] = (choice, at)
        return box

    # Ballots ----------------------------------------------------------------------------

    def _ballot(self, voter: str) -> str:
        signature = hmac.new(self._ballot_key, voter.encode("ascii"), hashlib.sha256)
        return f"{voter}.{signature.hexdigest()[:32]}"

    def ballot_voter(self, ballot: object) -> str | None:
        """The voter of ``ballot`` (a page's untrusted claim) if this class signed it; None
        for anything else (another class's, forged, malformed), with no reason given."""
        if not isinstance(ballot, str) or (match := BALLOT.fullmatch(ballot)) is None:
            return None
        voter = match["voter"]
        return voter if hmac.compare_digest(ballot, self._ballot(voter)) else None

    @_locked
    def vote_as(self, student: ClassMember, claim: object) -> str:
        """The ballot ``student``'s page votes with from now on: the one it claims (kept in
        its browser) if this class signed it, else a new voter's; "" if ``student`` is not
        one. A page votes as one voter: a second claim changes nothing. The answers the
        student gave before count now, as the voter's (the later of two answers wins)."""
        if student not in self._students:
            return ""
        voter = self._voters.get(student)
        if voter is None:
            voter = self.ballot_voter(claim) or secrets.token_hex(8)
            self._voters[student] = voter
            waiting = self._waiting.pop(student, {})
            if waiting:
                self._keep(voter, waiting)
            self._changed(presenters_only=not (waiting and self.revealed))
        return self._ballot(voter)

    def _keep(self, voter: str, answers: Mapping[str, Answer]) -> None:
        kept = self._answers.setdefault(voter, {})
        for question, answer in answers.items():
            if question not in kept or kept[question][1] <= answer[1]:
                kept[question] = answer

    # Members ----------------------------------------------------------------------------

    @_locked
    def join(self, member: ClassMember, *, presenter: bool) -> None:
        """Count ``member`` in, as a presenter or a student; tell whom it concerns. A member
        that was :meth:`away` comes back with what it left with: its voter and the voter's
        answers (the later of two answers wins), or the switches it left on as the last
        presenter (unless another presenter came meanwhile)."""
        if not self.enabled or member in self._presenters or member in self._students:
            return
        was_presented = self.presented
        returned = self._away.pop(member, None)
        (self._presenters if presenter else self._students).append(member)
        if returned is None:
            self._changed(presenters_only=not presenter or was_presented)
            return
        if presenter:
            if len(self._presenters) == 1:
                self._live, self._revealed = returned.live, returned.revealed
        else:
            if returned.waiting:
                self._waiting[member] = dict(returned.waiting)
            if returned.voter is not None:
                self._voters[member] = returned.voter
                self._keep(returned.voter, returned.answers)
        self._changed(presenters_only=False)

    @_locked
    def away(self, member: ClassMember) -> None:
        """Count ``member`` out because its page lost its connection, as :meth:`leave` does,
        but keep what it takes back if the page returns (:meth:`join`) until it leaves."""
        if member in self._presenters:
            last = len(self._presenters) == 1
            self._away[member] = _Away(live=self._live and last, revealed=self._revealed and last)
        elif member in self._students:
            voter = self._voters.get(member)
            self._away[member] = _Away(
                voter=voter,
                answers=dict(self._answers.get(voter, {})) if voter is not None else {},
                waiting=dict(self._waiting.get(member, {})),
            )
        else:
            return
        self._count_out(member)

    @_locked
    def leave(self, member: ClassMember) -> None:
        """Count ``member`` out for good (its session ended); when the last presenter leaves,
        the class stops following live and hides the answers."""
        self._away.pop(member, None)
        self._count_out(member)

    def _count_out(self, member: ClassMember) -> None:
        if member in self._presenters:
            self._presenters.remove(member)
            if not self._presenters:
                self._live = self._revealed = False
            self._changed(presenters_only=self.presented)
        elif member in self._students:
            self._students.remove(member)
            self._waiting.pop(member, None)
            voter = self._voters.pop(member, None)
            # The voter's answers stay while another of its pages (a tab) is connected.
            answered = voter not in self._voters.values() and self._answers.pop(voter, None)
            self._changed(presenters_only=not (answered and self.revealed))

    # A presenter's acts -----------------------------------------------------------------

    @_locked
    def send_scene(self, presenter: ClassMember, scene: Scene) -> int:
        """Send ``scene`` from ``presenter`` to every student (on the bus too); return how
        many it reached (0 if ``presenter`` is not one: a student's session cannot send a
        scene)."""
        if presenter not in self._presenters:
            return 0
        self._deliver(scene, max(self.clock(), self.scene_at + 1e-3))
        if self._bus is not None:
            # Dropped while the bus is down: every status carries the scene, and the other
            # processes take it from the first status they hear once it is back.
            self._bus.publish({"kind": "scene", "scene": dict(scene), "at": self.scene_at})
        return self.students

    @_locked
    def follow_live(self, presenter: ClassMember, live: bool) -> None:
        """Have the class follow each of the presenter's moves (``live``), or stop (the
        presenter's session sends its scene as it goes live)."""
        if presenter in self._presenters and self._live != bool(live):
            self._live = bool(live)
            self._changed(presenters_only=False)

    @_locked
    def presenter_moved(self, presenter: ClassMember, scene: Scene) -> int:
        """A presenter's controls changed: while the class follows live, send the scene."""
        return self.send_scene(presenter, scene) if self._live else 0

    @_locked
    def reset_answers(self, presenter: ClassMember) -> None:
        """Forget every answer (a presenter's Reset), in every process of the class."""
        if presenter in self._presenters:
            self._forget_answers()
            if self._bus is not None:
                self._bus.publish({"kind": "reset"})
            self._changed(presenters_only=not self.revealed)

    @_locked
    def reveal(self, presenter: ClassMember, shown: bool) -> None:
        """Show the students the class's answers, or hide them (a presenter's switch)."""
        if presenter in self._presenters and self._revealed != bool(shown):
            self._revealed = bool(shown)
            self._changed(presenters_only=False)

    # A student's answers -----------------------------------------------------------------

    @_locked
    def record_answer(
        self, student: ClassMember, question: str, choice: str, at: float | None = None
    ) -> bool:
        """Count ``student``'s answer to ``question`` as ``choice``, given ``at`` (on
        :attr:`clock`; now unless given), as its voter's (a voter's last answer to a question
        replaces the one before), or, until its page shows a ballot, keep it for then; False
        if ``student`` is not one."""
        stamp = self.clock() if at is None else at
        return self.record_answers(student, {question: (choice, stamp)})

    @_locked
    def record_answers(self, student: ClassMember, answers: Mapping[str, Answer]) -> bool:
        """:meth:`record_answer` for several questions at once (``{question: (choice,
        time)}``), with one change told to the pages; False if ``student`` is not one."""
        if student not in self._students:
            return False
        voter = self._voters.get(student)
        if voter is None:
            self._waiting.setdefault(student, {}).update(answers)
            return True
        self._keep(voter, answers)
        self._changed(presenters_only=not self.revealed)
        return True

    def _forget_answers(self) -> None:
        self._answers.clear()
        self._waiting.clear()
        # An absent page that returns after a reset brings no answer from before it.
        for returned in self._away.values():
            returned.answers.clear()
            returned.waiting.clear()

    # The bus ----------------------------------------------------------------------------

    def connect(self, url: str) -> None:
        """Join the class on the Redis bus at ``url`` (app/served/class_bus.py), with a
        heartbeat thread that publishes this process's status on change (at most every
        :data:`STATUS_EVERY_S`) and every :data:`HEARTBEAT_S` seconds."""
        from app.served.class_bus import RedisBus, signing_key

        bus = RedisBus(
            url,
            signing_key(self._key.decode("utf-8")),
            origin=secrets.token_hex(8),
            on_message=self.take_bus_message,
            on_connected=self.bus_changed,
        )
        self.attach_bus(bus)
        bus.start()
        self._beating.set()
        threading.Thread(target=self._beat, name="class-heartbeat", daemon=True).start()

    def attach_bus(self, bus: ClassBus) -> None:
        """Talk to the class's other processes through ``bus``, which hands their messages
        to :meth:`take_bus_message` and its connection's changes to :meth:`bus_changed`
        (until it reports, it counts as unreachable)."""
        with self._lock:
            self._bus = bus
            self.bus_connected = False

    @_locked
    def heartbeat(self) -> None:
        """Publish this process's status, and tell the pages if another process went silent
        since (every :data:`HEARTBEAT_S` seconds, from the heartbeat thread)."""
        if self._bus is None:
            return
        self._publish_status()
        now = time.monotonic()
        silent = [o for o, (_s, seen) in self._others.items() if now - seen >= SILENT_AFTER_S]
        for origin in silent:
            del self._others[origin]
        if silent:
            self._tell(presenters_only=False)

    def _beat(self) -> None:
        while True:
            time.sleep(STATUS_EVERY_S)
            with self._lock:
                due = time.monotonic() - self._status_sent_at >= HEARTBEAT_S
                if due:
                    self.heartbeat()
                elif self._status_dirty:
                    self._publish_status()

    @_locked
    def take_bus_message(self, payload: dict[str, Any]) -> None:
        """Take in another process's message (verified; from the bus's listening thread): a
        scene for this process's students, its status, or a reset of the answers."""
        kind = payload.get("kind")
        if kind == "scene" and isinstance(payload.get("scene"), dict):
            self._take_scene(payload["scene"], payload.get("at"))
        elif kind == "status":
            status = checked_status(payload)
            origin = payload.get("origin")
            if status is not None and isinstance(origin, str):
                previous = self._others.get(origin)
                self._others[origin] = (status, time.monotonic())
                self._unreachable.pop(origin, None)
                if status.get("scene") is not None:
                    # A scene this process missed (sent while the bus was down).
                    self._take_scene(status["scene"], status["scene_at"])
                # A heartbeat that repeats what the pages show changes nothing on them; one
                # that says a process took the newest scene concerns the presenters.
                if previous is None or _shown(previous[0]) != _shown(status):
                    self._tell(presenters_only=False)
                elif previous[0].get("scene_at") != status.get("scene_at"):
                    self._tell(presenters_only=True)
        elif kind == "reset":
            self._forget_answers()
            self._changed(presenters_only=False)

    @_locked
    def bus_changed(self, connected: bool) -> None:
        """The bus became reachable (``connected``) or unreachable: say so on the pages;
        while it is down, each process is a class of its own."""
        self.bus_connected = connected
        if connected:
            # The processes last seen count until they are heard again, or go silent.
            now = time.monotonic()
            for origin, status in self._unreachable.items():
                self._others.setdefault(origin, (status, now))
            self._unreachable.clear()
            self._publish_status()
        else:
            self._unreachable.update({o: s for o, (s, _) in self._others.items()})
            self._others.clear()
        self._tell(presenters_only=False)

    def _publish_status(self) -> None:
        self._status_dirty = False
        self._status_sent_at = time.monotonic()
        if self._bus is not None:
            self._bus.publish(
                {
                    "kind": "status",
                    "presenters": len(self._presenters),
                    "students": len(self._students),
                    "live": self._live,
                    "revealed": self._revealed,
                    "voters": self._status_voters(),
                    "scene": dict(self.scene) if self.scene is not None else None,
                    "scene_at": self.scene_at,
                }
            )

    def _status_voters(self) -> dict[str, dict[str, list[object]]]:
        """This process's voters as its status carries them (JSON), at most
        :data:`MAX_VOTERS`: the others refuse a larger status whole, so past it (more pages
        than a process serves) the voters without answers are left out first."""
        voters = sorted(self._local_box().items(), key=lambda item: not item[1])
        return {
            voter: {question: [choice, round(at, 3)] for question, (choice, at) in kept.items()}
            for voter, kept in voters[:MAX_VOTERS]
        }

    # Telling the pages ------------------------------------------------------------------

    def _take_scene(self, scene: object, at: object) -> None:
        """A scene from the bus (untrusted): delivered if newer than this process's."""
        if not isinstance(scene, dict) or not _finite(at) or at <= self.scene_at:
            return
        self._deliver(checked_scene(scene, self.spec), float(at))

    def _deliver(self, scene: Scene, at: float) -> None:
        self.scene = dict(scene)
        self.scene_at = at
        for student in list(self._students):
            student.take_scene(self.scene)

    def _changed(self, *, presenters_only: bool) -> None:
        """This process's part of the class changed: tell its pages, and the others soon."""
        self._tell(presenters_only=presenters_only)
        if self._bus is not None:
            # The heartbeat thread sends it soon, with whatever else changes meanwhile;
            # without one (a bus attached by hand) it goes now.
            self._status_dirty = True
            if not self._beating.is_set():
                self._publish_status()

    def _tell(self, *, presenters_only: bool) -> None:
        members = self._presenters if presenters_only else self._presenters + self._students
        for member in list(members):
            member.class_changed()


@dataclass
class _Away:
    """What a member whose page lost its connection takes back if it returns: a student's
    voter, the voter's answers and those waiting for a ballot; or, for the class's last
    presenter, whether the class followed live and saw the answers."""

    voter: str | None = None
    answers: dict[str, Answer] = field(default_factory=dict)
    waiting: dict[str, Answer] = field(default_factory=dict)
    live: bool = False
    revealed: bool = False


def _finite(value: object) -> bool:
    """Whether ``value`` (from the bus) is a finite number, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(status: Mapping[str, Any]) -> dict[str, Any]:
    """What of a status the pages show (not the newest scene it carries)."""
    return {name: value for name, value in status.items() if name not in ("scene", "scene_at")}


MAX_SCENE_NAMES = 64
"""The most names a scene on the bus may carry (the spec's controls and the preset)."""


def checked_status(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """A status from the bus with every field of the right kind and size, or None: counts
    are whole numbers up to 10⁶, switches booleans, the voters at most :data:`MAX_VOTERS`
    ids, each with at most 16 answers: a question and a choice of up to 32 characters, and a
    finite time; the newest scene, if any, a mapping of at most :data:`MAX_SCENE_NAMES`
    names (checked as a scene when taken) and when it was sent."""

    def count(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**6

    def answer(value: object) -> bool:
        return (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and len(value[0]) <= 32
            and _finite(value[1])
        )

    voters = payload.get("voters")
    if not (
        count(payload.get("presenters"))
        and count(payload.get("students"))
        and isinstance(payload.get("live"), bool)
        and isinstance(payload.get("revealed"), bool)
        and isinstance(voters, dict)
        and len(voters) <= MAX_VOTERS
        and all(
            isinstance(voter, str)
            and VOTER.fullmatch(voter) is not None
            and isinstance(answers, dict)
            and len(answers) <= 16
            and all(
                isinstance(question, str) and len(question) <= 32 and answer(a)
                for question, a in answers.items()
            )
            for voter, answers in voters.items()
        )
    ):
        return None
    scene, scene_at = payload.get("scene"), payload.get("scene_at", 0.0)
    if not _finite(scene_at) or not (
        scene is None or (isinstance(scene, dict) and len(scene) <= MAX_SCENE_NAMES)
    ):
        return None
    return {name: payload[name] for name in ("presenters", "students", "live", "revealed")} | {
        "voters": voters,
        "scene": scene,
        "scene_at": float(scene_at),
    }


def checked_scene(scene: Mapping[str, object], spec: SimulationSpec = SPEC) -> dict[str, object]:
    """A scene that crossed the bus as JSON, each of ``spec``'s controls through the
    state's own checks (as a page's would: clamped, or left out when it is of the wrong
    kind), any other name left out, and the preset kept only if it names one; checked once
    for all of this process's students."""
    checker = _scene_checker(spec)
    values: dict[str, object] = {}
    for name, value in scene.items():
        if name in spec.by_name:
            checked = checker.coerce(name, value)
            if checked is not None:
                values[name] = checked
    preset = scene.get("preset")
    if preset == "" or (isinstance(preset, str) and preset in PRESETS):
        values["preset"] = preset
    return values


@functools.cache
def _scene_checker(spec: SimulationSpec) -> SimulationState:
    # Only its parameters' rules are read (SimulationState.coerce), never its values.
    return SimulationState.for_spec(spec)()


@functools.cache
def process_classroom(spec: SimulationSpec = SPEC) -> Classroom:
    """This process's classroom for the pages of ``spec``, keyed by
    :data:`PRESENTER_KEY_ENV` (no key: disabled) and, with
    :data:`app.served.class_bus.BUS_ENV`, on the class bus."""
    from app.served.class_bus import BUS_ENV

    classroom = Classroom(os.environ.get(PRESENTER_KEY_ENV, ""), spec)
    bus = os.environ.get(BUS_ENV, "")
    if classroom.enabled and bus:
        classroom.connect(bus)
    return classroom
