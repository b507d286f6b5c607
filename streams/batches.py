"""Batch helpers shared by the stages: a batch processed until done, a sink's write retried, a
batch's items decoded (importing this module registers nothing with the Faust app)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiokafka.errors import InvalidMessageError, KafkaError, MessageSizeTooLargeError

from app.domain.shared.retry_schedule import RetrySchedule
from app.kafka.app import dead_letter_topic
from app.kafka.records import decode, encode
from app.observability import metrics
from app.store.db import database_unavailable, when_available, written_meanwhile
from streams.outbox import items_of

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_BATCH_ATTEMPTS = 5
MAX_POISON_ATTEMPTS = 3  # a failure that is not the infrastructure's, before the batch is halved
WRITE_RETRIES = RetrySchedule(base_s=0.1, factor=2, max_delay_s=5.0)  # a sink's write the database refused
BATCH_RETRIES = RetrySchedule(base_s=0.5, factor=2, max_delay_s=30.0)  # a stage's failed batch
POISON_RETRIES = RetrySchedule(base_s=0.1, factor=2, max_delay_s=1.0)  # a record failing alone (not infrastructure)


async def _dead_letter(what: str, reason: str, record: Any) -> None:
    log.error("sink=%s dead-lettered a record: %s", what, reason)
    raw = record if isinstance(record, bytes) else encode(record)
    # awaited until the broker has it: the caller's offsets move past the record once this returns
    sent = await dead_letter_topic.send(
        value=encode({"stage": f"sink:{what}", "reason": reason, "value": raw.decode("utf-8", "replace")[:65536]})
    )
    await sent


async def store_batch(what: str, records: list[T], write: Callable[[list[T]], Awaitable[None]]) -> None:
    """Write a batch, retrying with backoff; a batch that keeps failing is written record by
    record and a record that still fails goes to the dead-letter topic. A database that is
    down is waited for (the stage stops meanwhile), never counted as a failed attempt. Never
    raises: the stage commits the batch once this returns, whatever happened."""
    for attempt in range(1, MAX_BATCH_ATTEMPTS + 1):
        try:
            # an unreachable database is waited for here, however long: only a batch the
            # database refuses counts as an attempt (and may end on the dead-letter topic)
            await when_available(f"sink={what}", lambda: write(records))
            return
        except Exception as exc:  # noqa: BLE001 - any failure is retried, then isolated (see docstring)
            if attempt == 1 and written_meanwhile(exc):
                log.warning(
                    "sink=%s: another writer stored some of these %d records meanwhile; writing again: %s",
                    what,
                    len(records),
                    str(exc).splitlines()[0][:300],
                )
                continue  # at once: read again, what the other wrote is found and skipped
            log.error(
                "sink=%s write of %d records failed (attempt %d), retrying in %.1fs: %s",
                what,
                len(records),
                attempt,
                WRITE_RETRIES.nominal(attempt),
                exc,
            )
            await asyncio.sleep(WRITE_RETRIES.nominal(attempt))
    if len(records) == 1:
        await _dead_letter(what, "the database refused it repeatedly", records[0])
        return
    for record in records:
        await store_batch(what, [record], write)


def transient(exc: BaseException) -> bool:
    """A failure of the infrastructure (broker, network, database), not of the records: waited out
    however long it lasts, never a reason to dead-letter anything. A record too large for the
    broker is the records' fault."""
    if isinstance(exc, MessageSizeTooLargeError | InvalidMessageError):
        return False
    return isinstance(exc, KafkaError | OSError | TimeoutError) or database_unavailable(exc)


SkipRecord = Callable[[Any, str], Awaitable[None]]


async def process_until_done(
    stage: str,
    process: Callable[[list[Any]], Awaitable[None]],
    events: list[Any],
    skip: SkipRecord,
) -> None:
    """Run ``process(events)`` until it returns; no record may block the partition.

    A stage commits a batch's offsets only once ``process`` returned (tables/batch_stage.py), so a
    batch that raised is processed again here, with backoff (0.5 s doubling to 30 s):
    - a failure of the infrastructure (broker, database: :func:`transient`) however long it lasts;
    - any other failure (the records' fault): the batch is halved at once and each half processed
      the same way, in order, until the record that fails alone is found; after
      ``MAX_POISON_ATTEMPTS`` quick tries (0.1 s, 0.2 s) it goes to the
      dead-letter topic through ``skip(event, reason)`` (which also commits past it), and the
      records around it, whatever their organization, are decided.
    Processing again is safe: states are written only after the outputs, outputs carry effect ids,
    and a record at or below its key's stored offset is skipped as applied."""
    attempt = failures = 0
    last = ""
    while True:
        try:
            await process(events)
            return
        except Exception as exc:  # retried or isolated (see docstring); cancellation is not an Exception
            attempt += 1
            last = f"{type(exc).__name__}: {exc}"
            metrics.BATCH_RETRIES.labels(stage).inc()
            poison = not transient(exc)
            if attempt == 1 or attempt % 10 == 0:
                log.exception("%s: a batch of %d records failed (attempt %d); retrying", stage, len(events), attempt)
            else:
                log.error("%s: a batch of %d records failed (attempt %d): %r", stage, len(events), attempt, exc)
            if poison:
                failures += 1
                # a failure of the records: halve at once (the partition waits while the record is
                # looked for); a record alone gets a few quick tries before it is dead-lettered
                if len(events) > 1 or failures >= MAX_POISON_ATTEMPTS:
                    break
        await asyncio.sleep((POISON_RETRIES if poison else BATCH_RETRIES).nominal(attempt))
    if len(events) == 1:
        reason = f"processing failed {failures} times: {last}"[:1000]
        log.error("%s: a record that fails alone is dead-lettered and skipped: %s", stage, reason)
        await _until_sent(stage, lambda: skip(events[0], reason))
        return
    middle = len(events) // 2
    await process_until_done(stage, process, events[:middle], skip)
    await process_until_done(stage, process, events[middle:], skip)


async def _until_sent(stage: str, send: Callable[[], Awaitable[None]]) -> None:
    """Dead-lettering needs the broker: wait for it like for any other send."""
    attempt = 0
    while True:
        try:
            await send()
            return
        except Exception as exc:
            if not transient(exc):
                raise
            attempt += 1
            log.error("%s: dead-lettering a record failed (attempt %d), retrying: %r", stage, attempt, exc)
            await asyncio.sleep(BATCH_RETRIES.nominal(attempt))


async def decode_items(values: list[Any], what: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The items of a batch of records (each record holds one item or ``{"items": [...]}``)."""
    out = []
    for value in values:
        try:
            items = items_of(decode(value))
        except ValueError as exc:
            await _dead_letter(what, f"undecodable record: {exc}", value if isinstance(value, bytes) else b"")
            continue
        for record in items:
            if not isinstance(record, dict):
                await _dead_letter(what, "item is not a JSON object", {"item": record})
            elif missing := [k for k in keys if k not in record]:
                await _dead_letter(what, f"record lacks {missing}", record)
            else:
                out.append(record)
    return out
