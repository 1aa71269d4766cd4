"""The byte-bounded cache behind the score matrices every session shares."""

from __future__ import annotations

import numpy as np
import pytest

from app.simulation import parts as derived
from app.simulation.cache import ByteBudgetCache, byte_budget_cache
from app.simulation.spec import D_K_GRID


def sized_cache(max_bytes: int) -> tuple[ByteBudgetCache, list[tuple]]:
    """A cache of arrays of ``size`` bytes, and the list of the calls that computed."""
    computed: list[tuple] = []

    @byte_budget_cache(max_bytes, size_of=lambda array: array.nbytes)
    def block(name: str, size: int) -> np.ndarray:
        computed.append((name, size))
        return np.zeros(size, dtype=np.uint8)

    return block, computed


def test_a_repeated_call_returns_the_same_result_without_computing() -> None:
    block, computed = sized_cache(1000)
    first = block("a", 100)
    assert block("a", 100) is first
    assert computed == [("a", 100)]
    info = block.cache_info()
    assert (info.hits, info.misses, info.entries, info.bytes) == (1, 1, 1, 100)


def test_the_least_recently_used_go_when_the_bytes_exceed_the_budget() -> None:
    block, computed = sized_cache(300)
    for name in "abc":
        block(name, 100)
    block("a", 100)  # now the most recently used: b is the oldest
    block("d", 100)
    assert block.cache_info().bytes == 300
    computed.clear()
    block("a", 100)
    block("c", 100)
    block("d", 100)
    assert computed == [], "a, c and d were kept"
    block("b", 100)
    assert computed == [("b", 100)], "b was evicted"


def test_one_large_result_evicts_many_small_ones_and_is_kept_even_over_budget() -> None:
    block, computed = sized_cache(250)
    for name in "abcd":
        block(name, 50)
    block("large", 200)
    assert block.cache_info().entries == 2  # large and the newest small one (d)
    block("huge", 1000)
    info = block.cache_info()
    assert (info.entries, info.bytes) == (1, 1000)
    computed.clear()
    block("huge", 1000)
    assert computed == []


def test_keyword_arguments_are_part_of_the_key_and_clear_forgets_everything() -> None:
    block, computed = sized_cache(1000)
    block("a", size=10)
    block("a", size=10)
    block("a", 10)
    assert computed == [("a", 10), ("a", 10)]  # positional and keyword calls differ
    block.cache_clear()
    assert block.cache_info().entries == 0
    block("a", size=10)
    assert len(computed) == 3


def test_a_budget_below_one_byte_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        ByteBudgetCache(lambda: b"", 0, len)


def test_every_d_k_position_at_the_default_n_stays_cached() -> None:
    """A class exploring the d_k slider at n = 32 computes each score matrix once."""
    derived.raw_scores.cache_clear()
    derived.score_images.cache_clear()
    for d_k in D_K_GRID:
        derived.score_images(32, d_k, 0, False)
    misses = derived.raw_scores.cache_info().misses, derived.score_images.cache_info().misses
    for d_k in D_K_GRID:
        derived.score_images(32, d_k, 0, False)
        derived.raw_scores(32, d_k, 0)
    assert (
        derived.raw_scores.cache_info().misses,
        derived.score_images.cache_info().misses,
    ) == misses
    assert derived.raw_scores.cache_info().bytes == len(D_K_GRID) * 32 * 32 * 8
