"""The served first screen's figures (app/served/components/figures.py): the frames a session sends
them, the figures' items built once per process, and the click messages a page sends back.

What the browser draws from these (figures.js, text.js) is tested in tests/browser and
tests/export; here is what the server sends and what it takes from a page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import numpy as np
import pytest
from bokeh.document import Document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdpa_core
from app.page.frames import FRAME_FIELDS, HISTOGRAM_FIELDS, REPORT_FIELDS, unpacked_frame
from app.served.components.figures import DRAWN_PARTS, TAP_HOOK, DrawnFigures, figure_items
from app.served.session import Session
from app.simulation.spec import CONTROL_NAMES, HISTOGRAMS, OUTPUT, ROW, SCORES, VIEW, VIEWS, WEIGHTS

IMAGES = {SCORES: ("rawImage", "scaledImage"), WEIGHTS: ("weightsImage",)}
"""The n×n images of each part a frame carries (the overflow image is None or n×n too)."""

N = 12
"""The sessions' sequence length here: small, so rows at and past it are cheap to try."""

START_ROW = 5
"""The row each click test starts from: a refused click leaves it, a valid one moves it."""


def state_of(session: Session) -> dict[str, object]:
    """The session's controls, as a frame's ``state`` carries them."""
    return {name: getattr(session.state, name) for name in CONTROL_NAMES}


def assert_images(frame: dict) -> None:
    """Every image in ``frame`` is flat, contiguous float32 of n×n for the frame's n."""
    n = frame["state"]["n"]
    for part, fields in IMAGES.items():
        if part in frame["numbers"]:
            for field in fields:
                image = frame["numbers"][part][field]
                assert isinstance(image, np.ndarray), (part, field)
                assert image.dtype == np.float32 and image.shape == (n * n,), (part, field)
                assert image.flags.c_contiguous, (part, field)
    overflow = frame["numbers"].get(WEIGHTS, {}).get("overflowImage")
    if overflow is not None:
        assert overflow.dtype == np.float32 and overflow.shape == (n * n,)


def assert_numbers_are_the_models(frame: dict, session: Session) -> None:
    """The numbers of each part in ``frame`` are the session's model's, as they are now."""
    model = session.model
    numbers = frame["numbers"]
    if SCORES in numbers:
        np.testing.assert_array_equal(
            numbers[SCORES]["rawImage"], model.scores.raw_image.astype(np.float32).ravel()
        )
        assert numbers[SCORES]["scaledLimit"] == model.scores.scaled_limit
    if WEIGHTS in numbers:
        np.testing.assert_array_equal(
            numbers[WEIGHTS]["weightsImage"],
            model.weights.weights_image.astype(np.float32).ravel(),
        )
    if HISTOGRAMS in numbers:
        np.testing.assert_array_equal(
            numbers[HISTOGRAMS]["raw"]["density"], model.raw_histogram.density
        )
        np.testing.assert_array_equal(
            numbers[HISTOGRAMS]["scaled"]["left"], model.scaled_histogram.left
        )
    if ROW in numbers:
        assert numbers[ROW]["row"] == model.row.row


# --- Frames ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [{}, {"n": str(N), "view": "raw"}, {"n": "2", "causal": "true"}])
def test_the_first_frame_carries_every_drawn_part(query: dict[str, str]) -> None:
    session = Session(query)
    frame = session.figures.frame
    assert frame["sequence"] == session.figures.sequence == 1
    assert frame["parts"] == sorted(DRAWN_PARTS)
    assert frame["state"] == state_of(session)
    # Each part with numbers carries exactly its fields; the view is named only.
    assert set(frame["numbers"]) == set(DRAWN_PARTS) - {VIEW}
    for part, numbers in frame["numbers"].items():
        assert tuple(numbers) == FRAME_FIELDS[part], part
    for name in ("raw", "scaled"):
        assert tuple(frame["numbers"][HISTOGRAMS][name]) == HISTOGRAM_FIELDS
    assert tuple(frame["numbers"][WEIGHTS]["report"]) == REPORT_FIELDS
    assert_images(frame)
    assert_numbers_are_the_models(frame, session)


@pytest.mark.parametrize(
    ("move", "sent", "not_sent"),
    [
        ({"d_k": 256}, {SCORES, WEIGHTS, HISTOGRAMS, ROW}, {VIEW}),
        ({"seed": 4}, {SCORES, WEIGHTS, HISTOGRAMS, ROW}, {VIEW}),
        ({"n": 16}, {SCORES, WEIGHTS, ROW}, {HISTOGRAMS, VIEW}),
        ({"temperature": 0.5}, {WEIGHTS, ROW}, {SCORES, HISTOGRAMS, VIEW}),
        ({"precision": "float16"}, {WEIGHTS}, {SCORES, HISTOGRAMS, ROW, VIEW}),
        ({"view": "scaled"}, {VIEW}, {SCORES, WEIGHTS, HISTOGRAMS, ROW}),
        ({"row": 7}, {ROW}, {SCORES, WEIGHTS, HISTOGRAMS, VIEW}),
    ],
)
def test_a_move_sends_the_drawn_parts_it_changes_and_no_other(
    move: dict[str, object], sent: set[str], not_sent: set[str]
) -> None:
    session = Session()
    sequence = session.figures.sequence
    session.state.set_controls(**move)
    assert session.figures.sequence == sequence + 1, "one move, one frame"
    frame = session.figures.frame
    assert frame["sequence"] == session.figures.sequence
    assert set(frame["parts"]) == sent and not set(frame["numbers"]) & not_sent
    assert set(frame["numbers"]) == sent - {VIEW}
    assert OUTPUT not in frame["parts"], "the lesson's output is not the first screen's"
    assert frame["state"] == state_of(session)
    assert_images(frame)
    assert_numbers_are_the_models(frame, session)


def test_a_d_k_move_sends_scores_and_a_temperature_move_only_weights() -> None:
    session = Session()
    session.state.d_k = 512
    frame = session.figures.frame
    assert {SCORES, WEIGHTS, HISTOGRAMS} <= set(frame["parts"])
    session.state.temperature = 3.0
    frame = session.figures.frame
    assert WEIGHTS in frame["numbers"]
    assert SCORES not in frame["parts"] and SCORES not in frame["numbers"]
    assert HISTOGRAMS not in frame["parts"]


def test_parts_the_figures_do_not_draw_send_no_frame() -> None:
    session = Session()
    figures = session.figures
    frame, sequence = figures.frame, figures.sequence
    figures.update(session.model, {OUTPUT})
    figures.update(session.model, set())
    assert figures.frame is frame and figures.sequence == sequence


def test_every_rendered_page_receives_each_frame() -> None:
    session = Session()
    models = [session.figures.get_root(Document()) for _ in range(2)]  # two pages show it
    session.state.set_controls(d_k=32, temperature=0.5)
    sequence = session.figures.sequence
    assert [model.data.frame["sequence"] for model in models] == [sequence, sequence]
    assert all(unpacked_frame(model.data.frame)["state"]["d_k"] == 32 for model in models)
    # A page rendered later starts from the newest frame.
    assert session.figures.get_root(Document()).data.frame["sequence"] == sequence


MOVES = st.one_of(
    st.tuples(st.just("d_k"), st.integers(1, 1024)),
    st.tuples(st.just("temperature"), st.floats(0.05, 20.0)),
    st.tuples(st.just("n"), st.integers(2, 64)),
    st.tuples(st.sampled_from(["scaled", "causal", "qk_norm", "subtract_max"]), st.booleans()),
    st.tuples(st.just("view"), st.sampled_from(list(VIEWS))),
    st.tuples(st.just("seed"), st.integers(0, 2**32 - 1)),
    st.tuples(st.just("row"), st.integers(0, 1023)),
    st.tuples(st.sampled_from(["sigma_q", "sigma_k"]), st.floats(0.25, 4.0)),
    st.tuples(st.just("rho"), st.floats(-0.95, 0.95)),
    st.tuples(st.just("precision"), st.sampled_from(sdpa_core.PRECISIONS)),
)
"""One control's move, as the state takes it (coerced, as from a page)."""


@pytest.fixture(scope="module")
def moving_session() -> Iterator[Session]:
    """One session the hypothesis examples move on (built once: a session takes seconds)."""
    yield Session()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(MOVES, min_size=1, max_size=4))
def test_each_frame_carries_the_sessions_state(
    moving_session: Session, moves: list[tuple[str, object]]
) -> None:
    session = moving_session
    values = {}
    for name, value in moves:
        coerced = session.state.coerce(name, value)
        if coerced is not None:
            values[name] = coerced
    changed = {name for name, value in values.items() if getattr(session.state, name) != value}
    sequence = session.figures.sequence
    session.state.set_controls(**values)
    # Every control changes a drawn part: each update sends one frame, none without a change.
    assert session.figures.sequence == sequence + (1 if changed else 0)
    frame = session.figures.frame
    assert frame["state"] == state_of(session)
    assert_images(frame)
    assert_numbers_are_the_models(frame, session)


# --- The figures' items ---------------------------------------------------------------------


def ids_in(value: object) -> Iterator[str]:
    """The id of every model (any object with an ``id``) anywhere in a Bokeh document's JSON."""
    if isinstance(value, dict):
        if isinstance(value.get("id"), str):
            yield value["id"]
        for item in value.values():
            yield from ids_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from ids_in(item)


def objects_named(value: object, name: str) -> Iterator[dict]:
    """Every serialised Bokeh object of type ``name`` in a document's JSON."""
    if isinstance(value, dict):
        if value.get("type") == "object" and value.get("name") == name:
            yield value
        for item in value.values():
            yield from objects_named(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from objects_named(item, name)


def test_the_figures_items_are_built_once_per_process() -> None:
    items = figure_items()
    assert figure_items() is items
    # Every session's page draws from the same data, whatever its own state: the first
    # frame then draws the student's numbers into it.
    data = Session().figures.page_data()
    assert Session({"n": str(N), "d_k": "4"}).figures.page_data() is data
    assert DrawnFigures(Session().model).page_data() is data


def test_the_figures_items_are_the_two_documents_and_the_ids_figures_js_finds() -> None:
    figures = Session().figures.page_data()
    assert set(figures) == {"items", "models", "config"}
    assert set(figures["items"]) == {"heatmap", "histograms"}
    docs = {name: item["doc"] for name, item in figures["items"].items()}
    for name, doc in docs.items():
        # The page defined Panel's and the app's data models before it embeds these.
        assert "defs" not in doc, name
        assert doc["roots"], name
    present = set(ids_in(docs["heatmap"])) | set(ids_in(docs["histograms"]))
    ids = figures["models"]
    for name in ("source", "mapper", "heatmap", "heatmap_title", "row_outline"):
        assert name in ids, name
    for name in ("raw_histogram", "scaled_histogram", "raw_bars", "scaled_curve"):
        assert name in ids, name
    for name, found in ids.items():
        for one in found if isinstance(found, list) else [found]:
            assert one in present, (name, one)
    # The heatmap's click calls the page's hook, which sends the row as a message.
    assert f"globalThis.{TAP_HOOK}" in json.dumps(docs["heatmap"])
    # Nothing selects or mutes: each glyph copy would be one more model on every page.
    renderers = [*objects_named(docs["heatmap"], "GlyphRenderer")]
    renderers += objects_named(docs["histograms"], "GlyphRenderer")
    assert len(renderers) >= 6
    for renderer in renderers:
        attributes = renderer["attributes"]
        assert attributes["nonselection_glyph"] is None, renderer["id"]
        assert attributes["muted_glyph"] is None, renderer["id"]


def test_the_page_receives_the_figures_config() -> None:
    config = Session().figures.page_data()["config"]
    assert config["tap_hook"] == TAP_HOOK and config["row_part"] == ROW
    assert {config["parts"][name] for name in ("scores", "weights", "histograms", "view")} == (
        DRAWN_PARTS - {ROW}
    )


# --- Clicks from the page -------------------------------------------------------------------


def picked(message: object) -> int | None:
    """The row a click message must pick in a session of ``N`` rows, or None for none."""
    y = message.get("row") if isinstance(message, dict) else None
    if isinstance(y, bool) or not isinstance(y, int | float):
        return None
    if isinstance(y, float) and not math.isfinite(y):
        return None
    row = math.floor(y)
    return row if 0 <= row < N else None


def bad_rows() -> list[object]:
    """``row`` values no click may take: not numbers, not finite, or outside 0..N-1."""
    not_numbers = [None, "", "3", "3.5", "nan", "<script>alert(1)</script>", [3], [], {"row": 3}]
    not_numbers += [True, False, {}]
    not_finite = [math.nan, -math.nan, math.inf, -math.inf]
    outside = [-1, -0.5, -1e-300, -(2**31), -(2**63), N, N + 0.5, N + 1, 2 * N, 1023, 1024]
    outside += [2**31, 2**53 + 1, 2**63, 2**64, 10**30, 1e300, -1e300, 1.7976931348623157e308]
    return not_numbers + not_finite + outside


def bad_messages() -> list[object]:
    """Whole messages that carry no usable row: not a dict, no ``row``, or a bad one."""
    payloads = [None, "", "row", '{"row": 3}', 3, 3.0, True, [], [3], ["row", 3], {}]
    payloads += [{"y": 3}, {"ROW": 3}, {"row ": 3}, {" row": 3}, {"rows": [3]}, {3: 3}]
    payloads += [{"row": value} for value in bad_rows()]
    payloads += [{"row": value, "x": 1} for value in (None, math.nan, -1, N)]
    return payloads


GOOD = [
    (0, 0),
    (0.0, 0),
    (-0.0, 0),
    (3, 3),
    (3.999, 3),
    (N - 1, N - 1),
    (N - 1e-9, N - 1),
    (1e-300, 0),
    (7.5, 7),
]
"""Clicks within the matrix, as y and the row they pick (the floor of y)."""


@pytest.fixture(scope="module")
def clicked_session() -> Iterator[Session]:
    """One session of ``N`` rows the click tests send messages to."""
    yield Session({"n": str(N)})


def send(session: Session, message: object) -> int:
    """Send ``message`` to the session's figures from row ``START_ROW``, as Panel hands a
    page's ``send_msg`` to the component; the number of frames sent before it."""
    session.state.row = START_ROW
    sequence = session.figures.sequence
    session.figures.take_message(message)
    return sequence


@pytest.mark.parametrize("message", bad_messages(), ids=repr)
def test_a_bad_click_message_picks_nothing(clicked_session: Session, message: object) -> None:
    session = clicked_session
    assert picked(message) is None, "the family holds only bad messages"
    sequence = send(session, message)
    assert session.state.row == START_ROW
    assert session.figures.sequence == sequence, "nothing changed: nothing is sent"


@pytest.mark.parametrize(("y", "row"), GOOD, ids=repr)
def test_a_click_within_the_matrix_picks_the_row_under_it(
    clicked_session: Session, y: float, row: int
) -> None:
    session = clicked_session
    assert picked({"row": y}) == row
    sequence = send(session, {"row": y, "extra": "<b>ignored</b>"})
    assert session.state.row == row
    assert session.figures.sequence == sequence + (row != START_ROW)
    assert session.figures.frame["numbers"][ROW]["row"] == row


@pytest.mark.parametrize("y", [2**1024, -(2**1024), 10**400], ids=["2**1024", "-2**1024", "1e400"])
def test_an_int_beyond_floats_range_picks_nothing(clicked_session: Session, y: int) -> None:
    send(clicked_session, {"row": y})
    assert clicked_session.state.row == START_ROW


JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=6,
)
"""Any value a page's JSON message decodes to (ints of any size among them)."""

ROWS = st.one_of(
    JSON,
    st.integers(-3, N + 3),
    st.floats(-2.0, N + 2.0),
    st.floats(allow_nan=True, allow_infinity=True),
)
"""Values of ``row``, weighted towards the matrix's edges."""


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        JSON,
        st.fixed_dictionaries({"row": ROWS}),
        st.fixed_dictionaries({"row": ROWS}, optional={"x": JSON, "row ": JSON}),
    )
)
def test_any_click_message_picks_the_floor_of_a_row_within_the_matrix_or_nothing(
    clicked_session: Session, message: object
) -> None:
    session = clicked_session
    send(session, message)  # never raises
    expected = picked(message)
    assert session.state.row == (START_ROW if expected is None else expected)
