"""Preset scenes: complete, valid, applied in one update, and showing what they promise."""

from __future__ import annotations

import numpy as np
import pytest

from app.simulation.model import SimulationModel
from app.simulation.presets import PRESETS, preset_named, preset_options
from app.simulation.spec import CONTROL_NAMES, D_K_GRID, N_GRID, TEMPERATURE_GRID
from app.simulation.state import SimulationState

STATE_CONTROLS = set(SimulationState.param) - {"name", "notice", "preset"}


def test_the_four_scenes_in_order() -> None:
    assert list(PRESETS) == ["lesson", "collapse", "temperature", "causal"]
    assert [preset.label for preset in PRESETS.values()] == [
        "Lesson: d_k = 4 vs 1024",
        "Unscaled collapse (d_k = 1024, scale off)",
        "Temperature: sharp vs flat",
        "Causal mask",
    ]
    assert preset_options() == {preset.label: key for key, preset in PRESETS.items()}


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_preset_sets_every_control_within_bounds(key: str) -> None:
    preset = PRESETS[key]
    assert set(preset.values) == STATE_CONTROLS == set(CONTROL_NAMES)
    assert preset.description.endswith(".") and 40 < len(preset.description) < 300
    state = SimulationState()
    # param validates bounds and types, so an out-of-range value would raise here.
    state.choose_preset(key)
    assert state.preset == key
    assert {name: getattr(state, name) for name in STATE_CONTROLS} == dict(preset.values)


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_preset_sits_on_the_slider_grids(key: str) -> None:
    values = PRESETS[key].values
    assert values["d_k"] in D_K_GRID
    assert values["n"] in N_GRID
    assert values["temperature"] in TEMPERATURE_GRID


def test_choosing_a_preset_is_one_update() -> None:
    state = SimulationState()
    batches: list[set[str]] = []
    state.param.watch(
        lambda *events: batches.append({e.name for e in events}), sorted(CONTROL_NAMES)
    )
    state.choose_preset("collapse")
    assert batches == [{"d_k", "scaled"}], "only changed controls, in a single batch"


def test_choosing_a_preset_overrides_earlier_controls() -> None:
    state = SimulationState(d_k=7, temperature=3.0, n=500, causal=True, seed=42, view="raw")
    state.choose_preset("temperature")
    assert (state.d_k, state.temperature, state.n, state.causal, state.seed) == (
        64,
        0.25,
        32,
        False,
        0,
    )


@pytest.mark.parametrize("key", ["Lesson", "nope", "lesson ", "<script>x</script>", "x" * 5000])
def test_unknown_keys_raise_a_clear_key_error(key: str) -> None:
    state = SimulationState()
    before = state.param.values()
    with pytest.raises(KeyError, match="choose one of lesson, collapse, temperature, causal"):
        state.choose_preset(key)
    assert state.param.values() == before


@pytest.mark.parametrize("key", [None, 1, ("lesson",)])
def test_non_text_keys_raise_a_key_error(key: object) -> None:
    with pytest.raises(KeyError, match="unknown preset"):
        SimulationState().choose_preset(key)


def test_long_keys_are_cut_short_in_the_message() -> None:
    with pytest.raises(KeyError) as info:
        SimulationState().choose_preset("x" * 5000)
    assert len(str(info.value)) < 150


def test_preset_named_raises_for_unknown_names() -> None:
    assert preset_named("lesson") is PRESETS["lesson"]
    with pytest.raises(KeyError, match="unknown preset"):
        preset_named("")


def test_a_control_moved_away_leaves_the_scene_in_the_same_update() -> None:
    state = SimulationState()
    state.choose_preset("collapse")
    batches: list[dict[str, object]] = []
    state.param.watch(
        lambda *events: batches.append({e.name: e.new for e in events}), ["d_k", "preset"]
    )
    state.set_controls(d_k=1024)  # the scene's own value: still the scene
    assert state.preset == "collapse" and batches == []
    state.set_controls(d_k=8)
    assert state.preset == "" and batches == [{"d_k": 8, "preset": ""}]


def test_a_link_keeps_the_scene_only_if_its_other_values_match() -> None:
    kept = SimulationState()
    kept.apply_query({"preset": "collapse", "d_k": "1024"})
    left = SimulationState()
    left.apply_query({"preset": "collapse", "d_k": "8"})
    assert (kept.preset, kept.d_k, kept.scaled) == ("collapse", 1024, False)
    assert (left.preset, left.d_k, left.scaled) == ("", 8, False)


def test_choosing_no_preset_leaves_the_controls_as_they_are() -> None:
    state = SimulationState()
    state.choose_preset("collapse")
    state.choose_preset("")
    assert (state.preset, state.d_k, state.scaled) == ("", 1024, False)


def test_presets_are_read_only() -> None:
    with pytest.raises(TypeError):
        PRESETS["new"] = PRESETS["lesson"]  # type: ignore[index]
    with pytest.raises(TypeError):
        PRESETS["lesson"].values["d_k"] = 8  # type: ignore[index]


# --- each scene shows what its description promises ---------------------------------------


def model_for(key: str) -> SimulationModel:
    state = SimulationState()
    state.choose_preset(key)
    return SimulationModel(state)


def test_lesson_shows_the_lessons_standard_deviations() -> None:
    model = model_for("lesson")
    assert round(model.raw_histogram.std, 1) == 2.0
    assert round(model.scaled_histogram.std, 1) == 1.0
    assert model.state.view == "raw"


def test_collapse_turns_rows_one_hot() -> None:
    weights = model_for("collapse").weights
    assert weights.mean_max_weight > 0.9
    assert weights.mean_entropy < 0.3


def test_temperature_is_sharper_than_the_default() -> None:
    sharp = model_for("temperature").weights
    default = SimulationModel().weights
    assert sharp.mean_max_weight > 2 * default.mean_max_weight
    assert sharp.mean_entropy < default.mean_entropy


def test_causal_masks_the_upper_triangle() -> None:
    weights = model_for("causal").weights.weights
    assert np.all(np.triu(weights, k=1) == 0)
    assert weights[0, 0] == 1.0, "the first query sees only the first key"
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)


def test_a_preset_from_the_url_sets_the_scene_and_leaves_when_a_control_moves() -> None:
    state = SimulationState()
    state.apply_query({"preset": [b"collapse"]})
    assert state.preset == "collapse" and state.d_k == 1024 and not state.scaled
    assert state.query()["preset"] == "collapse"
    state.set_controls(d_k=64)
    assert state.preset == ""


def test_link_values_override_parts_of_a_preset() -> None:
    state = SimulationState()
    state.apply_query({"preset": [b"causal"], "d_k": [b"8"]})
    assert state.causal and state.d_k == 8
    assert state.preset == ""


def test_unknown_preset_in_a_link_is_explained() -> None:
    state = SimulationState()
    state.apply_query({"preset": [b"<b>boom</b>"]})
    assert state.preset == ""
    assert "\\x3cb\\x3eboom\\x3c\\x2fb\\x3e" in state.notice and "<" not in state.notice
