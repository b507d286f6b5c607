"""The control stage's records: a publish record decoded and checked, the request id it carries,
a tick of a state's auto-resolve time (shared by the Faust agent and the batch stage)."""

from __future__ import annotations

from typing import Any

from app.domain.pipeline import tick_record as _tick_record
from app.domain.shared.ids import new_id
from app.kafka.records import decode


def publish_record(value: Any) -> dict[str, Any]:
    """The publish record in ``value``; raises ValueError, KeyError or TypeError saying why not."""
    record: dict[str, Any] = decode(value)
    if not isinstance(record["id"], str):
        raise TypeError("the record id is not a string")
    for name in ("organization_id", "topic_id"):
        if name not in record:
            raise KeyError(name)  # the same reason as a lookup's
    record["accepted_ms"] = int(record["accepted_ms"])
    return record


def request_of(record: dict[str, Any]) -> dict[str, str]:
    """``{"request_id": …}`` of the API request that published ``record`` (none in records of
    older APIs, or of a publish whose id was not a string)."""
    rid = record.get("request_id")
    return {"request_id": rid} if isinstance(rid, str) else {}


def tick_record(key: bytes, now_ms: int) -> dict[str, Any]:
    """The auto-resolve tick of the state ``key`` now, with a fresh event id."""
    return _tick_record(key.decode(), now_ms, new_id("evt"))
