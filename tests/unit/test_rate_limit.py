"""Token buckets: the rate and burst, and a bounded map that forgets only the least recently used
keys, so a flood of new keys cannot reset the limit of a key in use."""

from __future__ import annotations

from app.domain.shared.rate_limit import RateLimiter, retry_after_header


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_with_the_wait_until_the_next_token() -> None:
    clock = Clock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    assert [limiter.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("k") == 0.5
    clock.now += 0.5
    assert limiter.take("k") == 0.0
    assert limiter.take("other") == 0.0, "each key has its own bucket"
    assert retry_after_header(0.01) == "1" and retry_after_header(2.2) == "3"


def test_filling_the_map_past_its_bound_keeps_a_recently_used_keys_limit() -> None:
    clock = Clock()
    limiter = RateLimiter(1.0, 2, clock=clock, max_keys=100)
    assert limiter.take("busy") == limiter.take("busy") == 0.0
    assert limiter.take("busy") > 0, "limited"
    for i in range(1000):  # a flood of new keys, the busy client still knocking in between
        limiter.take(f"flood-{i}")
        if i % 50 == 0:
            assert limiter.take("busy") > 0, f"the busy key's limit was reset after {i} new keys"
    assert len(limiter) == 100
    assert limiter.take("busy") > 0


def test_the_least_recently_used_key_is_the_one_forgotten() -> None:
    clock = Clock()
    limiter = RateLimiter(1.0, 1, clock=clock, max_keys=3)
    for key in ("a", "b", "c"):
        assert limiter.take(key) == 0.0
    assert limiter.take("a") > 0  # "a" is now the most recently used; "b" the least
    assert limiter.take("d") == 0.0
    assert len(limiter) == 3
    assert limiter.take("a") > 0 and limiter.take("c") > 0, "kept, still limited"
    assert limiter.take("b") == 0.0, "forgotten: starts again from a full bucket"
