"""Encoding of the records that travel between the ingress, the agents and the sinks."""

from __future__ import annotations

from typing import Any

import orjson


def encode(value: dict[str, Any]) -> bytes:
    return orjson.dumps(value)


def decode(raw: bytes | None) -> dict[str, Any]:
    """Decode a record value; raises ``ValueError`` for anything but a JSON object."""
    if raw is None:
        raise ValueError("record has no value")
    value = orjson.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("record value is not a JSON object")
    return value
