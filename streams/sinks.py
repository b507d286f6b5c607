"""Sinks: store incidents and traces in batches. A batch is retried until the database
takes it, because the stream acknowledges a batch once this code returns."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from app.faust_app import app, incident_actions_topic, settings, traces_topic
from app.records import decode
from app.store.results import apply_incident_actions, record_trace_steps
from streams.resources import resources

log = logging.getLogger(__name__)


async def _until_stored(what: str, write: Callable[[], Awaitable[None]]) -> None:
    delay = 0.1
    while True:
        try:
            await write()
            return
        except (SQLAlchemyError, OSError) as exc:
            log.error("sink=%s database write failed, retrying in %.1fs: %s", what, delay, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def _decode_all(values: list[Any], what: str) -> list[dict[str, Any]]:
    out = []
    for value in values:
        try:
            out.append(decode(value))
        except ValueError as exc:
            log.error("sink=%s dropped undecodable record: %s", what, exc)
    return out


@app.agent(incident_actions_topic)
async def incident_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        await _until_stored("incidents", _incident_writer(_decode_all(values, "incidents")))


def _incident_writer(actions: list[dict[str, Any]]) -> Callable[[], Awaitable[None]]:
    async def write() -> None:
        async with resources().sessions.begin() as session:
            outcome = await apply_incident_actions(session, actions)
            steps = [
                {
                    "event_id": a["event_id"],
                    "organization_id": a["organization_id"],
                    "at_ms": a["accepted_ms"],
                    "step": f"action:{a['effect_id']}",
                    "seq": 10,
                    "detail": {"effect_id": a["effect_id"], "type": "RUN_OPERATION_BOOK", "outcome": "stored"},
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

    return write


@app.agent(traces_topic)
async def trace_sink(stream: Any) -> None:
    async for values in stream.take(settings.sink_batch_size, within=settings.sink_batch_seconds):
        records = _decode_all(values, "traces")
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
        await _until_stored("traces", _trace_writer(steps))


def _trace_writer(steps: list[dict[str, Any]]) -> Callable[[], Awaitable[None]]:
    async def write() -> None:
        async with resources().sessions.begin() as session:
            await record_trace_steps(session, steps)

    return write
