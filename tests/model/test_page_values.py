"""Values a page sends for any widget property, taken as Panel takes them from a session.

Each change is made as Bokeh applies a client's PATCH-DOC (``set_from_json`` on the widget's
model, then Panel's change handler), for every bound control and every kind of bad value:
out-of-range slider indices (-1 must not become the last option), exact d_k = 0, wrong
types, NaN, huge numbers, strings. Every change must be taken as it is (valid), clamped
(a number out of range), or refused (the page is sent the control's value back), with no
exception and no NaN on screen. Properties a page never changes (options, bounds, labels)
are not followed at all. Also here: the Panel and Bokeh internals app/compat.py relies on
for this, which fail loudly when they change, and the Location built from any request.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator
from types import SimpleNamespace

import param
import pytest
from bokeh.document import Document
from bokeh.model import Model
from hostile_messages import hostile_messages, hostile_name_lists, hostile_share_requests
from hypothesis import given, settings
from hypothesis import strategies as st
from panel.io.state import set_curdoc

from app import compat
from app.page.controls import widget_names
from app.page.views.alert_box import AlertBox
from app.page.views.readouts import readouts_html
from app.served.components.class_bar import ClassBar
from app.served.components.controls import DrawnControls
from app.served.components.first_screen import FirstScreen
from app.served.components.lesson import LAZY_SECTIONS
from app.served.location import SafeLocation, location_params
from app.served.session import Session
from app.simulation.presets import preset_options
from app.simulation.spec import (
    D_K_GRID,
    N_GRID,
    PRECISION_CHOICES,
    RHO_GRID,
    SIGMA_GRID,
    TEMPERATURE_GRID,
)
from app.simulation.state import SimulationState

PAGE = object()
"""The ``setter`` of the changes made here as the page: Bokeh's session sets the websocket
connection there; nothing here listens for it."""

NOT_NUMBERS: list[object] = [None, "3", "", "<script>", "nan", [1], {"a": 1}, True, False]
SPECIAL: list[object] = [math.nan, math.inf, -math.inf, 1e308, -0.0, 0.5, 2.5]


def huge_ints(size: int) -> list[int]:
    """Indices and numbers at and beyond a control's edges, up to far past 64 bits."""
    return [-(2**70), -(2**63), -2, -1, 0, 1, size - 1, size, size + 1, 2**31, 2**63, 10**30]


class Page:
    """A Session in a Bokeh document, its lesson built, driven as its page would."""

    def __init__(self) -> None:
        self.pending: list = []
        self.app = Session(defer=self.pending.append)
        self.document = Document()
        self.document.add_root(self.app.page.get_root(self.document))
        self.app.add_lesson()

    def settle(self) -> None:
        while self.pending:
            self.pending.pop(0)()

    def move(self, message: object) -> None:
        """Send the drawn controls ``message`` as the page's ``model.send_msg`` does; run
        the updates that follow."""
        with set_curdoc(self.document):
            self.app.layout.drawn_controls.take_message(message)
            self.settle()

    def drawn(self, name: str) -> dict:
        """What the drawn controls show for control ``name`` (their ``values``)."""
        return self.app.layout.drawn_controls.values[name]


def assert_nothing_shows_nan(page: Page) -> None:
    state = page.app.state
    assert all(math.isfinite(getattr(state, name)) for name in ("d_k", "temperature", "n"))
    text = readouts_html(page.app.model).lower()
    assert "nan" not in text and "inf" not in text
    # Each of these changes the numbers drawn: the newest frame the page was sent has them.
    frame = page.app.figures.frame
    for name in ("d_k", "temperature", "n"):
        assert frame["state"][name] == getattr(state, name), name
    weights = page.app.model.weights.weights_image
    assert weights.shape == (state.n, state.n)


SLIDERS = {
    "d_k (key dimension)": ("d_k", D_K_GRID),
    "temperature": ("temperature", TEMPERATURE_GRID),
    "sequence length n": ("n", N_GRID),
}


@pytest.mark.parametrize("label", list(SLIDERS))
def test_a_slider_takes_only_an_index_of_one_of_its_positions(label: str) -> None:
    name, grid = SLIDERS[label]
    page = Page()
    before = getattr(page.app.state, name)
    position = grid.index(before)
    for value in [*huge_ints(len(grid)), *SPECIAL, *NOT_NUMBERS]:
        valid = type(value) is int and 0 <= value < len(grid)
        if valid:
            continue
        page.move({"name": name, "index": value})
        assert getattr(page.app.state, name) == before, f"{value!r} changed {name}"
        # Refused: the page is sent where the state is, to put the slider back.
        assert page.drawn(name)["index"] == position, value
    assert_nothing_shows_nan(page)
    # Every real position still moves the control.
    for index in (0, len(grid) - 1, position):
        page.move({"name": name, "index": index})
        assert getattr(page.app.state, name) == grid[index]
        assert page.drawn(name)["index"] == index


@pytest.mark.parametrize(
    ("widget", "name", "bounds"),
    [
        ("d_k_exact", "d_k", (1, 1024)),
        ("seed", "seed", (0, 2**32 - 1)),
    ],
)
def test_a_whole_number_box_clamps_and_puts_itself_back(
    widget: str, name: str, bounds: tuple[int, int]
) -> None:
    """A box sends ``{"name", "value"}``: a whole number is clamped into its bounds and the
    page shown the value kept; anything else changes nothing and puts the box back."""
    page = Page()
    low, high = bounds
    for value in huge_ints(high):
        page.move({"name": widget, "value": value})
        expected = min(max(value, low), high)
        assert getattr(page.app.state, name) == expected, value
        assert page.drawn(widget) == {"value": expected}, value
    before = getattr(page.app.state, name)
    for value in [None, *SPECIAL, *NOT_NUMBERS[1:], 64.0]:
        page.move({"name": widget, "value": value})
        assert getattr(page.app.state, name) == before, value
        assert page.drawn(widget) == {"value": before}, value
    assert_nothing_shows_nan(page)


def test_the_row_box_message_takes_only_a_number_and_picks_a_query_of_the_matrix() -> None:
    """The row comparison is drawn in the browser; its box sends ``{"row_input": value}``.
    A number picks the nearest query of the n×n matrix; anything else changes nothing."""
    page = Page()
    why = page.app.lesson.drawn
    n = page.app.state.n
    with set_curdoc(page.document):
        for value in huge_ints(2 * n):
            why.take_message({"row_input": value})
            page.settle()
            assert page.app.state.row == min(max(value, 0), n - 1), value
            assert why.frame["state"]["row"] == page.app.state.row
        why.take_message({"row_input": 7.6})
        page.settle()
        assert page.app.state.row == 8
        for value in [math.nan, math.inf, -math.inf, *NOT_NUMBERS, [3], {"row": 3}]:
            for message in ({"row_input": value}, value, {"row": value}):
                why.take_message(message)
                page.settle()
                assert page.app.state.row == 8, value
    assert_nothing_shows_nan(page)


@pytest.mark.parametrize("name", ["scaled", "causal"])
def test_a_switch_takes_only_booleans(name: str) -> None:
    page = Page()
    before = getattr(page.app.state, name)
    for value in [*huge_ints(2), *SPECIAL, *NOT_NUMBERS[:-2]]:
        page.move({"name": name, "value": value})
        assert page.drawn(name) == {"value": before}, value
    assert getattr(page.app.state, name) == before
    page.move({"name": name, "value": not before})
    assert getattr(page.app.state, name) == (not before)


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("view", ("raw", "scaled", "weights")),
        ("preset", (*preset_options().values(), "")),
    ],
)
def test_a_choice_takes_only_one_of_its_options(name: str, valid: tuple[str, ...]) -> None:
    """The heatmap view's buttons and the preset select send a choice's value: only one of
    theirs is taken (a preset's label, another case, a near miss are not)."""
    page = Page()
    before = getattr(page.app.state, name)
    labels = list(preset_options())
    for value in [*huge_ints(3), *SPECIAL, *NOT_NUMBERS, "RAW", "collapse ", *labels, "x" * 10**5]:
        if value in valid and isinstance(value, str):
            continue
        page.move({"name": name, "value": value})
        assert getattr(page.app.state, name) == before, value
        assert page.drawn(name) == {"value": before}, value
    for value in valid:
        page.move({"name": name, "value": value})
        assert getattr(page.app.state, name) == value
        assert page.drawn(name) == {"value": value}


def test_resample_takes_only_a_press() -> None:
    """The Resample button sends ``{"name": "resample", "value": true}``: only that draws
    the next seed."""
    page = Page()
    seed = page.app.state.seed
    for value in [*huge_ints(2), *SPECIAL, *NOT_NUMBERS, "true"]:
        if value is True:
            continue
        page.move({"name": "resample", "value": value})
        assert page.app.state.seed == seed, value
    page.move({"name": "resample", "value": True})
    assert page.app.state.seed == seed + 1


@pytest.mark.parametrize(
    ("family", "message"),
    list(hostile_messages(widget_names(), ("value", "index"))),
    ids=lambda case: case if isinstance(case, str) and len(case) < 30 else None,
)
def test_the_drawn_controls_take_no_hostile_message(family: str, message: object) -> None:
    """Every family of bad message to any of the page's widgets changes nothing and shows
    nothing that is not the state's."""
    page = Page()
    state = page.app.state
    before = state.param.values()
    page.move(message)
    name, value = (
        (message.get("name"), message.get("value")) if isinstance(message, dict) else ("", 0)
    )
    # A whole number out of a box's bounds is clamped, a boolean is a switch's value and a
    # press is a press: those move.
    taken = (
        (name in ("d_k_exact", "seed") and type(value) is int)
        or (name in ("scaled", "causal") and isinstance(value, bool))
        or (name == "resample" and value is True)
    )
    if not taken:
        assert state.param.values() == before, family
    drawn = page.app.layout.drawn_controls
    assert drawn.values == drawn.binding.values
    assert_nothing_shows_nan(page)


@pytest.mark.parametrize(
    ("family", "message"), list(hostile_share_requests()), ids=lambda case: str(case)[:30]
)
def test_a_share_request_takes_only_link_or_embed(family: str, message: object) -> None:
    page = Page()
    sent: list = []
    drawn = page.app.layout.drawn_controls
    drawn._send_msg = sent.append  # type: ignore[method-assign]
    before = page.app.state.param.values()
    page.move(message)
    assert sent == [] and page.app.state.param.values() == before, family


def test_a_share_request_answers_with_the_scene_to_copy() -> None:
    page = Page()
    sent: list = []
    drawn = page.app.layout.drawn_controls
    drawn._send_msg = sent.append  # type: ignore[method-assign]
    page.move({"name": "d_k", "index": 0})
    page.move({"share": "link"})
    page.move({"share": "embed"})
    link, embed = (message["shared"] for message in sent if "shared" in message)
    assert link.startswith("http://localhost:5006/?") and "d_k=1" in link
    assert embed.startswith("<iframe ") and "embed=true" in embed and "d_k=1" in embed


@pytest.mark.parametrize(
    ("attr", "value"),
    [
        ("values", {"d_k": {"index": 0, "text": "<script>alert(1)</script>"}}),
        ("values", {"d_k": {"index": 10**9}}),
        ("controls", [{"name": "d_k", "label": "<img src=x>", "widget": "slider"}]),
        ("controls", []),
        ("more", [{"name": "seed", "label": "<img src=x>", "widget": "number"}]),
        ("texts", {"more": "<img src=x onerror=alert(1)>"}),
        ("open_more_from", -1),
        ("shares", False),
        ("channel_key", "x"),
    ],
)
def test_the_drawn_controls_follow_no_property_from_the_page(attr: str, value: object) -> None:
    page = Page()
    drawn = page.app.layout.drawn_controls
    names = [name for name in drawn.param if name != "name"]
    before = ({name: getattr(drawn, name) for name in names}, page.app.state.param.values())
    (model,) = [
        m
        for m in page.document.models
        if getattr(m, "data", None) is not None
        and hasattr(m.data, "controls")
        and hasattr(m.data, "values")
    ]
    with set_curdoc(page.document):
        # Bokeh may refuse the value's type itself: either way the app takes nothing.
        with contextlib.suppress(ValueError):
            model.data.set_from_json(attr, value, setter=PAGE)
        page.settle()
    after = ({name: getattr(drawn, name) for name in names}, page.app.state.param.values())
    assert after == before


FIRST_SCREEN_FLAGS = ("dark", "lesson_opened")
"""The first screen's properties a page changes (app/served/components/first_screen.py):
booleans."""

FIRST_SCREEN_FIXED: list[tuple[str, object]] = [
    ("texts", {"gate": "<img src=x onerror=alert(1)>"}),
    ("texts", {}),
    ("sizes", {"gate_margin": 10**9}),
    ("embed", True),
    ("gate_shown", False),
]
"""Properties of the first screen a page never changes, and what a client may send."""


def first_screen_model(page: Page) -> Model:
    """The data model of ``page``'s first screen, found as a client finds it: by its flags."""
    (model,) = [
        m
        for m in page.document.models
        if getattr(m, "data", None) is not None
        and all(hasattr(m.data, flag) for flag in FIRST_SCREEN_FLAGS)
    ]
    return model.data


@pytest.mark.parametrize(
    ("attr", "value"),
    [
        (flag, value)
        for flag in FIRST_SCREEN_FLAGS
        for value in NOT_NUMBERS
        if value not in (True, False)
    ]
    + FIRST_SCREEN_FIXED,
)
def test_the_first_screen_takes_only_its_flags_and_only_booleans(attr: str, value: object) -> None:
    page = Page()
    screen = page.app.layout.first_screen
    # Everything but its name and the children the session sets (compared as models).
    before = {
        name: getattr(screen, name)
        for name in screen.param
        if name not in ("name", "controls", "scene", "figures", "notice", "lesson")
    }
    data = first_screen_model(page)
    with set_curdoc(page.document):
        # Bokeh may refuse the value's type itself: either way the app takes nothing.
        with contextlib.suppress(ValueError):
            data.set_from_json(attr, value, setter=PAGE)
        page.settle()
    after = {name: getattr(screen, name) for name in before}
    assert after == before
    page.app.state.d_k = 128
    page.settle()
    assert_nothing_shows_nan(page)


def test_the_first_screen_follows_its_flags_from_the_page() -> None:
    page = Page()
    screen = page.app.layout.first_screen
    data = first_screen_model(page)
    with set_curdoc(page.document):
        for flag in FIRST_SCREEN_FLAGS:
            data.set_from_json(flag, not getattr(screen, flag), setter=PAGE)
        page.settle()
    assert screen.dark and screen.lesson_opened


def lesson_model(page: Page) -> Model:
    """The data model of ``page``'s lesson, found as a client finds it: by its ``opened``."""
    (model,) = [
        m
        for m in page.document.models
        if getattr(m, "data", None) is not None and hasattr(m.data, "opened")
    ]
    return model.data


@pytest.mark.parametrize(
    ("family", "value"),
    list(hostile_name_lists(tuple(LAZY_SECTIONS))),
    ids=lambda case: case if isinstance(case, str) and len(case) < 30 else None,
)
def test_the_lessons_open_sections_take_only_its_section_names(family: str, value: object) -> None:
    """A page opens a lesson section by sending the list of open sections' names: anything
    but distinct names of the lesson's sections opens and builds nothing."""
    page = Page()
    lesson = page.app.lesson
    data = lesson_model(page)
    with set_curdoc(page.document):
        # Bokeh may refuse the value's type itself: either way the app takes nothing.
        with contextlib.suppress(ValueError):
            data.set_from_json("opened", value, setter=PAGE)
        page.settle()
    assert lesson.drawn.opened == [], family
    assert all(section.view is None for section in lesson.lazy_sections)
    assert len(lesson.views) == 1


def test_the_lesson_builds_the_sections_a_page_opens() -> None:
    page = Page()
    lesson = page.app.lesson
    with set_curdoc(page.document):
        lesson_model(page).set_from_json("opened", ["assumptions", "training"], setter=PAGE)
        page.settle()
    assert lesson.drawn.opened == ["assumptions", "training"]
    assert lesson.training.view is not None and lesson.assumptions.view is not None
    # Both are drawn on the page: their sessions send them their state.
    assert lesson.drawn.training_view["status"]
    assert set(lesson.assumptions.view.binding.values) >= {"sigma_q", "precision"}
    page.app.state.d_k = 128
    page.settle()
    assert_nothing_shows_nan(page)


@pytest.mark.parametrize("y", [None, "abc", math.nan, math.inf, -1, 1e300, True, [3], 31.9])
def test_a_click_anywhere_picks_a_row_or_nothing(y: object) -> None:
    """The heatmap's click reaches the server as the message ``{"row": y}`` the page sends
    (``model.send_msg``), which Panel hands to the component's ``_handle_msg``."""
    page = Page()
    with set_curdoc(page.document):
        page.app.figures.take_message({"row": y})
        page.settle()
    assert page.app.state.row == (31 if y == 31.9 else 0)
    assert page.app.figures.frame["state"]["row"] == page.app.state.row


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(SimulationState.param)),
    st.one_of(
        st.integers(),
        st.floats(),
        st.text(max_size=20),
        st.none(),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
    ),
)
def test_coerce_gives_a_valid_value_or_none(name: str, value: object) -> None:
    state = SimulationState()
    if name in ("name", "notice"):
        return
    coerced = state.coerce(name, value)
    if coerced is not None:
        setattr(state, name, coerced)  # param's own validation: bounds, type, objects
        parameter = state.param[name]
        if isinstance(parameter, param.Number):
            assert math.isfinite(coerced) and not isinstance(coerced, bool)


def test_coerce_clamps_and_refuses() -> None:
    state = SimulationState()
    assert state.coerce("d_k", 0) == 1 and state.coerce("d_k", 10**400) == 1024
    assert state.coerce("d_k", 3.0) == 3 and state.coerce("d_k", 3.5) is None
    assert (
        state.coerce("temperature", 100) == 20.0 and state.coerce("temperature", math.nan) is None
    )
    assert state.coerce("scaled", 1) is None and state.coerce("d_k", True) is None
    assert state.coerce("view", "heat") is None and state.coerce("preset", "lesson") == "lesson"


# --- The Location, from any request and from any page ------------------------------------

HOSTS = [
    "127.0.0.1:5006", "[::1]:5006", "[::1]", "[::1", "::1", "a:b:c", "evil.example.:80",
    "user@host:80", "host:abc", "host:", ":80", "", "[fe80::1%25eth0]:5006", "h:6:7",
]  # fmt: skip
URIS = [
    "/main", "/main??d_k=5", "/main?d_k=8&ref=https://course.example/page?id=3", "/main?d_k=8?",
    "/main?#", "/main#a?b", "main", "", "http://other.example/x?y=1#z", "HTTPS://h",
    "//evil.example/main?x", "/main?%ZZ=%", "/main?" + "x" * 100_000,
]  # fmt: skip


def location_for(host: str, uri: str) -> SafeLocation:
    """The Location a session's request for ``uri`` with this Host header gets."""
    with set_curdoc(Document()):  # a session's document, as in a server
        return SafeLocation.from_request(SimpleNamespace(protocol="http", host=host, uri=uri))


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("uri", URIS)
def test_a_location_is_built_from_any_request(host: str, uri: str) -> None:
    location = location_for(host, uri)
    assert location.search == "" or location.search.startswith("?")
    assert location.pathname == "" or location.pathname.startswith("/")
    assert location.hash == "" or location.hash.startswith("#")
    assert location.port == "" or location.port.isdigit()
    assert isinstance(location.query_params, dict)
    if "?" in uri and "#" not in uri.partition("?")[0]:
        assert location.search == "?" + uri.partition("?")[2].partition("#")[0] or (
            location.search == "" and uri.partition("?")[2] in ("", "#")
        )


def test_a_location_reads_ipv6_hosts_and_question_marks_as_a_browser_does() -> None:
    params = location_params("https", "[::1]:5006", "/main??d_k=5#top")
    assert params == {
        "protocol": "https:",
        "hostname": "[::1]",
        "port": "5006",
        "pathname": "/main",
        "search": "??d_k=5",
        "hash": "#top",
        "href": "https://[::1]:5006/main??d_k=5#top",
    }
    with set_curdoc(Document()):
        assert SafeLocation.from_request(None).search == ""
    # Panel's parser int()s an all-digit value: over 4300 digits it raised.
    assert location_for("h", "/?x=" + "9" * 5000).query_params == {"x": "9" * 5000}


@pytest.mark.parametrize(
    ("attr", "value", "taken"),
    [
        ("search", "?a=1", True),
        ("search", "a=1", False),
        ("search", 5, False),
        ("pathname", "srcdoc", True),
        ("pathname", "x", False),
        ("hash", "#x", True),
        ("hash", "x", False),
        ("reload", True, False),
        ("hostname", "[::1]", True),
    ],
)
def test_a_location_takes_from_the_page_only_its_address_in_the_right_form(
    attr: str, value: object, taken: bool
) -> None:
    location = location_for("h:1", "/m?q=1")
    document = Document()
    model = location.get_root(document)
    before = getattr(location, attr)
    with set_curdoc(document):
        try:
            model.set_from_json(attr, value, setter=PAGE)
        except ValueError:  # Bokeh refused the type: the app never sees it
            assert not taken
    assert getattr(location, attr) == (value if taken else before)


# --- app/compat.py: the internals used, and the log filter --------------------------------


CHECKED_COMPONENTS = {
    FirstScreen: lambda: FirstScreen(title="t"),
    DrawnControls: lambda: DrawnControls(SimulationState(), ["d_k"]),
    AlertBox: AlertBox,
    SafeLocation: SafeLocation,
    ClassBar: ClassBar,
}
"""Each class that checks a page's changes (app.compat.CheckedPageChanges), and how to
build one."""


@pytest.mark.parametrize("cls", list(CHECKED_COMPONENTS), ids=lambda cls: cls.__name__)
def test_panel_still_maps_page_values_through_the_hooks_the_guard_overrides(cls: type) -> None:
    assert compat.panel_version_checked(), "re-read panel/reactive.py, then update CHECKED_PANEL"
    assert compat.page_change_hooks_present(cls), (
        "Panel's Syncable no longer follows _linked_properties or maps page values in "
        "_process_property_change: re-read panel/reactive.py and update CheckedPageChanges"
    )
    component = CHECKED_COMPONENTS[cls]()
    assert set(component._linked_properties) <= set(cls.page_properties)


def test_bokeh_still_logs_a_refused_message_as_the_filter_expects() -> None:
    assert compat.refused_message_logging_checked(), (
        "bokeh/server/protocol_handler.py changed how it logs a message it could not "
        "handle: update compat.RefusedPatchFilter"
    )


def _record(msgtype: str, error: Exception) -> logging.LogRecord:
    message = SimpleNamespace(msgtype=msgtype)
    try:
        raise error
    except Exception:
        import sys

        exc_info = sys.exc_info()
    return logging.LogRecord(
        compat.REFUSED_MESSAGE_LOGGER,
        logging.ERROR,
        __file__,
        1,
        "error handling message\n message: %r \n error: %r",
        (message, error),
        exc_info,
    )


def test_a_refused_patch_is_one_warning_line_and_other_errors_keep_their_traceback() -> None:
    refused = _record("PATCH-DOC", ValueError("failed to validate Toggle.value: " + "x" * 500))
    assert compat.RefusedPatchFilter().filter(refused)
    assert refused.levelno == logging.WARNING and refused.exc_info is None
    assert len(refused.getMessage()) < 200 and "\n" not in refused.getMessage()
    other = _record("PULL-DOC-REQ", RuntimeError("a bug"))
    assert compat.RefusedPatchFilter().filter(other)
    assert other.levelno == logging.ERROR and other.exc_info is not None


def test_installing_the_filter_is_idempotent() -> None:
    logger = logging.getLogger(compat.REFUSED_MESSAGE_LOGGER)
    compat.quiet_refused_patches()
    compat.quiet_refused_patches()
    assert sum(isinstance(f, compat.RefusedPatchFilter) for f in logger.filters) == 1


@pytest.fixture(autouse=True)
def _no_widget_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No test here may leave an error in the log (Panel logs before it raises)."""
    with caplog.at_level(logging.WARNING):
        yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage()[:200] for r in errors]


ASSUMPTION_SLIDERS = {
    "sigma_q": SIGMA_GRID,
    "sigma_k": SIGMA_GRID,
    "rho": RHO_GRID,
}


def lesson_move(page: Page, message: object) -> None:
    """Send the lesson's assumptions section ``message`` (a control's move) as the page's
    ``model.send_msg`` does."""
    with set_curdoc(page.document):
        page.app.lesson.drawn.take_message({"assumptions": {"control": message}})
        page.settle()


def lesson_drawn(page: Page, name: str) -> dict:
    """What the session has the page draw for the section's control ``name``."""
    return page.app.lesson.assumptions.view.binding.values[name]


@pytest.mark.parametrize("name", list(ASSUMPTION_SLIDERS))
def test_the_lessons_sliders_take_only_an_index_of_one_of_their_positions(name: str) -> None:
    """The assumptions section's controls are drawn in the lesson: a hostile index changes
    nothing and puts the slider back; every real position moves the state."""
    grid = ASSUMPTION_SLIDERS[name]
    page = Page()
    page.app.lesson.open(page.app.lesson.assumptions)
    before = getattr(page.app.state, name)
    position = grid.index(before)
    for value in [*huge_ints(len(grid)), *SPECIAL, *NOT_NUMBERS]:
        if type(value) is int and 0 <= value < len(grid):
            continue
        lesson_move(page, {"name": name, "index": value})
        assert getattr(page.app.state, name) == before, f"{value!r} changed {name}"
        # Refused: the page is sent where the state is, to put the slider back.
        assert lesson_drawn(page, name)["index"] == position, value
    for message in [None, [], "sigma_q", {"name": name}, {"index": 0}, {"name": 3, "index": 0}]:
        lesson_move(page, message)
        assert getattr(page.app.state, name) == before, message
    assert_nothing_shows_nan(page)
    for index in (0, len(grid) - 1, position):
        lesson_move(page, {"name": name, "index": index})
        assert getattr(page.app.state, name) == grid[index]
        assert lesson_drawn(page, name)["index"] == index


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("precision", tuple(PRECISION_CHOICES)),
        ("qk_norm", (True, False)),
        ("subtract_max", (True, False)),
    ],
)
def test_the_lessons_choices_take_only_their_values(name: str, valid: tuple) -> None:
    page = Page()
    page.app.lesson.open(page.app.lesson.assumptions)
    before = getattr(page.app.state, name)
    hostile = [*huge_ints(2), *SPECIAL, *NOT_NUMBERS, "FLOAT16", "float8", "float16 ", [True]]
    for value in hostile:
        if any(value is one or (type(value) is type(one) and value == one) for one in valid):
            continue
        lesson_move(page, {"name": name, "value": value})
        assert getattr(page.app.state, name) == before, f"{value!r} changed {name}"
    for value in valid:
        lesson_move(page, {"name": name, "value": value})
        assert getattr(page.app.state, name) == value
        assert lesson_drawn(page, name) == {"value": value}


def test_the_lessons_sections_take_no_message_before_they_are_opened() -> None:
    page = Page()
    lesson = page.app.lesson
    lesson_move(page, {"name": "sigma_q", "index": 0})
    with set_curdoc(page.document):
        lesson.drawn.take_message({"training": "train"})
        lesson.drawn.take_message({"assumptions": {"download": "matrix"}})
        page.settle()
    assert page.app.state.sigma_q == 1
    assert lesson.assumptions.view is None and lesson.training.view is None
