"""A memo for the hot paths: a plain ``dict`` (its ``get`` stays the C one) that empties itself when
it would grow past its bound, so what it remembers stays bounded without an LRU's bookkeeping on
every read. For values recomputed cheaply enough that losing them all at once costs little: encoded
span fields, partitions of keys."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedMemo(dict[K, V]):
    """At most ``maxsize`` entries: :meth:`remember` into a full memo empties it first."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def remember(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` and return it."""
        if len(self) >= self.maxsize:
            self.clear()
        self[key] = value
        return value
