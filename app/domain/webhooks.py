"""Outgoing webhooks after Standard Webhooks (https://www.standardwebhooks.com, spec 1.0.0):
secrets, signatures, headers, the JSON body, and what a delivery attempt's result means.

Pure: the executor does the HTTP (httpx, SSRF guard) and the Kafka retry topics; this module
decides what to send and when to try again.

- Secrets are ``whsec_<base64>`` of 24 to 64 random bytes (the spec's bounds); the key is
  the decoded bytes. Read paths show :func:`mask_secret` only.
- ``webhook-id`` is the delivery's effect id, stable across retries (the receiver dedupes on
  it); ``webhook-timestamp`` is the attempt's time, fresh per attempt; ``webhook-signature`` is
  ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``.
- Outcomes: 2xx delivered; 410 Gone disables the endpoint (no retry); everything else —
  3xx (redirects are never followed), 4xx, 5xx, timeouts, connection errors — is a failure
  retried on the :class:`RetrySchedule` until its attempts run out (DEAD). Other 4xx than
  408/409/425/429 are retried too, as the spec suggests: a receiver that answers 401/404
  while it is being redeployed or reconfigured recovers within the schedule, and a dead
  delivery stays visible for a manual replay. ``Retry-After`` (delta-seconds or HTTP-date,
  on any failure status, 429 and 503 in practice) lengthens the wait, never shortens it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import secrets
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from app.domain.control import ControlDecision
from app.domain.publish import PublishStatus

SECRET_PREFIX = "whsec_"
MIN_SECRET_BYTES = 24  # Standard Webhooks: at least 192 bits…
MAX_SECRET_BYTES = 64  # …and at most 512
NEW_SECRET_BYTES = 32
MAX_RETRY_AFTER_S = 3600.0  # a receiver's Retry-After never parks a delivery longer than this
EVENT_TYPE_PREFIX = "tocsin.event."

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
# Printable ASCII without space and without "." (the signed content is "{id}.{ts}.{body}").
_MSG_ID = re.compile(r"[\x21-\x2d\x2f-\x7e]{1,256}")


# --- secrets ---------------------------------------------------------------------------------


def new_secret(random_bytes: Callable[[int], bytes] = secrets.token_bytes, *, size: int = NEW_SECRET_BYTES) -> str:
    """A fresh ``whsec_`` secret of ``size`` random bytes (24 to 64) from ``random_bytes``."""
    if not MIN_SECRET_BYTES <= size <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")
    raw = random_bytes(size)
    if len(raw) != size:
        raise ValueError("the random source returned the wrong number of bytes")
    return SECRET_PREFIX + base64.b64encode(raw).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret; ValueError when it is malformed.

    The base64 is the standard alphabet; missing ``=`` padding is accepted (the reference
    libraries accept it too). The prefix is required, and the key must have 24 to 64 bytes.
    """
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a webhook secret starts with {SECRET_PREFIX!r}")
    text = secret[len(SECRET_PREFIX) :]
    if not _BASE64.fullmatch(text):
        raise ValueError("a webhook secret is base64 after its prefix")
    unpadded = text.rstrip("=")
    if len(unpadded) % 4 == 1 or (text != unpadded and len(text) % 4 != 0):
        raise ValueError("a webhook secret is base64 after its prefix")
    try:
        key = base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError("a webhook secret is base64 after its prefix") from exc
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")
    return key


def mask_secret(secret: str) -> str:
    """What a read shows of a secret: ``whsec_`` + its first 4 base64 characters + ``****``.

    Never raises: a value that is not a well-formed secret masks to ``****`` (nothing of it shown).
    """
    try:
        secret_key(secret)
    except ValueError:
        return "****"
    return SECRET_PREFIX + secret[len(SECRET_PREFIX) : len(SECRET_PREFIX) + 4] + "****"


# --- signing and headers ---------------------------------------------------------------------


def _check_metadata(msg_id: str, timestamp_s: int) -> None:
    if not isinstance(msg_id, str) or not _MSG_ID.fullmatch(msg_id):
        raise ValueError("webhook-id is 1-256 printable ASCII characters without spaces or '.'")
    if isinstance(timestamp_s, bool) or not isinstance(timestamp_s, int) or timestamp_s < 0:
        raise ValueError("webhook-timestamp is a non-negative integer (seconds since the epoch)")


def sign(secret: str, msg_id: str, timestamp_s: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of b"{msg_id}.{timestamp_s}." + body>`` (Standard Webhooks v1)."""
    _check_metadata(msg_id, timestamp_s)
    content = f"{msg_id}.{timestamp_s}.".encode("ascii") + body
    digest = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def webhook_headers(secret: str, msg_id: str, timestamp_s: int, body: bytes, mode: str) -> dict[str, str]:
    """The headers of one attempt. ``msg_id`` is the delivery's effect id (the same on every
    retry); ``timestamp_s`` is this attempt's time, so a retry is signed afresh."""
    status = PublishStatus(mode)  # ValueError for anything but ACTUAL / DRILL / TEST
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp_s),
        "webhook-signature": sign(secret, msg_id, timestamp_s, body),
        "content-type": "application/json",
        "Tocsin-Mode": status.value,
    }


# --- body ------------------------------------------------------------------------------------


def _iso_ms(ms: int) -> str:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def webhook_body(record: dict[str, Any], decision: str, topic_key: str, incident_id: str | None) -> bytes:
    """The JSON body of a delivery for a decided event ``record`` (the agents' record format).

    ``{type, timestamp, event_id, decision, status, release, exercise, topic, partition_key,
    data, event, incident_id?}``:

    - ``type`` is ``tocsin.event.notify`` or ``tocsin.event.resolve``; a RESOLVE is a release
      notice and says so twice (its type and ``"release": true``). SUPPRESS sends nothing, so
      it is refused (ValueError).
    - ``status`` is the publish mode; ``"exercise": true`` marks DRILL and TEST bodies (the
      ``Tocsin-Mode`` header says the same), false for ACTUAL. ``release`` and ``exercise`` are
      always present so every body has one schema.
    - ``timestamp`` (Standard Webhooks' payload field) is when the event was accepted, ISO 8601
      UTC with milliseconds; absent only if the record has no ``accepted_ms``.
    - ``event_id`` is the server's event id; ``event`` the publisher's ``{id, lang, name,
      description}`` as published (``{}`` for an auto-resolve); ``incident_id`` only when given.

    Compact JSON, UTF-8, keys in this order: the same input gives the same bytes. A string
    that cannot be UTF-8 encoded (a lone surrogate) makes the whole body ASCII-escaped instead.
    """
    kind = ControlDecision(decision)
    if kind is ControlDecision.SUPPRESS:
        raise ValueError("a suppressed event sends no webhook")
    status = PublishStatus(record["status"])
    body: dict[str, Any] = {"type": EVENT_TYPE_PREFIX + kind.value.lower()}
    accepted_ms = record.get("accepted_ms")
    if accepted_ms is not None:
        body["timestamp"] = _iso_ms(int(accepted_ms))
    body.update(
        event_id=record["id"],
        decision=kind.value,
        status=status.value,
        release=kind is ControlDecision.RESOLVE,
        exercise=status is not PublishStatus.ACTUAL,
        topic=topic_key,
        partition_key=(record.get("event_control") or {}).get("partition_key"),
        data=record.get("data") or {},
        event=record.get("event") or {},
    )
    if incident_id is not None:
        body["incident_id"] = incident_id
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


# --- retry schedule and delay levels ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    """Exponential backoff with proportional downward jitter.

    After failed attempt ``n`` (1-based: attempt 1 is the first, immediate delivery) the
    nominal wait is ``min(max_delay_s, base_s * factor ** (n - 1))`` and the wait is
    ``nominal * (1 - jitter * rand)`` for ``rand`` in [0, 1): within
    ``[nominal * (1 - jitter), nominal]``, never above the nominal (so never above the cap).
    ``jitter=1`` is "full jitter". A delivery makes at most ``max_attempts`` attempts.

    The defaults follow the spirit of Standard Webhooks' example schedule (5 s, 5 min, 30 min,
    2 h, 5 h, 10 h, 14 h, 20 h, 24 h) as a factor series: 5 s, 30 s, 3 min, 18 min, 1.8 h, then
    10 h six times — 12 attempts over about 62 h — and 6 delay levels.
    """

    base_s: float = 5.0
    factor: float = 6.0
    max_delay_s: float = 36_000.0
    max_attempts: int = 12
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if not (math.isfinite(self.base_s) and self.base_s > 0):
            raise ValueError("base_s must be a positive number")
        if not (math.isfinite(self.factor) and self.factor >= 1):
            raise ValueError("factor must be at least 1")
        if not (math.isfinite(self.max_delay_s) and self.max_delay_s >= self.base_s):
            raise ValueError("max_delay_s must be at least base_s")
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError("max_attempts must be a positive integer")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be within [0, 1]")

    def nominal(self, attempt: int) -> float:
        """The un-jittered wait after failed attempt ``attempt`` (its delay level)."""
        if attempt < 1:
            raise ValueError("attempts are numbered from 1")
        try:
            value = self.base_s * self.factor ** (attempt - 1)
        except OverflowError:
            return self.max_delay_s
        return min(self.max_delay_s, value)

    def delay(self, attempt: int, rand: float) -> float:
        """The wait after failed attempt ``attempt``, jittered by ``rand`` in [0, 1)."""
        if not 0 <= rand < 1:
            raise ValueError("rand must be within [0, 1)")
        return self.nominal(attempt) * (1 - self.jitter * rand)


def delay_levels(schedule: RetrySchedule) -> list[float]:
    """The distinct delay levels a delivery can pass through, ascending: the nominal waits after
    attempts 1 … ``max_attempts - 1`` (none when a delivery has a single attempt).

    The worker keeps one Kafka delay topic per level. A waiting delivery goes to the level
    :func:`level_for` its wait — the smallest level ≥ it — and carries its own due time
    (``Outcome.retry_at_s``); the level's consumer holds the head record until that record is
    due, then moves on. So a delivery is never sent early, and at most ``level - its wait`` late,
    because every record ahead of it in the level was due within ``level`` of being parked: for
    a backoff wait that is at most ``jitter * level`` (its nominal is ≥ the level it lands in), for
    a longer ``Retry-After`` wait less than the gap to the next lower level.
    """
    levels: list[float] = []
    for attempt in range(1, schedule.max_attempts):
        level = schedule.nominal(attempt)
        if not levels or level > levels[-1]:
            levels.append(level)
        if level >= schedule.max_delay_s:
            break
    return levels


def level_for(delay_s: float, levels: list[float]) -> float:
    """The smallest level ≥ ``delay_s`` (ValueError when ``delay_s`` exceeds them all)."""
    index = bisect_left(levels, delay_s)
    if index == len(levels):
        raise ValueError(f"no delay level holds a wait of {delay_s} s")
    return levels[index]


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
class Outcome:
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
) -> Outcome:
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
        return Outcome(Verdict.DELIVERED, f"HTTP {status_code}")
    if status_code == 410:
        return Outcome(Verdict.DISABLE, "HTTP 410 Gone: the endpoint asked to stop receiving")
    if status_code is None:
        reason = f"no response: {error}" if error else "no response"
    elif 300 <= status_code <= 399:
        reason = f"HTTP {status_code}: redirect not followed"
    else:
        reason = f"HTTP {status_code}"
    reason = reason[:_MAX_REASON]
    if attempt >= schedule.max_attempts:
        return Outcome(Verdict.DEAD, reason)
    levels = delay_levels(schedule)
    wait = schedule.delay(attempt, rand)
    if status_code is not None:
        asked = retry_after_s(headers, now_s)
        if asked is not None:
            wait = max(wait, min(asked, MAX_RETRY_AFTER_S, levels[-1]))
    level = level_for(wait, levels)
    return Outcome(Verdict.RETRY, reason, retry_at_s=now_s + wait, delay_s=wait, level_s=level)
