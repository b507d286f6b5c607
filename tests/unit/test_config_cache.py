"""TTLCache: single-flight, refresh-ahead, bounded staleness, invalidation wins over in-flight loads."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.partitioner import DefaultPartitioner

from app.caches import TTLCache
from app.kafka.partitioner import KeyPartitioner


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_concurrent_misses_share_one_load() -> None:
    cache: TTLCache[str, str] = TTLCache(1.0)
    calls = 0
    gate = asyncio.Event()

    async def load() -> tuple[str, str]:
        nonlocal calls
        calls += 1
        await gate.wait()
        return "org", "v"

    waiters = [asyncio.create_task(cache.get_or_load("k", load)) for _ in range(20)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*waiters) == ["v"] * 20
    assert calls == 1
    assert cache.get("k") == "v"


async def test_a_failed_load_reaches_every_waiter_and_is_not_cached() -> None:
    cache: TTLCache[str, str] = TTLCache(1.0)
    calls = 0

    async def load() -> tuple[str, str]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        raise LookupError("revoked")

    results = await asyncio.gather(*(cache.get_or_load("k", load) for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, LookupError) for r in results) and calls == 1
    assert cache.get("k") is None
    with pytest.raises(LookupError):
        await cache.get_or_load("k", load)
    assert calls == 2


async def test_refresh_ahead_serves_the_cached_value_while_one_reload_runs() -> None:
    clock = Clock()
    cache: TTLCache[str, int] = TTLCache(1.0, clock=clock)
    version = 1
    calls = 0
    gate = asyncio.Event()

    async def load() -> tuple[str, int]:
        nonlocal calls
        calls += 1
        if calls > 1:
            await gate.wait()
        return "org", version

    assert await cache.get_or_load("k", load) == 1
    clock.now += 0.6  # past refresh-ahead, before expiry
    version = 2
    assert [await cache.get_or_load("k", load) for _ in range(10)] == [1] * 10
    await asyncio.sleep(0)
    assert calls == 2  # one background reload for ten reads
    gate.set()
    await asyncio.sleep(0.01)
    assert cache.get("k") == 2
    # staleness is bounded by the TTL from the start of the load that produced the value
    clock.now += 1.0
    assert cache.get("k") is None


async def test_invalidation_drops_entries_and_in_flight_loads_are_not_cached() -> None:
    cache: TTLCache[str, int] = TTLCache(1.0)
    gate = asyncio.Event()

    async def slow() -> tuple[str, int]:
        await gate.wait()
        return "org", 1

    cache.put("other", "org", 5)
    pending = asyncio.create_task(cache.get_or_load("k", slow))
    await asyncio.sleep(0)
    cache.invalidate_org("org")
    assert cache.get("other") is None

    async def fresh() -> tuple[str, int]:
        return "org", 2

    assert await cache.get_or_load("k", fresh) == 2  # does not join the load begun before the change
    gate.set()
    assert await pending == 1  # that request began before the change
    assert cache.get("k") == 2  # ... and its result was not cached over the fresh one


async def test_a_failed_refresh_drops_the_entry() -> None:
    clock = Clock()
    cache: TTLCache[str, int] = TTLCache(1.0, clock=clock)
    fail = False

    async def load() -> tuple[str, int]:
        if fail:
            raise LookupError("gone")
        return "org", 1

    assert await cache.get_or_load("k", load) == 1
    clock.now += 0.6
    fail = True
    assert cache.get("k") == 1  # starts the refresh
    await asyncio.sleep(0.01)
    assert cache.get("k") is None


def test_key_partitioner_agrees_with_the_default_partitioner() -> None:
    memo, default = KeyPartitioner(size=8), DefaultPartitioner()
    for i in range(100):
        key = f"org/top/ACTUAL/site-{i % 13}".encode()
        for n in (1, 4, 12):
            assert memo(key, list(range(n)), list(range(n))) == default(key, list(range(n)), list(range(n)))
    assert memo(None, [0, 1], [0, 1]) in (0, 1)
