"""Encoding of the records that travel between the ingress, the agents and the sinks."""

from __future__ import annotations

from typing import Any

import orjson

# Header of each record the API writes in a transaction (api/publisher.py): ``{index}/{count}``, the
# record's place among the transaction's records in its partition. After the last one (index
# count-1) the partition holds the transaction's commit marker, an offset with no record
# (streams/progress.py passes it without a seek).
TX_HEADER = "tx"


def closes_transaction(headers: Any) -> bool:
    """Whether a record with these headers (pairs of name and bytes) is the last of its transaction
    in its partition; False for a record written outside a transaction or an unreadable header."""
    if not headers:
        return False
    for name, value in headers:
        if name == TX_HEADER:
            try:
                index, _, count = bytes(value).partition(b"/")
                return int(index) + 1 == int(count)
            except (TypeError, ValueError):
                return False
    return False


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
