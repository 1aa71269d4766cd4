"""A new control is one spec entry: a throwaway one, added through
:meth:`app.simulation.spec.SimulationSpec.with_control`, reaches the URL, the recompute graph,
the served page's widgets and the offline page's data with no other change.

The browser tests serve it (tests/browser/test_new_control_browser.py) and export it
(tests/export/test_new_control_offline.py) and move it there.
"""

from __future__ import annotations

import dataclasses

import pytest
from new_control_support import GAIN, SPEC_WITH_GAIN

from app.export.page import build_document, initial_state
from app.page.controls import widget_names, widget_spec
from app.page.frames import frame_state
from app.page.kernel_data import build_export_data
from app.served.classroom import checked_scene
from app.served.session import Session
from app.served.ticks import run_now
from app.simulation.model import SimulationModel
from app.simulation.query import query_parameter_names, query_spec
from app.simulation.spec import OUTPUT, SPEC, WEIGHTS, Control, SimulationSpec, page_spec
from app.simulation.state import SimulationState

GainState = SimulationState.for_spec(SPEC_WITH_GAIN)


def test_the_new_spec_adds_the_control_and_leaves_the_apps_alone() -> None:
    assert SPEC_WITH_GAIN.names == (*SPEC.names, "gain")
    assert "gain" not in SPEC.by_name and "gain" not in SimulationState.param
    assert SPEC_WITH_GAIN.by_name["gain"] is GAIN
    placed = SPEC.with_control(GAIN, after="n")
    assert placed.names[placed.names.index("n") + 1] == "gain"
    assert SimulationState.for_spec(SPEC) is SimulationState
    assert SimulationState.for_spec(SPEC_WITH_GAIN) is GainState, "one class per spec"
    assert isinstance(GainState(), SimulationState)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "d_k"}, "named more than once: d_k"),
        ({"feeds": frozenset()}, "must feed some of the parts"),
        ({"feeds": frozenset({"colours"})}, "must feed some of the parts"),
    ],
)
def test_a_control_the_spec_cannot_take_is_refused_with_its_reason(
    change: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SPEC.with_control(dataclasses.replace(GAIN, **change))


def test_a_control_placed_after_an_unknown_one_is_refused() -> None:
    with pytest.raises(ValueError, match="no control is called 'nope'"):
        SPEC.with_control(GAIN, after="nope")
    with pytest.raises(ValueError, match="named more than once"):
        SimulationSpec((GAIN, GAIN))


def test_the_url_reads_and_writes_the_new_control() -> None:
    state = GainState()
    assert state.gain == 1.0 and state.query()["gain"] == "1"
    assert query_parameter_names(SPEC_WITH_GAIN)[-1] == "gain"
    state.apply_query({"gain": ["1.5"], "d_k": ["16"]})
    assert (state.gain, state.d_k, state.notice) == (1.5, 16, "")
    assert list(state.query())[-1] == "gain" and state.query()["gain"] == "1.5"
    state.apply_query({"gain": ["9"]})
    assert state.gain == 2.0
    assert state.notice == "gain = 9 is above the largest value 2; using 2."
    state.apply_query({"gain": ["loud"]})
    assert state.gain == 2.0 and "“loud” is not a number" in state.notice
    # The app's own state takes the link's ``gain`` for a course page's parameter.
    plain = SimulationState()
    plain.apply_query({"gain": ["1.5"]})
    assert plain.notice == "" and "gain" not in plain.query()
    parameters = {p["name"]: p for p in query_spec(SPEC_WITH_GAIN)["parameters"]}
    assert parameters["gain"] == {
        "name": "gain",
        "kind": "number",
        "bounds": [0.5, 2.0],
        "choices": [],
        "blank": False,
    }


def test_the_recompute_graph_recomputes_what_the_new_control_feeds() -> None:
    assert "gain" in SPEC_WITH_GAIN.inputs[WEIGHTS]
    assert SPEC_WITH_GAIN.parts_fed_by({"gain"}) == {WEIGHTS}
    assert SPEC_WITH_GAIN.parts_fed_by({"gain", "temperature"}) == SPEC.parts_fed_by(
        {"temperature"}
    )
    model = SimulationModel(GainState())
    model.state.set_controls(gain=0.5)
    assert model.refresh({"gain"}) == {WEIGHTS}
    assert model.computed_for["gain"] == 0.5 and frame_state(model)["gain"] == 0.5
    assert OUTPUT not in model.refresh({"gain"})


def test_the_new_control_enters_the_shared_weights_key_with_no_other_change() -> None:
    from app.simulation.model import shared_weights

    values = GainState().control_values()
    assert SPEC_WITH_GAIN.ordered_inputs[WEIGHTS][-1] == "gain"
    assert SPEC_WITH_GAIN.part_key(WEIGHTS, values)[-1] == 1.0
    # Two values of the new control are two entries, each shared by the sessions showing it.
    first = shared_weights(values, SPEC_WITH_GAIN)
    assert shared_weights({**values, "gain": 0.5}, SPEC_WITH_GAIN) is not first
    assert shared_weights(dict(values), SPEC_WITH_GAIN) is first


def test_the_served_page_draws_binds_and_shares_the_new_control() -> None:
    assert "gain" in widget_names(SPEC_WITH_GAIN) and "gain" not in widget_names()
    session = Session({"gain": ["0.75"]}, defer=run_now, pace=run_now, spec=SPEC_WITH_GAIN)
    assert session.state.gain == 0.75 and session.notice == ""
    controls = session.layout.drawn_controls
    more = {spec["name"]: spec for spec in controls.more}
    assert more["gain"] == widget_spec("gain", SPEC_WITH_GAIN)
    assert more["gain"] == {
        "name": "gain",
        "label": "throwaway gain",
        "widget": "slider",
        "positions": ["0.5", "0.75", "1", "1.5", "2"],
    }
    assert controls.values["gain"] == {"index": 1, "text": "0.75"}
    controls.take_message({"name": "gain", "index": 3})
    assert session.state.gain == 1.5
    frame = session.figures.frame
    assert frame["state"]["gain"] == 1.5 and WEIGHTS in frame["parts"]
    assert "gain=1.5" in session.share_text("link")
    # Out of its grid: refused, and the page is put back where the state is.
    controls.take_message({"name": "gain", "index": 5})
    assert session.state.gain == 1.5 and controls.values["gain"]["index"] == 3
    # A link may show it alone.
    alone = Session({"controls": ["gain"]}, spec=SPEC_WITH_GAIN).layout.drawn_controls
    assert [spec["name"] for spec in alone.controls] == ["gain"]


def test_the_offline_page_offers_the_new_control_under_more_controls() -> None:
    data = build_export_data(16, 16, 0)
    described = page_spec(SPEC_WITH_GAIN, offline_only=True)
    assert described["controls"][-1]["name"] == "gain"
    assert "gain" in described["inputs"][WEIGHTS]
    _, config, _ = build_document(data, SPEC_WITH_GAIN)
    assert config["widgets"]["gain"] == widget_spec("gain", SPEC_WITH_GAIN)
    assert config["grids"]["sdpa-more"][-1] == "gain"
    assert config["url_names"][-1] == "gain"
    assert "gain" in config["inputs"][WEIGHTS]
    assert "gain" in config["shown"]["names"]
    assert config["query"] == query_spec(SPEC_WITH_GAIN)
    assert {c["name"]: c["default"] for c in config["controls"]}["gain"] == 1.0
    assert initial_state(data, SPEC_WITH_GAIN).gain == 1.0
    assert "gain" not in build_document(data)[1]["widgets"]


def test_a_control_kept_from_the_offline_page_stays_in_the_served_one() -> None:
    served_only = SPEC.with_control(dataclasses.replace(GAIN, offline=False))
    described = page_spec(served_only, offline_only=True)
    assert "gain" not in [c["name"] for c in described["controls"]]
    assert "gain" in widget_names(served_only)


def test_a_control_of_another_kind_gets_its_own_widget() -> None:
    switch = Control(
        "echo",
        feeds=frozenset({OUTPUT}),
        mirror=True,
        widget="switch",
        kind="boolean",
        default=False,
        label="throwaway switch",
        doc="A second throwaway control.",
    )
    spec = SPEC_WITH_GAIN.with_control(switch)
    session = Session({"echo": ["yes"]}, defer=run_now, pace=run_now, spec=spec)
    assert session.state.echo is True
    controls = session.layout.drawn_controls
    assert {s["name"]: s["widget"] for s in controls.more}["echo"] == "switch"
    controls.take_message({"name": "echo", "value": False})
    # The output is the lesson's: the model recomputed it, the first screen got no frame.
    assert session.state.echo is False and session.model.computed_for["echo"] is False
    assert session.figures.frame["state"]["echo"] is True
    assert session.model.refresh({"echo"}) == {OUTPUT}


def test_a_class_scene_carries_the_new_control_through_the_states_checks() -> None:
    assert checked_scene({"gain": 9, "d_k": 16, "bogus": 1}, SPEC_WITH_GAIN) == {
        "gain": 2.0,
        "d_k": 16,
    }
    assert checked_scene({"gain": "loud"}, SPEC_WITH_GAIN) == {}
    assert checked_scene({"gain": 1.5}) == {}, "the app's class knows no gain"
