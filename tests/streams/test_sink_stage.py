"""The sink stages (streams/sinks.py): a fetch's items stored in one write; while the write waits
for a database that is down, a rebalance gives the batch up to the next owner instead of holding
the group's rebalance until the database is back."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from aiokafka.structs import ConsumerRecord

import streams.sinks as sinks
from streams.sinks import TRACE_KEYS, Sink
from tables.batch_stage import Checkpoint, Revoked


def _trace(i: int) -> ConsumerRecord[bytes, bytes]:
    value = orjson.dumps({"event_id": f"evt_{i}", "organization_id": "org_1", "at_ms": 1, "steps": []})
    return ConsumerRecord("tocsin.traces", 0, i, 0, 0, None, value, None, 0, len(value), [])


async def test_a_fetch_is_stored_in_one_write() -> None:
    written: list[list[dict[str, Any]]] = []

    async def write(items: list[dict[str, Any]]) -> None:
        written.append(items)

    sink = Sink("traces", TRACE_KEYS, write)
    sink.stage = SimpleNamespace(epoch=3)  # type: ignore[assignment]  # the epoch is all it reads
    await sink({0: [_trace(1), _trace(2)], 1: [_trace(3)]}, Checkpoint(None, None), {})  # type: ignore[arg-type]
    assert [[i["event_id"] for i in batch] for batch in written] == [["evt_1", "evt_2", "evt_3"]]


async def test_a_rebalance_while_the_database_is_down_gives_the_batch_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch is given up (Revoked) as soon as the epoch moves; the database attempt under way
    is left to end by itself, not cancelled mid-transaction (on SQLite that left the write lock
    held for every process: tests/integration/test_cancelled_writes.py)."""
    monkeypatch.setattr(sinks, "REVOCATION_CHECK_S", 0.01)
    blocked = asyncio.Event()
    answer = asyncio.Event()  # the database answers again
    cancelled = asyncio.Event()
    ended = asyncio.Event()

    async def write(items: list[dict[str, Any]]) -> None:
        blocked.set()
        try:
            await answer.wait()  # the database does not answer yet
        except asyncio.CancelledError:
            cancelled.set()
            raise
        ended.set()

    sink = Sink("traces", TRACE_KEYS, write)
    stage = SimpleNamespace(epoch=3)
    sink.stage = stage  # type: ignore[assignment]
    storing = asyncio.create_task(sink({0: [_trace(1)]}, Checkpoint(None, None), {}))  # type: ignore[arg-type]
    await asyncio.wait_for(blocked.wait(), 5)
    stage.epoch = 4  # a revocation: the epoch moves before the stage waits for the batch
    with pytest.raises(Revoked):
        await asyncio.wait_for(storing, 5)
    assert not cancelled.is_set(), "the attempt under way was cut mid-transaction"
    answer.set()
    await asyncio.wait_for(ended.wait(), 5)  # it ends by itself (its rows are deduplicated downstream)
