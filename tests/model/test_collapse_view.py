"""The collapse-curve view without a server: its sources, marker, caching and text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bokeh.models import Legend, LogScale

import app.page.views.collapse as collapse
from app.page import lesson_text
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


def change(model: SimulationModel, target: CollapseView, /, **controls: object) -> set[str]:
    """Set controls as the page does: state, then model refresh, then view update."""
    model.state.param.update(**controls)
    parts = model.refresh(controls)
    target.update(model, parts)
    return parts


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


def test_marker_moves_with_d_k_without_recomputing_curves(
    model: SimulationModel, view: CollapseView, core_calls: list[dict]
) -> None:
    before = column(view.scaled_source, "entropy").copy()
    change(model, view, d_k=1024)
    assert view.marker_source.data["d"] == [1024.0]
    assert view.marker_source.data["entropy"][0] == pytest.approx(before[-1])
    change(model, view, d_k=90)
    # Between grid points the marker is interpolated on log2 d_k.
    expected = np.interp(math.log2(90), np.arange(11), before)
    assert view.marker_source.data["entropy"][0] == pytest.approx(expected)
    assert core_calls == [], "a d_k move must not ask for the curves again"
    np.testing.assert_array_equal(column(view.scaled_source, "entropy"), before)
    assert "d_k = 90" in view.caption.html


def test_marker_follows_the_scale_switch(model: SimulationModel, view: CollapseView) -> None:
    change(model, view, d_k=1024, scaled=False)
    data = view.marker_source.data
    assert data["colour"] == [UNSCALED_COLOUR]
    assert data["max_weight"][0] == pytest.approx(column(view.unscaled_source, "max_weight")[-1])
    assert data["max_weight"][0] > 0.9
    assert "unscaled (orange)" in view.caption.html


def test_temperature_recomputes_the_curves_through_the_core(
    model: SimulationModel, view: CollapseView, core_calls: list[dict]
) -> None:
    cold_entropy = column(view.scaled_source, "entropy").copy()
    change(model, view, temperature=4.0)
    assert sorted(call["scaled"] for call in core_calls) == [False, True]
    assert all(call["temperature"] == 4.0 for call in core_calls)
    # Higher temperature flattens the softmax: every scaled point gains entropy.
    assert (column(view.scaled_source, "entropy") > cold_entropy).all()
    assert view.marker_source.data["entropy"][0] == pytest.approx(
        column(view.scaled_source, "entropy")[COLLAPSE_D_VALUES.index(64)]
    )
    assert "temperature 4" in view.caption.html


def test_controls_the_curves_ignore_change_nothing(
    model: SimulationModel, view: CollapseView, core_calls: list[dict]
) -> None:
    marker = dict(view.marker_source.data)
    caption = view.caption.html
    change(model, view, n=128, seed=7, causal=True, view="raw")
    assert core_calls == []
    assert dict(view.marker_source.data) == marker
    assert view.caption.html == caption


def test_updates_reuse_the_same_figures_and_sources(
    model: SimulationModel, view: CollapseView
) -> None:
    figures = list(view.figures)
    sources = (view.scaled_source, view.unscaled_source, view.marker_source)
    change(model, view, temperature=0.5, d_k=16, scaled=False)
    assert view.figures == figures
    assert all(a is b for a, b in zip(figures, view.figures, strict=True))
    assert (view.scaled_source, view.unscaled_source, view.marker_source) == sources
    assert len(view.figures[0].renderers) == 8, "no glyphs added on update"


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


def test_marker_is_always_inside_the_fixed_y_ranges(
    model: SimulationModel, view: CollapseView
) -> None:
    for temperature in (0.05, 20.0):
        for scaled in (True, False):
            for d_k in (1, 1024):
                change(model, view, temperature=temperature, scaled=scaled, d_k=d_k)
                for fig, metric in zip(view.figures, METRICS, strict=True):
                    value = view.marker_source.data[metric.name][0]
                    assert fig.y_range.start < value < fig.y_range.end, (metric.name, value)


def test_panel_explains_the_curves(view: CollapseView) -> None:
    markdown = view.panel.objects[0].object
    assert lesson_text.COLLAPSE_CURVES in markdown
    assert "Dashed lines: uniform attention over 32 keys" in view.reference_note.html


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
