"""The collapse-curve view as built for a state: its sources, marker, caching and text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bokeh.models import Legend, LogScale

import app.page.views.collapse as collapse
from app.page import lesson_text
from app.page.lesson import collapse_html
from app.page.views.collapse import (
    COLLAPSE_D_VALUES,
    METRICS,
    SCALED_COLOUR,
    UNSCALED_COLOUR,
    CollapseView,
    uniform_references,
)
from app.simulation.model import SimulationModel
from app.simulation.spec import TEMPERATURE_GRID
from app.simulation.state import SimulationState
from sdpa_core.metrics import COLLAPSE_CURVE_CACHE_SIZE, _collapse_curve

COLUMNS = [suffix.format(m.name) for m in METRICS for suffix in ("{}", "{}_low", "{}_high")]


@pytest.fixture
def model() -> SimulationModel:
    return SimulationModel(SimulationState())


@pytest.fixture
def view(model: SimulationModel) -> CollapseView:
    return CollapseView(model)


@pytest.fixture
def core_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Record every call the view makes to sdpa_core.collapse_curve (still computing it)."""
    calls: list[dict] = []
    real = collapse.collapse_curve

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(collapse, "collapse_curve", counting)
    return calls


def built(**controls: object) -> CollapseView:
    """The view as built for the default state with ``controls`` set."""
    return CollapseView(SimulationModel(SimulationState(**controls)))


def column(source: object, name: str) -> np.ndarray:
    return np.asarray(source.data[name], dtype=float)


# --- sources ------------------------------------------------------------------------------


def test_sources_hold_finite_curves_over_the_whole_d_k_axis(view: CollapseView) -> None:
    for source in (view.scaled_source, view.unscaled_source):
        np.testing.assert_array_equal(column(source, "d"), [2**p for p in range(11)])
        for name in COLUMNS:
            values = column(source, name)
            assert values.shape == (11,), name
            assert np.isfinite(values).all(), name


def test_bands_enclose_their_means(view: CollapseView) -> None:
    for source in (view.scaled_source, view.unscaled_source):
        for metric in METRICS:
            mean = column(source, metric.name)
            assert (column(source, f"{metric.name}_low") <= mean + 1e-12).all()
            assert (mean <= column(source, f"{metric.name}_high") + 1e-12).all()


def test_unscaled_collapses_while_scaled_stays_flat(view: CollapseView) -> None:
    scaled, unscaled = view.scaled_source, view.unscaled_source
    entropy = column(unscaled, "entropy")
    assert (np.diff(entropy) < 0).all(), "unscaled entropy must fall at every doubling of d_k"
    assert entropy[-1] < 0.2 < 3.0 < entropy[0]
    assert column(unscaled, "max_weight")[-1] > 0.9
    assert column(unscaled, "jacobian_norm")[-1] < 0.1
    for name in ("entropy", "max_weight", "jacobian_norm"):
        values = column(scaled, name)
        assert values.max() - values.min() < 0.1, f"scaled {name} should be flat"
    assert column(scaled, "entropy").min() > 2.9
    assert column(scaled, "jacobian_norm")[-1] > 0.2


def test_curves_are_writable_copies_not_the_cores_cached_arrays(view: CollapseView) -> None:
    values = view.scaled_source.data["entropy"]
    assert values.flags.writeable
    curve = collapse.curves(1.0)[True]
    assert not np.shares_memory(values, curve.entropy.mean)


def test_uniform_references_are_the_theoretical_values() -> None:
    references = uniform_references(32)
    assert references["entropy"] == pytest.approx(math.log(32))
    assert references["max_weight"] == pytest.approx(1 / 32)
    assert references["jacobian_norm"] == pytest.approx(math.sqrt(1 / 32 - 1 / 32**2))


def test_reference_lines_span_the_axis_at_the_uniform_values(view: CollapseView) -> None:
    data = view.reference_source.data
    assert list(data["d"]) == [1, 1024]
    assert data["entropy"] == [pytest.approx(math.log(32))] * 2
    assert data["max_weight"] == [pytest.approx(1 / 32)] * 2


# --- the marker ---------------------------------------------------------------------------


def test_marker_starts_on_the_scaled_curve_at_the_default_d_k(view: CollapseView) -> None:
    data = view.marker_source.data
    assert data["d"] == [64.0]
    assert data["colour"] == [SCALED_COLOUR]
    index = COLLAPSE_D_VALUES.index(64)
    for metric in METRICS:
        assert data[metric.name][0] == pytest.approx(column(view.scaled_source, metric.name)[index])


def test_marker_sits_on_the_curve_at_the_states_d_k(view: CollapseView) -> None:
    curve = column(view.scaled_source, "entropy")
    at_1024 = built(d_k=1024)
    assert at_1024.marker_source.data["d"] == [1024.0]
    assert at_1024.marker_source.data["entropy"][0] == pytest.approx(curve[-1])
    at_90 = built(d_k=90)
    # Between grid points the marker is interpolated on log2 d_k.
    expected = np.interp(math.log2(90), np.arange(11), curve)
    assert at_90.marker_source.data["entropy"][0] == pytest.approx(expected)
    np.testing.assert_array_equal(column(at_90.scaled_source, "entropy"), curve)
    assert "d_k = 90" in at_90.caption


def test_marker_sits_on_the_curve_of_the_scale_switch() -> None:
    view = built(d_k=1024, scaled=False)
    data = view.marker_source.data
    assert data["colour"] == [UNSCALED_COLOUR]
    assert data["max_weight"][0] == pytest.approx(column(view.unscaled_source, "max_weight")[-1])
    assert data["max_weight"][0] > 0.9
    assert "unscaled (orange)" in view.caption


def test_the_temperatures_curves_come_from_the_core(
    view: CollapseView, core_calls: list[dict]
) -> None:
    cold_entropy = column(view.scaled_source, "entropy")
    warm = built(temperature=4.0)
    assert sorted(call["scaled"] for call in core_calls) == [False, True]
    assert all(call["temperature"] == 4.0 for call in core_calls)
    # Higher temperature flattens the softmax: every scaled point gains entropy.
    assert (column(warm.scaled_source, "entropy") > cold_entropy).all()
    assert warm.marker_source.data["entropy"][0] == pytest.approx(
        column(warm.scaled_source, "entropy")[COLLAPSE_D_VALUES.index(64)]
    )
    assert "temperature 4" in warm.caption


def test_controls_the_curves_ignore_change_nothing(view: CollapseView) -> None:
    other = built(n=128, seed=7, causal=True, view="raw")
    assert dict(other.marker_source.data) == dict(view.marker_source.data)
    assert other.caption == view.caption
    for name in COLUMNS:
        np.testing.assert_array_equal(
            column(other.scaled_source, name), column(view.scaled_source, name)
        )


# --- figures and text ---------------------------------------------------------------------


def test_three_log_axis_figures_with_legends(view: CollapseView) -> None:
    assert [fig.name for fig in view.figures] == [
        "collapse_entropy",
        "collapse_max_weight",
        "collapse_jacobian_norm",
    ]
    for fig in view.figures:
        assert isinstance(fig.x_scale, LogScale)
        assert fig.x_range.start < 1 and fig.x_range.end > 1024
        assert fig.xaxis[0].axis_label == "d_k (log scale)"
        assert fig.yaxis[0].axis_label
        legends = [item for item in fig.above if isinstance(item, Legend)]
        assert len(legends) == 1
        labels = [item.label.value for item in legends[0].items]
        assert labels == ["scaled", "unscaled", "uniform", "current d_k"]
        # Two bands with their lines and points, the reference line and the marker.
        assert len(fig.renderers) == 8


def test_marker_is_always_inside_the_fixed_y_ranges() -> None:
    for temperature in (0.05, 20.0):
        for scaled in (True, False):
            for d_k in (1, 1024):
                view = built(temperature=temperature, scaled=scaled, d_k=d_k)
                for fig, metric in zip(view.figures, METRICS, strict=True):
                    value = view.marker_source.data[metric.name][0]
                    assert fig.y_range.start < value < fig.y_range.end, (metric.name, value)


def test_the_lesson_explains_the_curves(view: CollapseView) -> None:
    html = collapse_html(view)
    assert "Why it matters" in html["collapse_intro"]
    assert html["collapse_caption"] == view.caption
    assert "Dashed lines: uniform attention over 32 keys" in html["collapse_references"]


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        (lesson_text.SCALE, ["one-hot", "gradient", "√d_k"]),
        (lesson_text.TEMPERATURE, ["uniform", "sharper", "higher", "lower"]),
        (lesson_text.HISTOGRAM, ["Normal(0, d_k)", "√d_k"]),
        (lesson_text.SAME_D_K, ["same length", "whole layer"]),
        (lesson_text.WORKED_EXAMPLE, ["√2"]),
        (lesson_text.QUIZ, ["feedback"]),
    ],
)
def test_lesson_text_answers_the_faq(text: str, phrases: list[str]) -> None:
    for phrase in phrases:
        assert phrase in text
    assert "<" not in text, "plain Markdown, no HTML"


def test_every_slider_temperature_stays_cached_for_both_scales() -> None:
    """A class sweeping the temperature slider computes each curve once: all the grid's
    temperatures, scaled and unscaled, fit in the core's curve cache together."""
    assert 2 * len(TEMPERATURE_GRID) <= COLLAPSE_CURVE_CACHE_SIZE
    _collapse_curve.cache_clear()
    for temperature in TEMPERATURE_GRID:
        collapse.curves(temperature)
    misses = _collapse_curve.cache_info().misses
    for temperature in TEMPERATURE_GRID:
        collapse.curves(temperature)
    assert _collapse_curve.cache_info().misses == misses, "a second sweep recomputed curves"
