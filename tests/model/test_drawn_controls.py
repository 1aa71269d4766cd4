"""The first screen's drawn sliders and switches: spec, state both ways, hostile messages."""

from __future__ import annotations

import logging

import pytest
from hostile_messages import hostile_messages

from app.page.controls import control_spec, drawable, widget_names
from app.served.components.controls import DrawnControls
from app.simulation.spec import CONTROL_BY_NAME, FIRST_SCREEN_CONTROLS, nearest_on_grid
from app.simulation.state import SimulationState

DRAWN = [name for name in FIRST_SCREEN_CONTROLS if drawable(name)]


@pytest.fixture
def controls() -> DrawnControls:
    return DrawnControls(SimulationState(), DRAWN)


def test_the_first_screen_controls_are_drawn_in_the_spec_order(controls: DrawnControls) -> None:
    assert controls.names == tuple(DRAWN)
    assert [spec["name"] for spec in controls.controls] == DRAWN
    for spec in controls.controls:
        control = CONTROL_BY_NAME[spec["name"]]
        assert spec["label"] == control.label
        assert spec["widget"] == control.widget
        if control.widget == "slider":
            assert len(spec["positions"]) == len(control.grid)


def test_a_slider_position_shows_its_value_as_the_server_formats_it() -> None:
    spec = control_spec(CONTROL_BY_NAME["temperature"])
    grid = CONTROL_BY_NAME["temperature"].grid
    assert spec["positions"] == [format(value, "g") for value in grid]
    assert control_spec(CONTROL_BY_NAME["d_k"])["positions"][0] == "1"


def test_every_widget_of_the_page_is_drawn() -> None:
    assert all(drawable(name) for name in widget_names())
    assert not any(drawable(name) for name in ("row", "n_exact", "nope", "", "__class__"))
    drawn = DrawnControls(SimulationState(), ["seed", "row", "d_k", "view"])
    assert drawn.names == ("seed", "d_k", "view")


def test_a_slider_message_moves_the_state_and_the_values_follow(
    controls: DrawnControls,
) -> None:
    grid = CONTROL_BY_NAME["d_k"].grid
    index = grid.index(64) + 1
    controls.take_message({"name": "d_k", "index": index})
    assert controls.state.d_k == grid[index]
    assert controls.values["d_k"] == {"index": index, "text": str(grid[index])}


def test_a_switch_message_moves_the_state(controls: DrawnControls) -> None:
    controls.take_message({"name": "scaled", "value": False})
    assert controls.state.scaled is False
    assert controls.values["scaled"] == {"value": False}


def test_state_changes_from_elsewhere_reach_the_page(controls: DrawnControls) -> None:
    controls.state.set_controls(d_k=100, temperature=0.5)
    grid = CONTROL_BY_NAME["d_k"].grid
    assert controls.values["d_k"] == {
        "index": grid.index(nearest_on_grid(100, grid)),
        "text": "100",
    }
    assert controls.values["temperature"]["text"] == "0.5"


def test_the_slider_at_an_exact_values_position_does_not_round_it_away(
    controls: DrawnControls,
) -> None:
    controls.state.set_controls(d_k=100)
    position = controls.values["d_k"]["index"]
    controls.take_message({"name": "d_k", "index": position})
    assert controls.state.d_k == 100


@pytest.fixture
def sent(controls: DrawnControls, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The messages the session sends the page."""
    messages: list[object] = []
    monkeypatch.setattr(controls, "_send_msg", messages.append)
    return messages


@pytest.mark.parametrize("more", [(), widget_names()], ids=["first screen", "with More"])
def test_a_move_the_page_already_shows_sends_nothing_back(
    more: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nor with the More controls drawn: the d_k slider's exact box shows the position's
    value on the page as it moves (drawn_controls.js), as the session expects."""
    controls = DrawnControls(SimulationState(), DRAWN, more=more)
    sent: list[object] = []
    monkeypatch.setattr(controls, "_send_msg", sent.append)
    grid = CONTROL_BY_NAME["d_k"].grid
    for index in (grid.index(64) + 1, 0, len(grid) - 1):
        controls.take_message({"name": "d_k", "index": index})
    controls.take_message({"name": "scaled", "value": False})
    controls.take_message({"name": "temperature", "index": 0})
    assert sent == []
    assert controls.values["d_k"]["index"] == len(grid) - 1
    if more:
        assert controls.values["d_k_exact"] == {"value": 1024}


def test_an_exact_value_kept_at_its_position_sends_its_text(
    controls: DrawnControls, sent: list[object]
) -> None:
    controls.state.set_controls(d_k=100)
    position = controls.values["d_k"]["index"]
    assert sent == [{"values": {"d_k": {"index": position, "text": "100"}}}]
    sent.clear()
    # A key press that lands on the same position: the page shows the position's own
    # value, the state keeps 100, and the page is told so.
    controls.take_message({"name": "d_k", "index": position})
    assert controls.state.d_k == 100
    assert sent == [{"values": {"d_k": {"index": position, "text": "100"}}}]
    sent.clear()
    # Away and back: the value is the position's own.
    controls.take_message({"name": "d_k", "index": position + 1})
    controls.take_message({"name": "d_k", "index": position})
    grid = CONTROL_BY_NAME["d_k"].grid
    assert controls.state.d_k == grid[position]
    assert sent == []


def test_a_change_from_elsewhere_sends_only_what_changed(
    controls: DrawnControls, sent: list[object]
) -> None:
    controls.state.set_controls(temperature=0.5)
    assert sent == [{"values": {"temperature": controls.values["temperature"]}}]
    sent.clear()
    controls.state.set_controls(temperature=0.5)
    assert sent == []


def test_a_refused_move_puts_every_control_back(
    controls: DrawnControls, sent: list[object]
) -> None:
    controls.take_message({"name": "d_k", "index": -1})
    assert sent == [{"values": controls.values}]


@pytest.mark.parametrize(
    ("family", "message"),
    list(hostile_messages(DRAWN, ["index", "value"])),
    ids=lambda case: case if isinstance(case, str) else None,
)
def test_a_hostile_message_changes_nothing_and_raises_nothing(
    family: str, message: object, caplog: pytest.LogCaptureFixture
) -> None:
    state = SimulationState()
    controls = DrawnControls(state, DRAWN)
    before = state.param.values()
    shown = dict(controls.values)
    with caplog.at_level(logging.WARNING):
        controls.take_message(message)
    name = message.get("name") if isinstance(message, dict) else None
    control = CONTROL_BY_NAME.get(name) if isinstance(name, str) else None
    value = message.get("value") if isinstance(message, dict) else None
    index = message.get("index") if isinstance(message, dict) else None
    valid = control is not None and (
        (control.widget == "switch" and isinstance(value, bool))
        or (control.widget == "slider" and type(index) is int and 0 <= index < len(control.grid))
    )
    if valid:
        # A well-formed move among the hostile ones (a switch's True or False, a slider's
        # first position): it is taken, as any page's.
        expected = value if control.widget == "switch" else control.grid[index]
        assert getattr(state, name) == expected
        return
    assert state.param.values() == before
    assert controls.values == shown
    assert "refused a change from a page to DrawnControls" in caplog.text
