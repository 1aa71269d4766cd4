"""Tests of sdpa_core.dot_product_moments and of sampling with other variances and correlation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdpa_core
from sdpa_core import (
    dot_product_moments,
    dot_product_pool,
    dot_product_pool_ready,
    sample_dot_products,
    sample_qk,
)

PROPERTY = settings(max_examples=40, deadline=None)

SIGMA = st.floats(0.05, 20.0, allow_nan=False, allow_infinity=False)
RHO = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)

LAWS = [
    # (d_k, sigma_q, sigma_k, rho)
    (1, 1.0, 1.0, 0.5),
    (4, 2.0, 0.5, -0.9),
    (16, 0.3, 3.0, 0.9),
    (8, 1.5, 1.0, 1.0),
    (3, 1.0, 1.0, -1.0),
    (10, 0.7, 1.3, 0.0),
]


def isserlis_moments(d_k: int, sigma_q: float, sigma_k: float, rho: float) -> tuple[float, float]:
    """Mean and variance of q·k by a different route: Isserlis' theorem for one coordinate,
    E[q_i k_i] = ρσ_qσ_k and E[q_i² k_i²] = σ_q²σ_k²(1 + 2ρ²), then d_k independent terms."""
    first = rho * sigma_q * sigma_k
    second = sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2)
    return d_k * first, d_k * (second - first**2)


# --- dot_product_moments ------------------------------------------------------------------


def test_lesson_law_gives_zero_and_d_k() -> None:
    assert dot_product_moments(4) == (0.0, 4.0)
    assert dot_product_moments(1024) == (0.0, 1024.0)


@pytest.mark.parametrize("rho", [0.9, -0.9])
def test_closed_form_at_strong_correlation(rho: float) -> None:
    mean, variance = dot_product_moments(64, sigma_q=2.0, sigma_k=0.5, rho=rho)
    # σ_qσ_k = 1: mean ±0.9·64 = ±57.6, variance 64·(1 + 0.81) = 115.84.
    assert mean == pytest.approx(57.6 * np.sign(rho), rel=1e-12)
    assert variance == pytest.approx(115.84, rel=1e-12)


@PROPERTY
@given(st.integers(1, 4096), SIGMA, SIGMA, RHO)
def test_matches_isserlis(d_k: int, sigma_q: float, sigma_k: float, rho: float) -> None:
    mean, variance = dot_product_moments(d_k, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    expected_mean, expected_variance = isserlis_moments(d_k, sigma_q, sigma_k, rho)
    assert mean == pytest.approx(expected_mean, rel=1e-12, abs=1e-12)
    assert variance == pytest.approx(expected_variance, rel=1e-12)
    # Correlation only ever widens the spread; the sign of ρ never matters to it.
    assert variance >= d_k * (sigma_q * sigma_k) ** 2 * (1 - 1e-12)
    assert variance == dot_product_moments(d_k, sigma_q=sigma_q, sigma_k=sigma_k, rho=-rho)[1]


@pytest.mark.parametrize(("d_k", "sigma_q", "sigma_k", "rho"), LAWS)
def test_moments_match_200k_samples(d_k: int, sigma_q: float, sigma_k: float, rho: float) -> None:
    n = 200_000
    s = sample_dot_products(
        d_k, n, np.random.default_rng(d_k), sigma_q=sigma_q, sigma_k=sigma_k, rho=rho
    )
    mean, variance = dot_product_moments(d_k, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    centred = s - s.mean()
    sample_variance = float((centred**2).mean())
    # Standard errors of the sample mean and variance, from the sample's own moments.
    mean_error = math.sqrt(sample_variance / n)
    variance_error = math.sqrt(float((centred**4).mean() - sample_variance**2) / n)
    assert abs(s.mean() - mean) < 5 * mean_error
    assert abs(sample_variance - variance) < 5 * variance_error


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 0}, "d_k must be ≥ 1: got 0"),
        ({"d_k": 2.0}, "d_k must be an integer ≥ 1: got 2.0"),
        ({"d_k": 4, "sigma_q": 0.0}, "sigma_q must be a positive finite number: got 0.0"),
        ({"d_k": 4, "sigma_q": -1}, "sigma_q must be a positive finite number: got -1"),
        ({"d_k": 4, "sigma_k": math.inf}, "sigma_k must be a positive finite number: got inf"),
        ({"d_k": 4, "sigma_k": math.nan}, "sigma_k must be a positive finite number: got nan"),
        ({"d_k": 4, "sigma_k": "2"}, "sigma_k must be a positive finite number: got '2'"),
        ({"d_k": 4, "sigma_q": True}, "sigma_q must be a positive finite number: got True"),
        ({"d_k": 4, "rho": 1.5}, r"rho must be a correlation in \[-1, 1\]: got 1.5"),
        ({"d_k": 4, "rho": -1.0001}, r"rho must be a correlation in \[-1, 1\]: got -1.0001"),
        ({"d_k": 4, "rho": math.nan}, "rho must be a finite number: got nan"),
        ({"d_k": 4, "rho": None}, "rho must be a finite number: got None"),
    ],
)
def test_invalid_arguments(kwargs: dict, message: str) -> None:
    d_k = kwargs.pop("d_k")
    with pytest.raises(ValueError, match=message):
        dot_product_moments(d_k, **kwargs)
    # The samplers check the same parameters with the same messages.
    with pytest.raises(ValueError, match=message):
        sample_qk(4, d_k, **kwargs)
    with pytest.raises(ValueError, match=message):
        dot_product_pool(d_k, **kwargs)
    with pytest.raises(ValueError, match=message):
        sample_dot_products(d_k, 3, np.random.default_rng(0), **kwargs)


# --- sample_qk with σ_q, σ_k and ρ --------------------------------------------------------


@pytest.mark.parametrize(
    ("sigma_q", "sigma_k", "rho"), [(2.0, 0.5, 0.0), (1.0, 1.0, 0.6), (0.5, 3.0, -0.9)]
)
def test_sampled_q_k_have_the_requested_law(sigma_q: float, sigma_k: float, rho: float) -> None:
    q, k = sample_qk(512, 512, seed=2, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    # 262,144 pairs: standard errors ≈ 0.14 % of σ for the stds and ≤ 0.2 % for ρ.
    assert q.std() == pytest.approx(sigma_q, rel=0.01)
    assert k.std() == pytest.approx(sigma_k, rel=0.01)
    assert np.corrcoef(q.ravel(), k.ravel())[0, 1] == pytest.approx(rho, abs=0.01)
    assert abs(q.mean()) < 0.01 * sigma_q
    assert abs(k.mean()) < 0.01 * sigma_k


def test_lesson_law_gives_exactly_the_existing_samples() -> None:
    q, k = sample_qk(100, 70, seed=0)
    for kwargs in ({}, {"sigma_q": 1.0, "sigma_k": 1.0, "rho": 0.0}, {"sigma_q": 1, "rho": 0}):
        q_again, k_again = sample_qk(100, 70, seed=0, **kwargs)
        np.testing.assert_array_equal(q_again, q)
        np.testing.assert_array_equal(k_again, k)
        # Still the shared pools' views, not copies.
        assert np.shares_memory(q_again, q)
        assert np.shares_memory(k_again, k)


def test_lesson_numbers_unchanged_with_explicit_lesson_law() -> None:
    rng = np.random.default_rng(0)
    s4 = sample_dot_products(4, 10_000, rng, sigma_q=1.0, sigma_k=1.0, rho=0.0)
    s1024 = sample_dot_products(1024, 10_000, rng, sigma_q=1.0, sigma_k=1.0, rho=0.0)
    assert [round(float(s4.std()), 1), round(float(s1024.std()), 1)] == [2.0, 32.0]
    pool = dot_product_pool(4, seed=0, sigma_q=1.0, sigma_k=1.0, rho=0.0)
    assert np.shares_memory(pool, dot_product_pool(4, seed=0))
    assert [round(float(dot_product_pool(d, seed=0, rho=0.0).std()), 1) for d in (4, 1024)] == [
        2.0,
        32.0,
    ]


@PROPERTY
@given(st.integers(1, 150), st.integers(1, 150), SIGMA, SIGMA, RHO, st.integers(0, 3))
def test_q_k_are_a_rescale_of_the_pools(
    n: int, d_k: int, sigma_q: float, sigma_k: float, rho: float, seed: int
) -> None:
    q, k = sample_qk(n, d_k, seed)
    q2, k2 = sample_qk(n, d_k, seed, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    assert q2.shape == k2.shape == (n, d_k)
    assert q2.dtype == k2.dtype == np.float64
    assert not q2.flags.writeable
    assert not k2.flags.writeable
    np.testing.assert_allclose(q2, sigma_q * q, rtol=1e-15, atol=0)
    expected_k = sigma_k * (rho * q + math.sqrt(1 - rho**2) * k)
    np.testing.assert_allclose(k2, expected_k, rtol=1e-13, atol=1e-13 * sigma_k)
    # Nested like the pools: a smaller size is the top-left corner of a bigger one.
    q3, k3 = sample_qk(n + 7, d_k + 3, seed, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    np.testing.assert_array_equal(q3[:n, :d_k], q2)
    np.testing.assert_array_equal(k3[:n, :d_k], k2)


def test_full_correlation_makes_k_proportional_to_q() -> None:
    q, k = sample_qk(20, 30, seed=4, sigma_q=2.0, sigma_k=3.0, rho=1.0)
    np.testing.assert_allclose(k, 1.5 * q, rtol=1e-15)
    q, k = sample_qk(20, 30, seed=4, sigma_q=2.0, sigma_k=3.0, rho=-1.0)
    np.testing.assert_allclose(k, -1.5 * q, rtol=1e-15)


# --- sample_dot_products and dot_product_pool with σ_q, σ_k and ρ -------------------------


def test_sample_dot_products_maps_the_same_draw() -> None:
    q, k = np.random.default_rng(9).normal(size=(2, 500, 12))
    s = sample_dot_products(12, 500, np.random.default_rng(9), sigma_q=2.0, sigma_k=0.5, rho=0.3)
    expected = ((2.0 * q) * (0.5 * (0.3 * q + math.sqrt(1 - 0.09) * k))).sum(axis=1)
    np.testing.assert_allclose(s, expected, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def lesson_draw() -> tuple[np.ndarray, np.ndarray]:
    """The draw the pool is documented to be built from, for seed 0."""
    q, k = np.random.default_rng(0).normal(size=(2, 10_000, 1024))
    return q, k


POOL_LAWS = [(2.0, 0.5, 0.0), (1.0, 1.0, 0.7), (0.5, 3.0, -0.9), (1.0, 2.0, 1.0)]


@pytest.mark.parametrize("d_k", [1, 33, 1024])
@pytest.mark.parametrize(("sigma_q", "sigma_k", "rho"), POOL_LAWS)
def test_pool_is_the_mapped_prefix_dot_product(
    lesson_draw: tuple[np.ndarray, np.ndarray], d_k: int, sigma_q: float, sigma_k: float, rho: float
) -> None:
    q, k = (array[:, :d_k] for array in lesson_draw)
    q_dot_q, q_dot_k = (q * q).sum(axis=1), (q * k).sum(axis=1)
    c = math.sqrt(1 - rho**2)
    expected = sigma_q * sigma_k * (rho * q_dot_q + c * q_dot_k)
    pool = dot_product_pool(d_k, seed=0, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    assert pool.shape == (10_000,)
    assert pool.dtype == np.float32
    assert not pool.flags.writeable
    # Both tables and the result are rounded to float32 once each.
    bound = 2.0**-23 * (
        sigma_q * sigma_k * (abs(rho) * q_dot_q + c * np.abs(q_dot_k)) + np.abs(expected)
    )
    assert (np.abs(pool.astype(np.float64) - expected) <= bound).all()


def test_pool_at_1024_equals_sample_dot_products() -> None:
    law = {"sigma_q": 1.5, "sigma_k": 0.8, "rho": 0.4}
    pool = dot_product_pool(1024, seed=0, **law).astype(np.float64)
    reference = sample_dot_products(1024, 10_000, np.random.default_rng(0), **law)
    np.testing.assert_allclose(pool, reference, rtol=0, atol=1e-4 * np.abs(reference).max())


@pytest.mark.parametrize(("sigma_q", "sigma_k", "rho"), POOL_LAWS)
def test_pool_moments_match_theory(sigma_q: float, sigma_k: float, rho: float) -> None:
    d_k = 64
    values = dot_product_pool(d_k, seed=0, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    values = values.astype(np.float64)
    mean, variance = dot_product_moments(d_k, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho)
    # 10,000 pairs: the mean within 5 standard errors, the std within 5 %.
    assert abs(values.mean() - mean) < 5 * math.sqrt(variance / values.size)
    assert values.std() == pytest.approx(math.sqrt(variance), rel=0.05)


def test_pool_rescale_is_a_lookup_in_cached_tables() -> None:
    seed = 7301  # a seed no other test draws
    assert not dot_product_pool_ready(seed, rho=0.5)
    dot_product_pool(8, seed=seed, rho=0.5)
    # Any other d_k, σ or ρ of the same seed is a lookup in the tables just built.
    assert dot_product_pool_ready(seed, rho=-0.5)
    assert dot_product_pool_ready(seed)


def test_an_uncorrelated_pool_never_builds_the_query_norm_table() -> None:
    seed = 7302
    # ρ = 0 is a rescale of the q·k row: the q·q table is never needed.
    np.testing.assert_array_equal(
        dot_product_pool(8, seed=seed, sigma_q=2.0, sigma_k=0.25),
        (dot_product_pool(8, seed=seed).astype(np.float64) * 0.5).astype(np.float32),
    )
    assert dot_product_pool_ready(seed)
    assert not dot_product_pool_ready(seed, rho=0.5)


# --- QK-norm ---------------------------------------------------------------------------------


def test_qk_normalise_gives_every_row_length_root_d() -> None:
    rows = np.random.default_rng(2).normal(scale=3.0, size=(5, 7, 16))
    normed = sdpa_core.qk_normalise(rows)
    np.testing.assert_allclose(np.linalg.norm(normed, axis=-1), 4.0)
    # The direction is kept: each row is a positive multiple of the original.
    ratio = normed / rows
    np.testing.assert_allclose(ratio, ratio[..., :1] * np.ones_like(ratio))
    assert (ratio > 0).all()


@pytest.mark.parametrize(
    "rows", [np.zeros((2, 3)), np.array([[1.0, np.nan]]), np.empty((2, 0)), 3.0]
)
def test_qk_normalise_refuses_rows_without_a_direction(rows) -> None:
    with pytest.raises(ValueError, match="rows"):
        sdpa_core.qk_normalise(rows)


@pytest.mark.parametrize("rho", [0.0, 0.5, -0.7])
def test_the_normalised_pool_replays_the_lessons_draw(rho: float) -> None:
    d_k, pairs = 50, 200
    q, k = np.random.default_rng(0).normal(size=(2, 10_000, 1024))
    q, k = q[:pairs, :d_k], k[:pairs, :d_k]
    for sigma_q, sigma_k in ((1.0, 1.0), (3.0, 0.5)):
        pool = dot_product_pool(
            d_k, seed=0, sigma_q=sigma_q, sigma_k=sigma_k, rho=rho, qk_norm=True
        )
        qp = sigma_q * q
        kp = sigma_k * (rho * q + math.sqrt(1 - rho * rho) * k)
        expected = (sdpa_core.qk_normalise(qp) * sdpa_core.qk_normalise(kp)).sum(axis=1)
        np.testing.assert_allclose(pool[:pairs], expected, rtol=2e-4, atol=2e-4)
        assert not pool.flags.writeable
    with pytest.raises(ValueError, match="qk_norm"):
        dot_product_pool(d_k, seed=0, qk_norm="yes")
