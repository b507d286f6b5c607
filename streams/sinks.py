"""Sinks: store incidents and traces in batches, deduplicated on effect ids. The stream
acknowledges a batch once the sink returns, so a sink never raises: see :func:`_store`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from app.faust_app import app, dead_letter_topic, incident_actions_topic, settings, traces_topic
from app.records import decode, encode
from app.store.results import apply_incident_actions, record_trace_steps, upsert_control_views
from streams.outbox import items_of
from streams.resources import resources

log = logging.getLogger(__name__)
T = TypeVar("T")


MAX_BATCH_ATTEMPTS = 5
INCIDENT_KEYS = (
    "effect_id",
    "event_id",
    "organization_id",
    "topic_id",
    "workflow_id",
    "operation_book_id",
    "title",
    "mode",
    "accepted_ms",
)
TRACE_KEYS = ("event_id", "organization_id", "at_ms", "steps")


async def _dead_letter(what: str, reason: str, record: Any) -> None:
    log.error("sink=%s dead-lettered a record: %s", what, reason)
    raw = record if isinstance(record, bytes) else encode(record)
    await dead_letter_topic.send(
        value=encode({"stage": f"sink:{what}", "reason": reason, "value": raw.decode("utf-8", "replace")[:65536]})
    )


async def _store(what: str, records: list[T], write: Callable[[list[T]], Awaitable[None]]) -> None:
    """Write a batch, retrying with backoff; a batch that keeps failing is written record by
    record and a record that still fails goes to the dead-letter topic. Never raises: the
    stream acknowledges the batch once this returns, whatever happened."""
    delay = 0.1
    for attempt in range(1, MAX_BATCH_ATTEMPTS + 1):
        try:
            await write(records)
            return
        except Exception as exc:  # noqa: BLE001 - any failure is retried, then isolated (see docstring)
            log.error(
                "sink=%s write of %d records failed (attempt %d), retrying in %.1fs: %s",
                what,
                len(records),
                attempt,
                delay,
                exc,
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
    if len(records) == 1:
        await _dead_letter(what, "the database refused it repeatedly", records[0])
        return
    for record in records:
        await _store(what, [record], write)


async def _decode_all(values: list[Any], what: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
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


@app.agent(incident_actions_topic)
async def incident_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        await _store("incidents", await _decode_all(values, "incidents", INCIDENT_KEYS), _write_incidents)


async def _write_incidents(actions: list[dict[str, Any]]) -> None:
    async with resources().sessions.begin() as session:
        outcome = await apply_incident_actions(session, actions)
        steps = [
            {
                "event_id": a["event_id"],
                "organization_id": a["organization_id"],
                "at_ms": a["accepted_ms"],
                "step": f"action:{a['effect_id']}",
                "seq": 10,
                "detail": {
                    "effect_id": a["effect_id"],
                    "type": "RUN_OPERATION_BOOK",
                    "outcome": "resolved" if a.get("decision") == "RESOLVE" else "stored",
                },
            }
            for a in actions
        ]
        await record_trace_steps(session, steps)
    log.info(
        "sink=incidents batch=%d created=%d updated=%d duplicates=%d",
        len(actions),
        outcome.created,
        outcome.updated,
        outcome.duplicates,
    )


@app.agent(traces_topic)
async def trace_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        await _store("traces", await _decode_all(values, "traces", TRACE_KEYS), _write_traces)


async def _write_traces(records: list[dict[str, Any]]) -> None:
    steps = [
        {
            "event_id": r["event_id"],
            "organization_id": r["organization_id"],
            "at_ms": r["at_ms"],
            "step": s["step"],
            "seq": seq,
            "detail": s["detail"],
        }
        for r in records
        for seq, s in enumerate(r["steps"])
    ]
    views = [r["control_state"] for r in records if isinstance(r.get("control_state"), dict)]
    started = time.perf_counter()
    async with resources().sessions.begin() as session:
        await record_trace_steps(session, steps)
        if views:
            await upsert_control_views(session, views, max(r["at_ms"] for r in records))
    log.info(
        "sink=traces batch=%d steps=%d write_ms=%.0f", len(records), len(steps), (time.perf_counter() - started) * 1000
    )
