"""Sinks: store incidents and traces in batches, deduplicated on effect ids. Each is a batch stage
without state (tables/batch_stage.py): a fetch's records are decoded and stored in one transaction,
then their offsets are committed. A write the database refuses is retried and then isolated
(streams/batches.py ``store_batch``); a database that is down is waited for, so nothing is
committed that was not stored."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.kafka import topics
from app.observability import tracing, worker_spans
from app.settings import Settings
from app.store.results import apply_incident_actions, record_trace_steps, upsert_control_views
from streams.batches import decode_items, store_batch
from streams.resources import resources
from streams.stage_runner import StageSpec
from tables.batch_stage import BatchStage, Checkpoint, Records, Revoked
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)
REVOCATION_CHECK_S = 0.5  # while a write waits for the database: how often a rebalance is looked for


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


class Sink:
    """The handler of a sink stage: decode the fetch's items, store them (never raises)."""

    def __init__(
        self, what: str, keys: tuple[str, ...], write: Callable[[list[dict[str, Any]]], Awaitable[None]]
    ) -> None:
        self.what, self.keys, self.write = what, keys, write
        self.stage: BatchStage | None = None

    async def __call__(self, records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
        values = [rec.value for batch in records.values() for rec in batch]
        items = await decode_items(values, self.what, self.keys)
        if not items:
            return
        # A database that is down is waited for, however long; a rebalance meanwhile (the epoch moves
        # before the revocation waits for this batch) gives the batch up to the next owner instead
        # of holding the whole group's rebalance until the database is back.
        epoch = self.stage.epoch if self.stage is not None else 0
        storing = asyncio.create_task(store_batch(self.what, items, self.write))
        while not storing.done():
            await asyncio.wait({storing}, timeout=REVOCATION_CHECK_S)
            if self.stage is not None and self.stage.epoch != epoch and not storing.done():
                storing.cancel()
                await asyncio.gather(storing, return_exceptions=True)
                raise Revoked()
        storing.result()

    def committed(self) -> None:
        """Nothing is kept between batches."""


def sink_spec(settings: Settings, name: str, source: str, sink: Sink) -> StageSpec:
    return StageSpec(
        name,
        source,
        sink,
        max_records=settings.sink_batch_size,
        fetch_seconds=settings.sink_batch_seconds,
        fetch_min_bytes=256 * 1024,
        fetch_max_wait_ms=max(1, round(settings.sink_batch_seconds * 1000)),
        # stored rows are deduplicated on their ids: a restart stores at most this much again
        commit_every_s=settings.worker_commit_seconds,
    )


def incident_sink(settings: Settings) -> StageSpec:
    """Incidents of RUN_OPERATION_BOOK actions, with their trace steps."""
    return sink_spec(settings, "incidents", topics.ACTIONS_INCIDENT, Sink("incidents", INCIDENT_KEYS, _write_incidents))


def trace_sink(settings: Settings) -> StageSpec:
    """Trace steps and the control-state views."""
    return sink_spec(settings, "traces", topics.TRACES, Sink("traces", TRACE_KEYS, _write_traces))


async def _write_incidents(actions: list[dict[str, Any]]) -> None:
    started_ns = time.time_ns()
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
                    "outcome": outcome.effects.get(a["effect_id"], "stored"),
                },
            }
            for a in actions
        ]
        await record_trace_steps(session, steps)
    if tracing.enabled:
        worker_spans.incident_spans(actions, started_ns, time.time_ns())
    log.info(
        "sink=incidents batch=%d created=%d updated=%d duplicates=%d",
        len(actions),
        outcome.created,
        outcome.updated,
        outcome.duplicates,
    )


async def _write_traces(records: list[dict[str, Any]]) -> None:
    steps = [
        {
            "event_id": r["event_id"],
            # a receiving organization's workflows step is stored under that organization
            "organization_id": s.get("organization_id") or r["organization_id"],
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
