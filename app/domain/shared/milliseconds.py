"""Milliseconds since the epoch: the unit of event time (the Kafka record timestamp) — pure conversions.

The wall clock itself is read in ``app/clock.py``; these only convert.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_ms(seconds: float) -> int:
    """``seconds`` (since the epoch, or a span) as whole milliseconds, truncated toward zero."""
    return int(seconds * 1000)


def ms_to_datetime(ms: float) -> datetime:
    """The UTC moment of ``ms`` milliseconds since the epoch."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def datetime_to_ms(moment: datetime) -> int:
    """A timezone-aware moment as milliseconds since the epoch (the inverse of :func:`ms_to_datetime`)."""
    return round(moment.timestamp() * 1000)


def iso_ms(ms: int) -> str:
    """``ms`` as ISO 8601 UTC with exactly three decimals and ``Z`` (``2023-11-14T22:13:20.000Z``)."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"
