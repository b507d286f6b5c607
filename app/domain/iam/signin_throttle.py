"""Slowing down password guessing without locking the real user out (issue 34): pure, per process.

Three counters of failed sign-ins, each with exponential backoff once its free failures are spent:

- per **address** (the client address): a stranger trying many accounts from one address is slowed
  on all of them;
- per **account** (organization + e-mail, normalised by :func:`login_key` exactly as the account
  lookup compares it, whether or not such a user exists, so the answer never tells): a stranger
  trying one account from many addresses is slowed, however the address is typed;
- per **device**: a request carrying a device token that an earlier successful sign-in to that
  account handed out is counted on that device instead of on the account. The real user's own
  browser is therefore never slowed by a stranger's failures on the account (it only pays for
  its own), while every other caller is.

Nothing is ever locked: ``free`` failures are answered as failures, the attempt after the
``free``-th waits ``base`` seconds (``429`` until then), and each further failure doubles the wait,
capped at ``cap``: after the n-th failure (n ≥ free) the wait is ``base * 2**(n - free)``. A counter
is forgotten ``forget_after`` seconds after its last failure, and a success clears the account's and
the device's counters.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass


def login_key(email: str) -> str:
    """An e-mail as sign-in compares it: without surrounding whitespace, lower case. The account
    lookup (app/store/people.find_user) and every throttle keyed on an address use this one function,
    so no spelling that finds the account escapes its counter."""
    return email.strip().lower()


@dataclass(frozen=True, slots=True)
class BackoffRule:
    free: int  # failures answered before the first wait (the attempt after the free-th waits; 0 counts as 1)
    base: float  # seconds of the first wait
    cap: float  # the longest wait
    forget_after: float  # a counter idle this long starts again from zero


@dataclass(slots=True)
class _Counter:
    failures: int
    last: float
    not_before: float


class Backoff:
    """Failure counters keyed by anything, at most ``max_keys`` (least recently used dropped)."""

    def __init__(self, rule: BackoffRule, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self.rule, self._clock, self._max_keys = rule, clock, max_keys
        self._counters: OrderedDict[Hashable, _Counter] = OrderedDict()

    def _get(self, key: Hashable, now: float) -> _Counter | None:
        counter = self._counters.get(key)
        if counter is not None and now - counter.last > self.rule.forget_after:
            del self._counters[key]
            return None
        return counter

    def wait(self, key: Hashable) -> float:
        """0 when an attempt may be made now, else the seconds to wait."""
        now = self._clock()
        counter = self._get(key, now)
        return max(0.0, counter.not_before - now) if counter else 0.0

    def failed(self, key: Hashable) -> None:
        now = self._clock()
        counter = self._get(key, now)
        if counter is None:
            if len(self._counters) >= self._max_keys:
                self._counters.popitem(last=False)
            counter = self._counters[key] = _Counter(0, now, now)
        self._counters.move_to_end(key)
        counter.failures += 1
        counter.last = now
        # the free-th failure starts the first wait: docs/api.md's "20 failures, then 429" means the
        # 21st attempt waits (counting the wait from the failure after the free ones let a 21st through)
        beyond = counter.failures - max(self.rule.free, 1)
        if beyond >= 0:  # the exponent bounded: past 2**1023 the float product overflows
            counter.not_before = now + min(self.rule.cap, self.rule.base * 2 ** min(beyond, 64))

    def clear(self, key: Hashable) -> None:
        self._counters.pop(key, None)


ADDRESS_RULE = BackoffRule(free=20, base=5.0, cap=300.0, forget_after=3600.0)
ACCOUNT_RULE = BackoffRule(free=5, base=5.0, cap=120.0, forget_after=900.0)
DEVICE_RULE = BackoffRule(free=5, base=5.0, cap=120.0, forget_after=900.0)


class SignInThrottle:
    """The three counters; :meth:`wait` says how long before this attempt may be checked."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000) -> None:
        self.address = Backoff(ADDRESS_RULE, clock, max_keys)
        self.account = Backoff(ACCOUNT_RULE, clock, max_keys)
        self.device = Backoff(DEVICE_RULE, clock, max_keys)

    @staticmethod
    def account_key(org_id: str, login: str) -> tuple[str, str]:
        return (org_id, login_key(login))

    def wait(self, address: str, account: tuple[str, str], device: str | None) -> float:
        own = self.device.wait(device) if device else self.account.wait(account)
        return max(self.address.wait(address), own)

    def failed(self, address: str, account: tuple[str, str], device: str | None) -> None:
        self.address.failed(address)
        if device:
            self.device.failed(device)
        else:
            self.account.failed(account)

    def succeeded(self, account: tuple[str, str], device: str | None) -> None:
        self.account.clear(account)
        if device:
            self.device.clear(device)
