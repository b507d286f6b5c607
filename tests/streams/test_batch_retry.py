"""A batch of a stage that fails is processed again, not committed; a failure of the
infrastructure is waited out, any other is retried a bounded number of times and then isolated:
the record that fails alone is dead-lettered, the others are processed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
import pytest
from aiokafka.errors import KafkaConnectionError

import streams.batches
from app.observability import metrics
from streams.batches import process_until_done


async def _no_skip(event: Any, reason: str) -> None:
    raise AssertionError(f"nothing may be skipped here: {event} ({reason})")


def _retries(stage: str) -> float:
    return metrics.REGISTRY.get_sample_value("tocsin_batch_retries_total", {"stage": stage}) or 0.0


async def test_a_failing_batch_is_processed_again_until_it_succeeds(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    delays: list[float] = []

    async def no_wait(delay: float) -> None:
        delays.append(delay)

    monkeypatch.setattr(streams.batches.asyncio, "sleep", no_wait)
    seen: list[list[Any]] = []
    events = ["e1", "e2"]

    async def process(batch: list[Any]) -> None:
        seen.append(list(batch))
        if len(seen) < 13:
            raise KafkaConnectionError("the changelog's leader is unreachable")

    before = _retries("test")
    with caplog.at_level(logging.ERROR, logger="streams.batches"):
        await process_until_done("test", process, events, _no_skip)
    assert seen == [events] * 13, "every attempt gets the whole batch again"
    assert _retries("test") - before == 12
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0] + [30.0] * 6  # backoff, capped
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert [r.getMessage() for r in tracebacks] == [
        "test: a batch of 2 records failed (attempt 1); retrying",
        "test: a batch of 2 records failed (attempt 10); retrying",
    ]
    assert len(caplog.records) == 12


async def test_cancellation_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    async def cancelled(_batch: list[Any]) -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await process_until_done("test", cancelled, ["e1"], _no_skip)


@pytest.mark.parametrize("position", [0, 3, 6])
async def test_a_poison_record_is_isolated_and_the_others_are_processed_in_order(
    monkeypatch: pytest.MonkeyPatch, position: int
) -> None:
    """Defect: any failure was retried forever, so one record that cannot be processed (a trace
    orjson cannot encode) stopped every organization whose events share the partition."""

    async def no_wait(_delay: float) -> None:
        return None

    monkeypatch.setattr(streams.batches.asyncio, "sleep", no_wait)
    events = [f"org_b-{i}" for i in range(7)]
    events[position] = "org_a-poison"
    processed: list[str] = []
    skipped: list[tuple[str, str]] = []

    async def process(batch: list[Any]) -> None:
        if "org_a-poison" in batch:
            orjson.dumps({"filter": 123456789012345678901234567890})  # raises: beyond 64-bit
        processed.extend(batch)

    async def skip(event: Any, reason: str) -> None:
        skipped.append((event, reason))

    await process_until_done("test", process, events, skip)
    assert processed == [e for e in events if e != "org_a-poison"]
    assert [e for e, _r in skipped] == ["org_a-poison"]
    assert "processing failed 3 times: TypeError: Integer exceeds 64-bit range" in skipped[0][1]
