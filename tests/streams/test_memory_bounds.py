"""Every in-process cache of the worker and the API holds at most its bound under more keys than
the bound (README "Memory"), and what is evicted is never lost: a state is read from the table
again, a timer or an idempotency expiry beyond the in-memory window is found by a scan of it, a
rate-limit bucket evicted gives back at most one burst."""

from __future__ import annotations

import random

from app.caches import CountingLRU, TTLCache
from app.domain.events.control import ControlState
from app.domain.pipeline import StoredControl
from app.domain.shared.rate_limit import RateLimiter
from app.observability.metrics import exposition, register_cache
from streams.control_caches import DueIndex, StateCache, TimeWindow
from streams.idempotency import Expiry
from tables.codecs import PROGRESS_KEY, StoredKey, dump_control, dump_key

KEYS = 5_000


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _stored(due_ms: int | None, offset: int = 1) -> StoredControl:
    state = ControlState(policy_type="SET", episode_open=due_ms is not None, last_notify_ms=0)
    return StoredControl(state, offset, 1, due_ms)


def test_counting_lru_keeps_its_bound_and_counts_evictions() -> None:
    cache: CountingLRU[int, int] = CountingLRU(100)
    for i in range(KEYS):
        cache[i] = i
        _ = cache.get(0)  # read: the most recently used, never evicted
        assert len(cache) <= 100
    assert cache.evictions == KEYS - 100
    assert 0 in cache and KEYS - 1 in cache and 1 not in cache
    cache.clear()  # a rebalance or an invalidation: not an eviction
    assert len(cache) == 0 and cache.evictions == KEYS - 100
    nothing: CountingLRU[int, int] = CountingLRU(0)
    nothing[1] = 1
    assert len(nothing) == 0


def test_state_cache_is_bounded_and_an_evicted_state_is_read_from_the_table_again() -> None:
    cache = StateCache(size=50)
    cache.check(1)
    table = {}
    for i in range(KEYS):
        key = f"org/wtp/ACTUAL/st-{i}".encode()
        stored = _stored(None, offset=i)
        table[key] = dump_control(stored)
        cache.put(key, stored)
        cache.views[key] = (stored.state, {})
        assert len(cache.items) <= 50 and len(cache.views) <= 50
    assert cache.items.evictions == KEYS - 50
    # what the agent reads for an evicted key is the table's (streams/control_batch.py ControlStage._state_of)
    assert cache.items.get(b"org/wtp/ACTUAL/st-0") is None and b"org/wtp/ACTUAL/st-0" in table
    cache.check(2)  # a rebalance empties it
    assert len(cache.items) == 0 and len(cache.views) == 0


def test_ttl_cache_is_bounded() -> None:
    clock = Clock()
    cache: TTLCache[int, str] = TTLCache(60.0, clock=clock, maxsize=100)
    for i in range(KEYS):
        cache.put(i, "org", str(i))
        assert len(cache) <= 100
    assert cache.evictions == KEYS - 100 and cache.get(KEYS - 1) == str(KEYS - 1) and cache.get(0) is None


def test_rate_limiter_is_bounded_and_an_evicted_key_gains_at_most_one_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(1.0, 3, clock=clock, max_keys=100)
    assert [limiter.take("caller") for _ in range(4)][-1] > 0  # burst of 3 spent, the 4th waits
    for i in range(KEYS):
        limiter.take(i)
        assert len(limiter) <= 100
    assert limiter.evictions == KEYS - 100 + 1  # "caller" too: it was the least recently used
    # evicted: it starts from a full bucket again, one burst and no more
    assert [limiter.take("caller") for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]


def test_the_cache_metrics_show_entries_bound_and_evictions() -> None:
    cache: CountingLRU[int, int] = CountingLRU(3)
    for i in range(10):
        cache[i] = i
    register_cache("test_memory_bounds", cache)
    text = exposition().decode()
    assert 'tocsin_cache_entries{cache="test_memory_bounds"} 3.0' in text
    assert 'tocsin_cache_max_entries{cache="test_memory_bounds"} 3.0' in text
    assert 'tocsin_cache_evictions_total{cache="test_memory_bounds"} 7.0' in text


def test_time_window_keeps_the_earliest_and_is_complete_below_its_horizon() -> None:
    window = TimeWindow(100)
    times = {f"k{i}".encode(): random.Random(i).randrange(1_000_000) for i in range(KEYS)}
    for key, at in times.items():
        window.set(key, at)
        assert len(window) <= 100
    earliest = sorted(times.items(), key=lambda kv: (kv[1], kv[0]))[:100]
    assert all(k in window for k, _ in earliest[: len(window)])
    assert all(at < window.horizon for at in window.times.values())
    below = {k for k, at in times.items() if at < window.horizon}
    assert below <= set(window.times)  # complete below the horizon


def test_every_timer_fires_at_its_time_with_a_due_window_far_smaller_than_the_states() -> None:
    """5,000 states with auto-resolve times, a window of 50: each is ticked once, at its time,
    never before; the ticks beyond the window come from scans of the table."""
    rng = random.Random(7)
    table: dict[bytes, bytes] = {PROGRESS_KEY: b"12"}
    due: dict[bytes, int] = {}
    index = DueIndex(size=50, clock=Clock())
    for i in range(KEYS):
        key = f"org/wtp/ACTUAL/st-{i}".encode()
        due[key] = 1_000 + rng.randrange(100_000)
        table[key] = dump_control(_stored(due[key]))
        index.update(key, due[key])  # as the agent does after each write
        assert len(index.due) <= 50
    fired: dict[bytes, int] = {}
    for now in range(0, 102_000, 500):
        for key in index.take_due(now, lambda: list(table.items())):
            assert key not in fired, "ticked twice"
            assert due[key] <= now, "ticked before its time"
            fired[key] = now
            table[key] = dump_control(_stored(None, offset=2))  # the agent applied the tick: released
            index.update(key, None)
        assert len(index.due) <= 50 and len(index.ticked) <= 50
    assert set(fired) == set(due)
    # at worst one timer round after the window emptied (the ticks of a round are applied before the next)
    assert all(fired[k] - due[k] < 1_000 for k in due), "a tick came later than the round after its time"
    assert index.window.evictions > 0 and index.window.scans > 1


def test_a_tick_not_applied_is_sent_again_and_a_full_window_of_unapplied_ticks_still_lets_others_fire() -> None:
    clock = Clock()
    table = {f"k{i}".encode(): dump_control(_stored(1_000 + i)) for i in range(100)}
    index = DueIndex(size=10, clock=clock)
    index.rebuild(frozenset({0}), table.items())
    first = index.take_due(5_000, lambda: table.items())
    assert len(first) == 10  # the window's ten; none applied yet
    clock.now += 31  # the window stays full of due, unapplied entries: a scan after 30 s at most
    second = index.take_due(36_000, lambda: table.items())
    assert set(second) == set(first)  # sent again (not applied in 30 s): the earliest come first
    for key in second:
        del table[key]
        index.update(key, None)
    assert len(index.take_due(36_500, lambda: table.items())) == 10  # the next ten, from a scan


def test_idempotency_expiry_deletes_every_key_with_a_window_far_smaller_than_the_keys() -> None:
    keys = 2_000
    table = {f"org/wtp/k{i}".encode(): dump_key(StoredKey(f"evt{i}", i * 10, i)) for i in range(keys)}
    expiry = Expiry(size=40)
    expiry.rebuild({0: table.items()})
    assert len(expiry) <= 40
    removed: list[bytes] = []
    for cutoff in range(0, keys * 10 + 10, 1_000):
        expired = expiry.expired(0, cutoff)  # as streams/idempotency.py IdempotencyStage._expire does per batch
        while True:
            for at, key in expired:
                assert at <= cutoff
                removed.append(key)
                del table[key]
            if not expiry.needs_scan(0, cutoff):
                break
            expiry.rebuild({0: table.items()})
            expired = expiry.expired(0, cutoff)
        assert len(expiry) <= 40
        assert all(int(k.rsplit(b"k", 1)[1]) * 10 > cutoff for k in table), "a key past the cutoff was kept"
    assert not table and len(removed) == keys and expiry.evictions > 0
