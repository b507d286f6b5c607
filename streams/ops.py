"""The worker's operations endpoints on its own port (Faust's web server): ``/healthz``,
``/readyz`` and ``/metrics``, and the consumer-lag gauge behind the metrics."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.kafka.app import app
from app.observability import metrics
from app.observability.health import OK, RecoveryProgress, broker_check, database_check
from streams import stage_runner
from streams.resources import resources
from tables.faust_adapter import broker_client

log = logging.getLogger(__name__)


def tables_check() -> str:
    """``ok`` once every stage runs and has restored its state (a stage with state) after its latest
    assignment."""
    running = {stage.name: stage for stage in stage_runner.stages}
    starting = [name for name in stage_runner.expected if name not in running]
    if starting:
        return "starting the stages: " + ", ".join(starting)
    recovering = [name for name, stage in running.items() if not stage.ready()]
    if recovering:
        return "recovering the state of the stages: " + ", ".join(recovering)
    return OK


def recovery_progress() -> RecoveryProgress | None:
    """The restores of the stages with state together (records, partitions; the longer time; done
    when all are); None until each knows what it has to read."""
    restores = [stage.restore_progress for stage in stage_runner.stages if stage.changelog is not None]
    if not restores or not all(r.known for r in restores):
        return None
    parts = [r.snapshot() for r in restores]
    return RecoveryProgress(
        records_done=sum(p.records_done for p in parts),
        records_total=sum(p.records_total for p in parts),
        partitions_done=sum(p.partitions_done for p in parts),
        partitions_total=sum(p.partitions_total for p in parts),
        seconds=max(p.seconds for p in parts),
        done=all(p.done for p in parts),
    )


@app.page("/healthz")
async def healthz(web: Any, request: Any) -> Any:
    return web.json({"status": "ok"}, status=200)


@app.page("/readyz")
async def readyz(web: Any, request: Any) -> Any:
    """Ready when the database and a broker answer and every stage has started and restored its
    state; ``recovery`` tells
    how far the current (or last) rebuild of the tables from their changelogs is."""
    database, broker = await asyncio.gather(database_check(resources().engine), broker_check(broker_client()))
    checks = {"database": database, "broker": broker, "tables": tables_check()}
    ok = all(v == OK for v in checks.values())
    body: dict[str, Any] = {"status": "ready" if ok else "not ready", "checks": checks}
    recovery = recovery_progress()
    if recovery is not None:
        body["recovery"] = recovery.as_json()
    return web.json(body, status=200 if ok else 503)


@app.page("/metrics")
async def prometheus_metrics(web: Any, request: Any) -> Any:
    update_lag()
    # aiohttp refuses a charset inside content_type; the exposition is ASCII anyway
    return web.bytes(metrics.exposition(), content_type=metrics.CONTENT_TYPE.split("; charset")[0])


def update_lag() -> None:
    """Records on each partition a stage of this worker holds that it has not applied yet (high
    watermark minus committed offset)."""
    metrics.CONSUMER_LAG.clear()
    for stage in stage_runner.stages:
        for tp, behind in stage.lag():
            metrics.CONSUMER_LAG.labels(tp.topic, str(tp.partition)).set(behind)
