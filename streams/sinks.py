"""Sinks: store incidents and traces in batches, deduplicated on effect ids. The stream
acknowledges a batch once the sink returns, so a sink never raises: see :func:`_store`."""

from __future__ import annotations

import logging
import time
from typing import Any

from app.kafka.app import app, incident_actions_topic, settings, traces_topic
from app.observability import tracing, worker_spans
from app.store.results import apply_incident_actions, record_trace_steps, upsert_control_views
from streams.batches import decode_items, store_batch
from streams.resources import resources

log = logging.getLogger(__name__)


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


@app.agent(incident_actions_topic)
async def incident_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        await store_batch("incidents", await decode_items(values, "incidents", INCIDENT_KEYS), _write_incidents)


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


@app.agent(traces_topic)
async def trace_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        await store_batch("traces", await decode_items(values, "traces", TRACE_KEYS), _write_traces)


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
