"""Unit and property tests of sdpa_core.sampling: the lesson's draw and the app's pools."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_core import dot_product_pool, dot_product_pool_ready, sample_dot_products, sample_qk
from sdpa_core import sampling as sampling_module

PROPERTY = settings(max_examples=40, deadline=None)

SIZE = st.integers(1, 300)


def lesson_line(d: int, s: np.ndarray) -> str:
    """The lesson's printed line: d, then the raw and scaled std rounded to one decimal."""
    return f"{d} {round(float(s.std()), 1)} {round(float((s / np.sqrt(d)).std()), 1)}"


def assert_within_float32(values: np.ndarray, reference: np.ndarray) -> None:
    """Every value is within one float32 ulp of the float64 reference."""
    ulp = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    assert (np.abs(values.astype(np.float64) - reference) <= ulp).all()


# --- sample_dot_products: the lesson's experiment ----------------------------------------


def test_lesson_numbers() -> None:
    rng = np.random.default_rng(0)
    lines = [lesson_line(d, sample_dot_products(d, 10_000, rng)) for d in (4, 1024)]
    assert lines == ["4 2.0 1.0", "1024 32.0 1.0"]


def test_is_the_lessons_draw_draw_for_draw() -> None:
    lesson_rng, our_rng = np.random.default_rng(0), np.random.default_rng(0)
    for d in (4, 64):
        q, k = lesson_rng.normal(size=(2, 10_000, d))
        np.testing.assert_array_equal(sample_dot_products(d, 10_000, our_rng), (q * k).sum(axis=1))


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_dot_products_have_variance_d_k(d_k: int) -> None:
    s = sample_dot_products(d_k, 20_000, np.random.default_rng(d_k))
    assert s.shape == (20_000,)
    assert s.dtype == np.float64
    # The sample std of 20,000 draws is within ~1 % of √d_k; 5 % leaves ample room.
    assert abs(s.std() / math.sqrt(d_k) - 1) < 0.05
    assert abs(s.mean()) < 0.05 * math.sqrt(d_k)


def test_default_generator_and_pair_count() -> None:
    s = sample_dot_products(8, 3)
    assert s.shape == (3,)
    assert np.isfinite(s).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0,), "d_k must be ≥ 1: got 0"),
        ((-3,), "d_k must be ≥ 1: got -3"),
        ((2.5,), "d_k must be an integer ≥ 1: got 2.5"),
        ((True,), "d_k must be an integer ≥ 1: got True"),
        (("64",), "d_k must be an integer ≥ 1: got '64'"),
        ((4, 0), "n_pairs must be ≥ 1: got 0"),
        ((4, 1.0), "n_pairs must be an integer ≥ 1: got 1.0"),
    ],
)
def test_sample_dot_products_errors(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_dot_products(*args)


# --- sample_qk: nested, deterministic, shared ------------------------------------------


@PROPERTY
@given(SIZE, SIZE, SIZE, SIZE, st.integers(0, 2**32))
def test_nested_sampling(n1: int, d1: int, n2: int, d2: int, seed: int) -> None:
    q1, k1 = sample_qk(n1, d1, seed)
    q2, k2 = sample_qk(n2, d2, seed)
    assert q1.shape == k1.shape == (n1, d1)
    assert q2.shape == k2.shape == (n2, d2)
    n, d = min(n1, n2), min(d1, d2)
    # Moving either slider keeps every token and dimension already on screen.
    np.testing.assert_array_equal(q1[:n, :d], q2[:n, :d])
    np.testing.assert_array_equal(k1[:n, :d], k2[:n, :d])


def test_nested_sampling_does_not_depend_on_call_history() -> None:
    small_first = sample_qk(70, 5, seed=11)[0].copy()
    big = sample_qk(500, 300, seed=11)[0].copy()
    # Evict seed 11 from the bounded cache, then ask for a size in between.
    for other in range(100, 100 + sampling_module.QK_POOL_SEEDS + 1):
        sample_qk(1, 1, seed=other)
    middle = sample_qk(200, 100, seed=11)[0]
    np.testing.assert_array_equal(middle[:70, :5], small_first)
    np.testing.assert_array_equal(middle, big[:200, :100])


def test_entries_come_from_the_documented_block_generators() -> None:
    q, k = sample_qk(200, 200, seed=3)
    block = sampling_module.QK_BLOCK
    for matrix, array in ((0, q), (1, k)):
        for token_block, dim_block in ((0, 0), (1, 2), (3, 1)):
            expected = np.random.default_rng([3, matrix, token_block, dim_block]).standard_normal(
                (block, block)
            )
            rows = slice(token_block * block, (token_block + 1) * block)
            cols = slice(dim_block * block, (dim_block + 1) * block)
            np.testing.assert_array_equal(array[rows, cols], expected[: 200 - rows.start, :])


def test_same_seed_same_values_different_seeds_differ() -> None:
    q0, k0 = sample_qk(32, 16, seed=0)
    q0_again, k0_again = sample_qk(32, 16, seed=0)
    np.testing.assert_array_equal(q0, q0_again)
    np.testing.assert_array_equal(k0, k0_again)
    q1, k1 = sample_qk(32, 16, seed=1)
    assert not np.array_equal(q0, q1)
    assert not np.array_equal(k0, k1)
    # Q and K are independent draws, not the same matrix.
    assert not np.array_equal(q0, k0)
    assert np.abs(np.corrcoef(q0.ravel(), q1.ravel())[0, 1]) < 0.2


def test_read_only_views_of_a_shared_pool() -> None:
    q, k = sample_qk(10, 10, seed=0)
    assert not q.flags.writeable
    assert not k.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        q[0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        k[...] = 0.0
    q_again, _ = sample_qk(20, 5, seed=0)
    assert np.shares_memory(q, q_again)


def test_full_size_1024_and_beyond() -> None:
    q, k = sample_qk(1024, 1024, seed=0)
    assert q.shape == k.shape == (1024, 1024)
    assert q.dtype == k.dtype == np.float64
    # A million standard normals: mean within 0.005 of 0, std within 0.005 of 1.
    for array in (q, k):
        assert abs(array.mean()) < 0.005
        assert abs(array.std() - 1) < 0.005
    q_big, k_big = sample_qk(1500, 1100, seed=0)
    assert q_big.shape == (1500, 1100)
    np.testing.assert_array_equal(q_big[:1024, :1024], q)
    np.testing.assert_array_equal(k_big[:1024, :1024], k)


def test_raw_scores_have_variance_d_k() -> None:
    q, k = sample_qk(256, 256, seed=5)
    scores = q @ k.T
    off_diagonal = scores[~np.eye(256, dtype=bool)]
    assert abs(off_diagonal.std() / 16 - 1) < 0.05


def test_cache_is_bounded() -> None:
    for seed in range(200, 200 + 2 * sampling_module.QK_POOL_SEEDS):
        sample_qk(4, 4, seed=seed)
    pools = sampling_module._QK_POOLS._pools
    assert len(pools) == sampling_module.QK_POOL_SEEDS
    # The most recently used seeds survive.
    assert max(pools) == 200 + 2 * sampling_module.QK_POOL_SEEDS - 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 4), "n must be ≥ 1: got 0"),
        ((4, 0), "d_k must be ≥ 1: got 0"),
        ((-1, 4), "n must be ≥ 1: got -1"),
        ((4.0, 4), "n must be an integer ≥ 1: got 4.0"),
        ((4, "8"), "d_k must be an integer ≥ 1: got '8'"),
        ((4, 4, -1), "seed must be ≥ 0: got -1"),
        ((4, 4, 1.5), "seed must be an integer ≥ 0: got 1.5"),
        ((4, 4, None), "seed must be an integer ≥ 0: got None"),
    ],
)
def test_sample_qk_errors(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_qk(*args)


# --- dot_product_pool: the app's histogram data ------------------------------------------


@pytest.fixture(scope="module")
def lesson_draw() -> tuple[np.ndarray, np.ndarray]:
    """The draw the pool is documented to be built from, for seed 0."""
    q, k = np.random.default_rng(0).normal(size=(2, 10_000, 1024))
    return q, k


def test_pool_gives_the_lesson_numbers() -> None:
    lines = [lesson_line(d, dot_product_pool(d, seed=0).astype(np.float64)) for d in (4, 1024)]
    assert lines == ["4 2.0 1.0", "1024 32.0 1.0"]


@pytest.mark.parametrize("seed", [0, 1])
def test_pool_at_1024_equals_sample_dot_products(seed: int) -> None:
    pool = dot_product_pool(1024, seed=seed)
    reference = sample_dot_products(1024, 10_000, np.random.default_rng(seed))
    assert pool.shape == (10_000,)
    assert pool.dtype == np.float32
    assert_within_float32(pool, reference)


@pytest.mark.parametrize("d_k", [1, 2, 7, 64, 513, 1024])
def test_pool_is_the_prefix_dot_product(
    lesson_draw: tuple[np.ndarray, np.ndarray], d_k: int
) -> None:
    q, k = lesson_draw
    assert_within_float32(dot_product_pool(d_k, seed=0), (q[:, :d_k] * k[:, :d_k]).sum(axis=1))


def test_pool_is_nested_across_d_k(lesson_draw: tuple[np.ndarray, np.ndarray]) -> None:
    q, k = lesson_draw
    step = dot_product_pool(33, seed=0).astype(np.float64) - dot_product_pool(32, seed=0)
    # Going from d_k = 32 to 33 adds exactly the 33rd coordinate's product to every pair.
    np.testing.assert_allclose(step, q[:, 32] * k[:, 32], rtol=0, atol=2e-5)


def test_pool_is_read_only_and_shared() -> None:
    pool = dot_product_pool(16, seed=0)
    assert not pool.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        pool[0] = 0.0
    assert np.shares_memory(pool, dot_product_pool(16, seed=0))
    # Every d_k is a row of one cached table: a lookup, never a resample.
    assert dot_product_pool(17, seed=0).base is pool.base


def test_pool_ready_says_whether_a_seed_needs_its_tables_built() -> None:
    # Seeds no other test draws: each table takes ~0.5 s to build, the two most recent kept.
    seed, other, third = 4101, 4102, 4103
    assert not dot_product_pool_ready(seed)
    dot_product_pool(8, seed=seed)
    assert dot_product_pool_ready(seed)
    # A correlation reads the q·q table too, QK-norm the k·k table as well.
    assert not dot_product_pool_ready(seed, rho=0.5)
    assert not dot_product_pool_ready(seed, qk_norm=True)
    dot_product_pool(8, seed=seed, rho=0.5)
    assert dot_product_pool_ready(seed, rho=0.5)
    assert not dot_product_pool_ready(seed, qk_norm=True)
    dot_product_pool(8, seed=seed, qk_norm=True)
    assert dot_product_pool_ready(seed, qk_norm=True)
    # Two newer seeds push it out of the q·k tables kept.
    dot_product_pool(8, seed=other)
    dot_product_pool(8, seed=third)
    assert not dot_product_pool_ready(seed)
    assert dot_product_pool_ready(other) and dot_product_pool_ready(third)


@pytest.mark.parametrize("seed", [-1, "0", 1.5, None, True])
def test_pool_ready_is_false_for_what_the_pool_refuses(seed: object) -> None:
    assert dot_product_pool_ready(seed) is False  # type: ignore[arg-type]


def test_pool_seeds_differ() -> None:
    assert not np.array_equal(dot_product_pool(8, seed=0), dot_product_pool(8, seed=1))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0,), "d_k must be ≥ 1: got 0"),
        ((1025,), "d_k must be ≤ 1024 for the dot-product pool: got 1025"),
        ((3.0,), "d_k must be an integer ≥ 1: got 3.0"),
        ((4, -2), "seed must be ≥ 0: got -2"),
        ((4, "0"), "seed must be an integer ≥ 0: got '0'"),
    ],
)
def test_dot_product_pool_errors(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dot_product_pool(*args)


@settings(max_examples=25, deadline=None)
@given(
    d_k=st.sampled_from([1, 2, 3, 1024]),
    rho=st.floats(-0.95, 0.95, allow_nan=False),
)
def test_qk_norm_pool_is_finite_and_bounded_by_d_k(d_k: int, rho: float) -> None:
    """Under QK-norm every pooled q̂·k̂ is a number within [-d_k, d_k] (Cauchy–Schwarz), for
    any correlation: at d_k = 1 the rounded |k'|² of a nearly cancelling pair once came out
    below zero and gave a NaN, which the page's histogram then refused."""
    values = dot_product_pool(d_k, seed=0, rho=rho, qk_norm=True)
    assert np.isfinite(values).all()
    assert np.abs(values).max() <= d_k
