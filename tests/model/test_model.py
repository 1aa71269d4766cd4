"""The app model without a server: each control changes the derived data it should."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sdpa_core
from app.page.frames import numbers_frame
from app.simulation.model import (
    HISTOGRAMS,
    INPUTS,
    OUTPUT,
    ROW,
    SCORES,
    VIEW,
    WEIGHTS,
    SimulationModel,
)
from app.simulation.parts import HISTOGRAM_BINS, raw_scores
from app.simulation.spec import CONTROL_NAMES
from app.simulation.state import SimulationState


def model_with(**controls: object) -> SimulationModel:
    """A model whose state starts from ``controls``."""
    return SimulationModel(SimulationState(**controls))


def change(model: SimulationModel, **controls: object) -> set[str]:
    """Set ``controls`` on the model's state and refresh, as the page does."""
    model.state.param.update(**controls)
    return model.refresh(controls)


def test_default_weights_are_probability_rows() -> None:
    model = model_with()
    weights = model.weights.weights
    assert weights.shape == (32, 32)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    image = model.weights.weights_image
    assert image.dtype == np.float32 and image.flags.c_contiguous


@pytest.mark.parametrize(
    ("controls", "scaled", "temperature", "causal"),
    [
        ({}, True, 1.0, False),
        ({"scaled": False, "d_k": 16}, False, 1.0, False),
        ({"temperature": 0.3, "causal": True}, True, 0.3, True),
    ],
)
def test_weights_equal_the_core_attention(
    controls: dict, scaled: bool, temperature: float, causal: bool
) -> None:
    """The model's weights are sdpa_core.attention's, for the same sampled Q and K."""
    model = model_with(**controls)
    q, k = sdpa_core.sample_qk(model.state.n, model.state.d_k, model.state.seed)
    _, expected = sdpa_core.attention(
        q,
        k,
        k,
        scale=None if scaled else 1.0,
        temperature=temperature,
        mask="causal" if causal else None,
    )
    np.testing.assert_allclose(model.weights.weights, expected, rtol=1e-12, atol=1e-15)


def test_each_control_refreshes_only_what_depends_on_it() -> None:
    model = model_with()
    assert change(model, temperature=2.0) == {WEIGHTS, ROW, OUTPUT}
    assert change(model, scaled=False) == {WEIGHTS, OUTPUT}
    assert change(model, view="raw") == {VIEW}
    assert change(model, row=3) == {ROW}
    assert change(model, causal=True) == {SCORES, WEIGHTS, ROW, OUTPUT}
    assert change(model, n=64) == {SCORES, WEIGHTS, ROW, OUTPUT}
    assert change(model, d_k=128) == {SCORES, WEIGHTS, ROW, OUTPUT, HISTOGRAMS}
    assert change(model, seed=5) == {SCORES, WEIGHTS, ROW, OUTPUT, HISTOGRAMS}


def test_temperature_flattens_and_sharpens() -> None:
    model = model_with()
    base = model.weights.mean_entropy
    change(model, temperature=20.0)
    flat = model.weights.mean_entropy
    change(model, temperature=0.05)
    sharp = model.weights.mean_entropy
    assert sharp < base < flat <= model.weights.uniform_entropy


def test_unscaled_large_d_k_collapses_to_one_hot() -> None:
    model = model_with(d_k=1024, scaled=False)
    assert model.weights.mean_max_weight > 0.9
    assert model.weights.mean_entropy < 0.3
    change(model, scaled=True)
    assert model.weights.mean_max_weight < 0.3
    assert model.weights.mean_entropy > 0.8 * math.log(32)


def test_causal_mask_zeroes_and_marks_the_upper_triangle() -> None:
    model = model_with(causal=True, n=16)
    weights = model.weights.weights
    upper = ~np.tri(16, dtype=bool)
    assert np.all(weights[upper] == 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    for image in (model.weights.weights_image, model.scores.raw_image, model.scores.scaled_image):
        assert np.isnan(image[upper]).all()
        assert np.isfinite(image[~upper]).all()
    assert model.weights.uniform_entropy == pytest.approx(np.log(np.arange(1, 17)).mean())
    assert model.weights.uniform_max_weight == pytest.approx((1 / np.arange(1, 17)).mean())


def test_n_and_d_k_change_the_shapes_and_scores_nest() -> None:
    model = model_with(n=8, d_k=4)
    small = model.scores.raw_image.copy()
    change(model, n=20)
    assert model.scores.raw_image.shape == (20, 20)
    np.testing.assert_array_equal(model.scores.raw_image[:8, :8], small)
    expected_scaled = raw_scores(20, 4, 0) / 2.0
    np.testing.assert_allclose(model.scores.scaled_image, expected_scaled, rtol=1e-6)


@pytest.mark.parametrize(("d_k", "raw_std"), [(4, 2.0), (1024, 32.0)])
def test_histogram_readouts_reproduce_the_lesson(d_k: int, raw_std: float) -> None:
    """Seed 0 gives the lesson's printed numbers: 4 2.0 1.0 and 1024 32.0 1.0."""
    model = model_with(d_k=d_k)
    assert round(model.raw_histogram.std, 1) == raw_std
    assert round(model.scaled_histogram.std, 1) == 1.0
    assert model.raw_histogram.expected_std == pytest.approx(math.sqrt(d_k))


def test_histograms_are_densities_against_their_normal_laws() -> None:
    model = model_with(d_k=64)
    for frame, variance in ((model.raw_histogram, 64.0), (model.scaled_histogram, 1.0)):
        assert frame.count == 10_000
        assert len(frame.density) == HISTOGRAM_BINS
        widths = frame.right - frame.left
        assert float((frame.density * widths).sum()) == pytest.approx(1.0, abs=2e-3)
        peak = 1 / math.sqrt(2 * math.pi * variance)
        assert frame.curve_y.max() == pytest.approx(peak, rel=1e-3)
    change(model, d_k=256)
    assert model.raw_histogram.std == pytest.approx(16.0, rel=0.05)


def test_resample_moves_to_a_new_draw() -> None:
    model = model_with()
    before = model.scores.raw_image.copy()
    model.state.resample()
    assert model.state.seed == 1
    model.refresh({"seed"})
    assert not np.array_equal(before, model.scores.raw_image)


def test_shared_caches_are_read_only() -> None:
    model = model_with()
    with pytest.raises(ValueError):
        model.scores.raw_image[0, 0] = 1.0
    with pytest.raises(ValueError):
        raw_scores(32, 64, 0)[0, 0] = 1.0


def test_row_comparison_shows_one_query_scaled_and_unscaled() -> None:
    model = model_with(d_k=1024, row=5)
    row = model.row
    assert row.row == 5 and row.keys.size == 32
    np.testing.assert_allclose(row.scaled, model.weights.weights[5], rtol=1e-12)
    assert row.unscaled.max() > 0.9 and row.unscaled_entropy < row.scaled_entropy
    change(model, scaled=False)
    np.testing.assert_allclose(model.row.unscaled, model.weights.weights[5], rtol=1e-12)


def test_row_is_clamped_and_causal_rows_see_only_their_keys() -> None:
    model = model_with(n=8, row=100, causal=True)
    assert model.row.row == 7 and model.row.keys.size == 8
    change(model, row=2)
    assert model.row.keys.size == 3
    np.testing.assert_allclose(model.row.scaled.sum(), 1.0)


def test_output_is_the_core_attention_output() -> None:
    model = model_with(d_k=16, causal=True, temperature=0.5)
    q, k = sdpa_core.sample_qk(32, 16, 0)
    v = sdpa_core.sample_values(32, model.output.values_image.shape[1], 0)
    expected, _ = sdpa_core.attention(q, k, v, temperature=0.5, mask="causal")
    np.testing.assert_allclose(model.output.output_image, expected, rtol=1e-5, atol=1e-6)


def test_a_one_hot_row_copies_one_value_row() -> None:
    model = model_with(d_k=1024, scaled=False)
    weights = model.weights.weights
    row = int(np.argmax(weights.max(axis=1)))
    key = int(np.argmax(weights[row]))
    assert weights[row, key] > 0.999
    np.testing.assert_allclose(
        model.output.output_image[row], model.output.values_image[key], atol=1e-2
    )


def test_every_control_feeds_a_derived_part_and_no_part_reads_anything_else() -> None:
    assert frozenset().union(*INPUTS.values()) == frozenset(CONTROL_NAMES)


def test_a_refresh_given_values_computes_for_them_while_the_state_moves_on() -> None:
    # A served session's large refresh runs in a thread with the values taken when it
    # started; the state may move on meanwhile, and the frame must say what it shows.
    model = model_with()
    values = {**model.state.control_values(), "n": 48, "d_k": 128, "temperature": 0.5}
    model.state.param.update(n=16, d_k=4)  # later moves, not yet refreshed
    parts = model.refresh({"n", "d_k", "temperature"}, values)
    assert model.computed_for == values
    reference = model_with(n=48, d_k=128, temperature=0.5)
    np.testing.assert_array_equal(model.weights.weights, reference.weights.weights)
    np.testing.assert_array_equal(model.scores.raw_image, reference.scores.raw_image)
    frame = numbers_frame(model, parts, 1)
    assert (frame["state"]["n"], frame["state"]["d_k"]) == (48, 128)
    assert frame["numbers"][WEIGHTS]["weightsImage"].size == 48 * 48
    # Without values, a refresh computes for the state as it is.
    model.refresh(CONTROL_NAMES)
    assert model.computed_for == model.state.control_values()
    assert model.weights.weights.shape == (16, 16)


def test_a_refresh_says_when_it_would_build_a_new_seeds_tables() -> None:
    # Seeds no other test draws: building their tables of pooled pairs takes ~0.5 s, which
    # a served session does off the event loop (app.served.session.Session.update_plots).
    state = SimulationState(seed=4201)
    model = SimulationModel(state)
    values = state.control_values()
    # Built by the model's first refresh: a lookup now.
    assert not model.builds_tables({"seed"}, values)
    state.seed = 4202
    values = state.control_values()
    assert model.builds_tables({"seed"}, values)
    # A change the histograms do not depend on builds nothing, whatever the seed.
    assert not model.builds_tables({"temperature"}, values)
    model.refresh({"seed"}, values)
    assert not model.builds_tables({"seed"}, values)
    # QK-norm reads two more tables of the same seed.
    state.qk_norm = True
    assert model.builds_tables({"qk_norm"}, state.control_values())


def test_sessions_showing_one_state_share_its_weights() -> None:
    """Up to SHARED_WEIGHTS_MAX_N, two models of the same state hold the same weights
    (computed once, read-only); past it each computes its own."""
    from app.simulation.model import SHARED_WEIGHTS_MAX_N

    models = [SimulationModel(SimulationState()) for _ in range(2)]
    for model in models:
        model.state.set_controls(d_k=128, temperature=0.7)
        model.refresh({"d_k", "temperature"})
    first, second = (model.weights for model in models)
    assert first is second
    assert not first.weights.flags.writeable and not first.weights_image.flags.writeable
    big = [SimulationModel(SimulationState()) for _ in range(2)]
    for model in big:
        model.state.n = SHARED_WEIGHTS_MAX_N * 2
        model.refresh({"n"})
    assert big[0].weights is not big[1].weights
    np.testing.assert_array_equal(big[0].weights.weights, big[1].weights.weights)


def test_the_shared_weights_are_keyed_by_the_weights_inputs_in_the_specs_order() -> None:
    from app.simulation.model import shared_weights
    from app.simulation.spec import SPEC, WEIGHTS

    values = SimulationState(d_k=32, temperature=0.6).control_values()
    key = SPEC.part_key(WEIGHTS, values)
    # Every control the weights depend on, nothing else (not the view, not the row).
    assert SPEC.ordered_inputs[WEIGHTS] == tuple(n for n in CONTROL_NAMES if n in INPUTS[WEIGHTS])
    assert key == tuple(values[name] for name in SPEC.ordered_inputs[WEIGHTS])
    assert hash(key) == hash(SPEC.part_key(WEIGHTS, dict(values)))
    # A control the weights do not read changes no key: the entry is shared.
    moved = {**values, "view": "raw", "row": 5}
    assert shared_weights(moved) is shared_weights(values)
    # One they read makes another entry.
    assert shared_weights({**values, "causal": True}) is not shared_weights(values)


def test_refresh_hands_every_part_the_one_mapping_of_the_controls_values(monkeypatch) -> None:
    import app.simulation.model as model_module

    seen: list[dict] = []
    original = model_module.row_comparison

    def recording(raw: np.ndarray, values: dict) -> object:
        seen.append(values)
        return original(raw, values)

    monkeypatch.setattr(model_module, "row_comparison", recording)
    model = model_with(row=3, d_k=16)
    (values,) = seen
    assert values == model.state.control_values() == model.computed_for
    assert model.row.row == 3
