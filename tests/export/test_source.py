"""The page's two number sources deliver the same frames.

kernel_source.js (the offline file's source, under Node) and app.page.frames (what a served
session sends, from a refreshed SimulationModel) must give the drawing code the same frame
for the same state and parts: the same parts, fields, types and dtypes, and numbers equal
to float32 precision (the file computes from float32 Q and K, the server from float64) or
bit for bit where both read the same samples (the histograms' pooled dot products). The
states are the spec's (tests/export/spec_states.py): each control the file computes at its
extremes, alone and in bounded combinations, so a new control is compared with no edit. Then,
in Chromium, the page itself: it draws what a late frame brings and drops a frame older
than one it has drawn.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from app.export.page import DRAWN_PARTS, source_config
from app.page.frames import FRAME_FIELDS, HISTOGRAM_FIELDS, REPORT_FIELDS, numbers_frame
from app.page.kernel_data import ExportData, build_export_data, slider_grids
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROL_BY_NAME, HISTOGRAMS, OUTPUT, SPEC, VIEW, WEIGHTS
from app.simulation.state import SimulationState

from .conftest import OfflinePage
from .js_harness import node_available, run_node
from .spec_states import COMBINATIONS, extremes, single_changes, spec_states

SEED = 0
N_MAX, D_MAX = 256, 1024
"""Samples large enough for every state below (n = 256, d_k = 1024)."""

CURVE_POINTS = 241


@functools.cache
def export_data() -> ExportData:
    """The samples the offline source computes from (built once: the states are named from
    their slider positions at collection)."""
    return build_export_data(N_MAX, D_MAX, SEED)


OVERFLOWING = {"d_k": 1024, "scaled": False, "precision": "float16", "subtract_max": False}
"""A state whose softmax overflows: its frame carries the overflow layer."""

STATES = {**spec_states(export_data()), "overflowing float16": OVERFLOWING}
"""The states compared, as changes to the default state: generated from the spec (each
mirrored control at its extremes, then bounded combinations; tests/export/spec_states.py),
and one whose softmax surely overflows (inf and NaN weights in both sources)."""

FLOAT32 = {"rtol": 1e-5, "atol": 1e-5}
"""Agreement of numbers computed from float32 Q and K (the file) and float64 ones."""

EXACT = {"rtol": 1e-12, "atol": 0.0}
"""Agreement of numbers both sources compute from the same float32 samples."""

ULP = {"float64": 0.0, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
"""The spacing of each softmax format's numbers just below 1."""


def tolerance(part: str, state: dict) -> dict:
    """How closely ``part``'s numbers of ``state`` must agree: bit for bit for the
    histograms; else to float32 precision, on the scale of the scores (σ_q·σ_k times the
    lesson's), and to one step of the softmax's format for the weights and what is computed
    from them (a logit on a rounding boundary of a coarse format may round either way from
    float32 and from float64 samples)."""
    if part == HISTOGRAMS:
        return EXACT
    atol = FLOAT32["atol"] * max(1.0, state["sigma_q"] * state["sigma_k"])
    if part in (WEIGHTS, OUTPUT):
        atol = max(atol, ULP[state["precision"]])
    return {"rtol": FLOAT32["rtol"], "atol": atol}


@pytest.fixture(scope="module")
def config() -> dict:
    """What the offline source reads, for samples covering every state compared."""
    return source_config(export_data(), CURVE_POINTS)


def model_of(changes: dict) -> SimulationModel:
    """A model of the default state with ``changes`` (every part computed)."""
    return SimulationModel(SimulationState(seed=SEED, **changes))


def python_frame(model: SimulationModel, parts: set[str], sequence: int) -> dict:
    """app.page.frames's frame, as it would reach the page (through the test codec)."""
    return numbers_frame(model, parts, sequence)


def assert_same(python: Any, javascript: Any, where: str, tolerance: dict) -> None:
    """``javascript`` (decoded from Node) is ``python``: the same structure, types, dtypes
    and sizes, numbers within ``tolerance`` (NaN where NaN)."""
    if isinstance(python, dict):
        assert isinstance(javascript, dict), where
        assert set(javascript) == set(python), where
        for key, value in python.items():
            assert_same(value, javascript[key], f"{where}.{key}", tolerance)
    elif isinstance(python, np.ndarray):
        assert isinstance(javascript, np.ndarray), where
        assert javascript.dtype == python.dtype, where
        assert python.ndim == 1 and python.flags.c_contiguous, where
        assert javascript.shape == python.shape, where
        np.testing.assert_allclose(javascript, python, equal_nan=True, err_msg=where, **tolerance)
    elif python is None or isinstance(python, bool | str):
        assert javascript == python, where
    else:
        assert isinstance(javascript, int | float), where
        expected = pytest.approx(python, rel=tolerance["rtol"], abs=tolerance["atol"], nan_ok=True)
        assert javascript == expected, where


def assert_same_frame(python: dict, javascript: dict) -> None:
    """The two frames carry the same sequence, parts and numbers (the histograms exact)."""
    assert javascript["sequence"] == python["sequence"]
    assert sorted(javascript["parts"]) == python["parts"]
    assert set(javascript["numbers"]) == set(python["numbers"])
    for part, numbers in python["numbers"].items():
        within = tolerance(part, python["state"])
        assert_same(numbers, javascript["numbers"][part], part, within)


def test_python_frames_carry_exactly_the_named_fields() -> None:
    model = model_of(OVERFLOWING)
    frame = numbers_frame(model, DRAWN_PARTS.values(), 7)
    assert frame["sequence"] == 7
    assert frame["parts"] == sorted(DRAWN_PARTS.values())
    # Every part with numbers, and the view (drawn from the others' numbers) without.
    assert set(frame["numbers"]) == set(FRAME_FIELDS)
    assert VIEW not in frame["numbers"]
    for part, fields in FRAME_FIELDS.items():
        assert tuple(frame["numbers"][part]) == fields, part
    for which in ("raw", "scaled"):
        assert tuple(frame["numbers"][HISTOGRAMS][which]) == HISTOGRAM_FIELDS
    weights = frame["numbers"]["weights"]
    assert tuple(weights["report"]) == REPORT_FIELDS
    # The images travel as flat float32: n×n, the overflow layer 1 or NaN.
    n = model.state.n
    for image in (weights["weightsImage"], frame["numbers"]["scores"]["rawImage"]):
        assert image.dtype == np.float32 and image.shape == (n * n,)
    overflow = weights["overflowImage"]
    assert weights["report"]["nonFinite"] > 0
    assert int(np.sum(overflow == 1)) == weights["report"]["nonFinite"]
    assert np.isnan(overflow[overflow != 1]).all()
    assert frame["state"]["precision"] == "float16"


def test_python_frames_name_only_the_parts_asked_for() -> None:
    model = model_of({})
    parts = model.refresh({"temperature"})
    frame = numbers_frame(model, parts, 2)
    assert set(frame["parts"]) == parts
    assert "weights" in frame["numbers"] and "scores" not in frame["numbers"]


def test_the_python_side_imports_neither_panel_nor_bokeh() -> None:
    # A session computes its frames with the model alone; the drawing is the browser's.
    code = (
        "import sys, app.page.frames; "
        "print(sorted(name for name in ('panel', 'bokeh') if name in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_the_states_compared_are_the_specs_controls_at_their_extremes() -> None:
    grids = slider_grids(export_data())
    for name in SPEC.mirrored:
        for value in extremes(SPEC.by_name[name], grids):
            assert {name: value} in STATES.values(), (name, value)
    # Served-only controls keep their defaults: the file keeps the exported values.
    assert not any(set(changes) & set(SPEC.served_only) for changes in STATES.values())
    # And some states move many controls at once.
    assert sum(len(changes) > 2 for changes in STATES.values()) >= COMBINATIONS // 2


@pytest.fixture(scope="module")
def every_part_frames(config: dict) -> dict[str, tuple[dict, dict]]:
    """For each state of :data:`STATES`, Python's frame of every part and the one the
    offline source delivers for the same request (one source answering them in turn)."""
    if not node_available():
        pytest.skip("node is not installed: the source tests run it")
    models = {name: model_of(changes) for name, changes in STATES.items()}
    python = {
        name: python_frame(model, set(DRAWN_PARTS.values()), sequence)
        for sequence, (name, model) in enumerate(models.items(), start=1)
    }
    requests = [
        {"sequence": frame["sequence"], "state": frame["state"], "parts": frame["parts"]}
        for frame in python.values()
    ]
    (frames,) = run_node([("kernel_source", "framesFor", [config, requests])])
    return {name: (python[name], js) for name, js in zip(python, frames, strict=True)}


@pytest.mark.parametrize("name", list(STATES), ids=list(STATES))
def test_offline_source_frames_equal_python_frames(every_part_frames: dict, name: str) -> None:
    python, javascript = every_part_frames[name]
    assert_same_frame(python, javascript)
    # The state the numbers are of comes back as it was asked for.
    assert javascript["state"] == python["state"]


CHANGES = single_changes(export_data())
"""Each control the file computes, alone at each of its extremes (from the spec)."""


@pytest.fixture(scope="module")
def change_frames(config: dict) -> dict[str, tuple[dict, dict]]:
    """For each change of :data:`CHANGES` from the default state, the frame a session would
    send after its refresh and the one the offline source delivers for the same request
    (one Node process answering them in turn)."""
    if not node_available():
        pytest.skip("node is not installed: the source tests run it")
    python = {}
    for sequence, (name, changes) in enumerate(CHANGES.items(), start=1):
        model = model_of({})
        for control, value in changes.items():
            setattr(model.state, control, value)
        parts = model.refresh(set(changes))
        assert parts and parts <= set(DRAWN_PARTS.values()), name
        python[name] = python_frame(model, parts, sequence)
    requests = [
        {"sequence": frame["sequence"], "state": frame["state"], "parts": frame["parts"]}
        for frame in python.values()
    ]
    (frames,) = run_node([("kernel_source", "framesFor", [config, requests])])
    return {name: (python[name], js) for name, js in zip(python, frames, strict=True)}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_changes_frame_holds_the_parts_refresh_named(change_frames: dict, name: str) -> None:
    # From the default state, the change's frame: what a session would send after refresh.
    python, javascript = change_frames[name]
    assert_same_frame(python, javascript)


DEFERRED_SOURCE = """() => {
    // The page's own source, answering only when the test says: a session's source.
    const page = SdpaExport.page;
    const offline = page.source;
    const held = [];
    window.__held = held;
    page.source = {
        connect: () => {},
        request: (request) => held.push(request),
        answer: (index) => offline.request(held[index]),
    };
}"""
"""Replaces the page's source by one that keeps each request until the test answers it
(through the offline source, still connected to the page)."""


def heatmap_n(opened: OfflinePage) -> int:
    """The n of the image the heatmap shows."""
    return opened.model("heatmap_image", "m.data_source.data.weight[0].shape[0]")


@pytest.mark.browser
def test_the_page_draws_late_frames_and_drops_older_ones(open_export: Any) -> None:
    opened = open_export("?n=32")
    page = opened.page
    page.evaluate(DEFERRED_SOURCE)
    slider = page.get_by_role("slider", name=CONTROL_BY_NAME["n"].label, exact=True)
    slider.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => window.__held.length === 2")
    first, second = page.evaluate("() => window.__held.map((request) => request.state.n)")
    assert first > second
    # Nothing drawn before a frame comes: the heatmap still shows n = 32.
    assert heatmap_n(opened) == 32
    updates = opened.updates()
    # The newer answer comes first and is drawn; the older one, arriving late, is dropped.
    page.evaluate("() => SdpaExport.page.source.answer(1)")
    opened.wait_for_update_after(updates)
    assert heatmap_n(opened) == second
    page.evaluate("() => SdpaExport.page.source.answer(0)")
    assert heatmap_n(opened) == second
    assert opened.updates() == updates + 1
    assert opened.snapshot()["state"]["n"] == second


def output_n(opened: OfflinePage) -> int:
    """The n of the output panel's images (the lesson's weights·V)."""
    return opened.page.evaluate("() => SdpaExport.page.models.output_source.data.n[0]")


@pytest.mark.browser
def test_the_lesson_asks_for_its_numbers_and_draws_them_when_they_come(open_export: Any) -> None:
    opened = open_export("?n=32")
    page = opened.page
    page.evaluate(DEFERRED_SOURCE)
    page.get_by_role("slider", name=CONTROL_BY_NAME["n"].label, exact=True).focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => window.__held.length === 1")
    lessons = opened.snapshot()["lesson_updates"]
    page.evaluate("() => SdpaExport.page.source.answer(0)")
    # The first screen is drawn; the lesson then asks for its row and output, each once.
    page.wait_for_function("() => window.__held.length === 3")
    opened.wait_for_lesson_after(lessons)
    asked = page.evaluate("() => window.__held.slice(1).map((request) => request.parts)")
    assert asked == [["row"], ["output"]]
    n = heatmap_n(opened)
    assert n < 32
    assert output_n(opened) == 32
    lessons = opened.snapshot()["lesson_updates"]
    page.evaluate("() => { SdpaExport.page.source.answer(1); SdpaExport.page.source.answer(2); }")
    page.wait_for_function("(n) => SdpaExport.page.models.output_source.data.n[0] === n", arg=n)
    opened.wait_for_lesson_after(lessons)
    assert opened.page.evaluate("() => SdpaExport.page.models.row_input.high") == n - 1
    assert page.evaluate("() => window.__held.length") == 3
