"""A least-recently-used cache bounded by the bytes it keeps, for data all sessions share.

``functools.lru_cache`` bounds the number of entries, but the app's score matrices range
from 8 KiB (n = 32) to 8 MiB (n = 1024): a count small enough for the large ones makes a
class exploring small ones recompute what it saw a minute ago. Here the bound is memory.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Result = TypeVar("Result")


@dataclass(frozen=True)
class CacheInfo:
    """Hits and misses since the last clear, and what the cache holds now."""

    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int


class ByteBudgetCache(Generic[Result]):
    """Calls ``function`` once per argument set and keeps results, newest last, until their
    sizes (``size_of`` of each) add up to more than ``max_bytes``; then the least recently
    used go. The newest result is always kept, even alone over the budget.

    Results are returned as they are, to every caller: they must be read-only. Safe to call
    from several threads (two threads missing the same key at once may both compute it).
    """

    def __init__(
        self, function: Callable[..., Result], max_bytes: int, size_of: Callable[[Result], int]
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be ≥ 1: got {max_bytes}")
        self._function = function
        self._max_bytes = max_bytes
        self._size_of = size_of
        self._entries: OrderedDict[Hashable, tuple[Result, int]] = OrderedDict()
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._lock = threading.Lock()
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Result:
        """The cached result for these arguments, computed on the first call."""
        key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return entry[0]
            self._misses += 1
        result = self._function(*args, **kwargs)
        size = int(self._size_of(result))
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._entries[key] = (result, size)
            self._bytes += size
            while self._bytes > self._max_bytes and len(self._entries) > 1:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return result

    def cache_clear(self) -> None:
        """Forget every result and reset the counts."""
        with self._lock:
            self._entries.clear()
            self._bytes = self._hits = self._misses = 0

    def cache_info(self) -> CacheInfo:
        """Hits, misses, entries and bytes held now."""
        with self._lock:
            return CacheInfo(
                self._hits, self._misses, len(self._entries), self._bytes, self._max_bytes
            )


def byte_budget_cache(
    max_bytes: int, size_of: Callable[[Result], int]
) -> Callable[[Callable[..., Result]], ByteBudgetCache[Result]]:
    """Decorator: cache a function's read-only results within ``max_bytes`` (see
    :class:`ByteBudgetCache`)."""

    def decorate(function: Callable[..., Result]) -> ByteBudgetCache[Result]:
        return ByteBudgetCache(function, max_bytes, size_of)

    return decorate
