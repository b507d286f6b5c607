"""Delivery verdicts: what one attempt's result means — delivered, retry (when), dead, or disable — pure.

- 2xx delivered; 410 Gone disables the endpoint (no retry); everything else — 3xx (redirects
  are never followed), 4xx, 5xx, timeouts, connection errors — is a failure retried on the
  :class:`~app.domain.shared.retry_schedule.RetrySchedule` until its attempts run out (DEAD). Other
  4xx than 408/409/425/429 are retried too, as Standard Webhooks suggests: a receiver that
  answers 401/404 while it is being redeployed or reconfigured recovers within the schedule,
  and a dead delivery stays visible for a manual replay.
- ``Retry-After`` (delta-seconds or HTTP-date, on any failure status, 429 and 503 in
  practice) lengthens the wait, never shortens it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from app.domain.shared.retry_schedule import RetrySchedule, delay_levels, level_for


@dataclass(slots=True)
class Attempt:
    """What one attempt gave: ``status_code`` (HTTP, or SMTP reply code) and response headers
    when there was an answer, ``error`` when there was none (timeout, refused target…).
    ``permanent`` marks a failure no retry can fix (an invalid recipient, a refused target);
    ``expired`` a push whose time to live passed before it could be sent; ``gone`` a 410."""

    status_code: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    permanent: bool = False
    expired: bool = False
    duration_ms: int = 0
    record: dict[str, Any] | None = None  # a row the sink stores with the batch (the push outbox)

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300 and self.error is None


MAX_RETRY_AFTER_S = 3600.0  # a receiver's Retry-After never parks a delivery longer than this


# --- Retry-After -----------------------------------------------------------------------------

_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
_IMF_FIXDATE = re.compile(rf"{_DAY}, (?P<d>\d{{2}}) {_MON} (?P<y>\d{{4}}) {_TIME} GMT", re.IGNORECASE)
_RFC850 = re.compile(rf"{_LONG_DAY}, (?P<d>\d{{2}})-{_MON}-(?P<yy>\d{{2}}) {_TIME} GMT", re.IGNORECASE)
_ASCTIME = re.compile(rf"{_DAY} {_MON} (?P<d>[ \d]\d) {_TIME} (?P<y>\d{{4}})", re.IGNORECASE)
_DELTA_SECONDS = re.compile(r"\d+")


def parse_http_date(value: str, now_s: float) -> float | None:
    """Seconds since the epoch of an HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, obsolete RFC 850
    and asctime forms); None when ``value`` is none of them. ``now_s`` places RFC 850's
    two-digit years (more than 50 years ahead means the previous century)."""
    text = value.strip()
    match = _IMF_FIXDATE.fullmatch(text) or _RFC850.fullmatch(text) or _ASCTIME.fullmatch(text)
    if match is None:
        return None
    groups = match.groupdict()
    if groups.get("yy") is not None:
        this_year = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=int(now_s))).year
        year = this_year - this_year % 100 + int(groups["yy"])
        if year > this_year + 50:
            year -= 100
    else:
        year = int(groups["y"])
    try:
        moment = datetime(
            year,
            _MONTHS.index(groups["mon"].lower()) + 1,
            int(groups["d"].strip()),
            int(groups["h"]),
            int(groups["m"]),
            int(groups["s"]),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    return moment.timestamp()


def retry_after_s(headers: Mapping[str, str], now_s: float) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (≥ 0), or None when it is absent
    or unparseable. Delta-seconds or an HTTP-date; a date in the past means 0."""
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if value is None:
        return None
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(int(text)) if len(text) <= 12 else 1e12
    when = parse_http_date(text, now_s)
    return None if when is None else max(0.0, when - now_s)


# --- outcome of an attempt -------------------------------------------------------------------


class Verdict(StrEnum):
    DELIVERED = "DELIVERED"  # 2xx
    RETRY = "RETRY"  # failed, try again at retry_at_s
    DEAD = "DEAD"  # failed and no attempts left: dead-letter it
    DISABLE = "DISABLE"  # 410 Gone: disable the endpoint, no retry


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    """What one attempt's result means. For RETRY: when (``retry_at_s``), after how long
    (``delay_s``) and in which delay level (``level_s``, see :func:`delay_levels`)."""

    verdict: Verdict
    reason: str
    retry_at_s: float | None = None
    delay_s: float | None = None
    level_s: float | None = None


_MAX_REASON = 200


def classify(
    status_code: int | None,
    headers: Mapping[str, str],
    error: str | None,
    attempt: int,
    schedule: RetrySchedule,
    now_s: float,
    *,
    rand: float = 0.0,
) -> DeliveryOutcome:
    """Classify attempt number ``attempt`` (1-based) of a delivery that ended at ``now_s``.

    ``status_code`` is the response status, or None when there was no response (timeout,
    connection error: ``error`` says which). ``rand`` in [0, 1) jitters the backoff (pass
    ``random.random()``; 0 gives the nominal wait). The wait before a retry is the backoff,
    lengthened to the response's ``Retry-After`` when that asks for more — capped at
    ``MAX_RETRY_AFTER_S`` and at the largest delay level, so it always fits a level; a
    missing or unparseable ``Retry-After`` leaves the backoff.
    """
    if attempt < 1:
        raise ValueError("attempts are numbered from 1")
    if status_code is not None and 200 <= status_code <= 299:
        return DeliveryOutcome(Verdict.DELIVERED, f"HTTP {status_code}")
    if status_code == 410:
        return DeliveryOutcome(Verdict.DISABLE, "HTTP 410 Gone: the endpoint asked to stop receiving")
    if status_code is None:
        reason = f"no response: {error}" if error else "no response"
    elif 300 <= status_code <= 399:
        reason = f"HTTP {status_code}: redirect not followed"
    else:
        reason = f"HTTP {status_code}"
    reason = reason[:_MAX_REASON]
    if attempt >= schedule.max_attempts:
        return DeliveryOutcome(Verdict.DEAD, reason)
    levels = delay_levels(schedule)
    wait = schedule.delay(attempt, rand)
    if status_code is not None:
        asked = retry_after_s(headers, now_s)
        if asked is not None:
            wait = max(wait, min(asked, MAX_RETRY_AFTER_S, levels[-1]))
    level = level_for(wait, levels)
    return DeliveryOutcome(Verdict.RETRY, reason, retry_at_s=now_s + wait, delay_s=wait, level_s=level)


def verdict_of(attempt: Attempt, number: int, schedule: RetrySchedule, now_s: float, *, rand: float) -> DeliveryOutcome:
    """:func:`classify` of an executor's attempt, with what only an executor knows (permanent, expired)."""
    if attempt.expired:
        return DeliveryOutcome(Verdict.DEAD, "expired: time_to_live passed")
    if attempt.permanent:
        return DeliveryOutcome(Verdict.DEAD, f"permanent failure: {attempt.error}")
    if attempt.status_code is not None and attempt.error is None and not 200 <= attempt.status_code < 300:
        return classify(attempt.status_code, attempt.headers, None, number, schedule, now_s, rand=rand)
    if attempt.delivered:
        return DeliveryOutcome(Verdict.DELIVERED, "delivered")
    return classify(None, attempt.headers, attempt.error or "failed", number, schedule, now_s, rand=rand)
