"""The worker's operations endpoints on its own port (Faust's web server): ``/healthz``,
``/readyz`` and ``/metrics``, and the consumer-lag gauge behind the metrics."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.kafka.app import app
from app.observability import metrics
from app.observability.health import OK, RecoveryProgress, broker_check, database_check
from streams import control_batch
from streams.resources import resources
from streams.tails import tail_watch
from tables.control import worker_consumer

log = logging.getLogger(__name__)


def tables_check() -> str:
    """``ok`` once the first assignment is done and no table is recovering from its changelog."""
    if app.rebalancing:
        return "rebalancing"
    if app.in_recovery or not worker_consumer.tables_recovered():
        return "recovering tables"
    if not control_batch.stages:
        return "starting the control stage"
    if not all(stage.ready() for stage in control_batch.stages):
        return "recovering the control stage's state"
    return OK


def recovery_progress() -> RecoveryProgress | None:
    """The Faust tables' recovery and the batch stages' restores together (records, partitions;
    the longer time; done when all are); None until each knows what it has to read."""
    faust = worker_consumer.recovery_progress()
    restores = [stage.restore_progress for stage in control_batch.stages]
    if faust is None or not restores or not all(r.known for r in restores):
        return None
    parts = [faust, *(r.snapshot() for r in restores)]
    return RecoveryProgress(
        records_done=sum(p.records_done for p in parts),
        records_total=sum(p.records_total for p in parts),
        partitions_done=sum(p.partitions_done for p in parts),
        partitions_total=sum(p.partitions_total for p in parts),
        seconds=max(p.seconds for p in parts),
        done=all(p.done for p in parts),
    )


def tails_check() -> str:
    """``ok`` unless a source partition's applied offset cannot reach its last stable offset
    (streams/tail_watch.py: an ERROR line said which)."""
    stuck = tail_watch.problems()
    return OK if not stuck else "behind: " + "; ".join(stuck)


@app.page("/healthz")
async def healthz(web: Any, request: Any) -> Any:
    return web.json({"status": "ok"}, status=200)


@app.page("/readyz")
async def readyz(web: Any, request: Any) -> Any:
    """Ready when the database and a broker answer, the tables have recovered and every source
    partition is applied to its end or catching up; ``recovery`` tells
    how far the current (or last) rebuild of the tables from their changelogs is."""
    database, broker = await asyncio.gather(
        database_check(resources().engine), broker_check(worker_consumer.broker_client())
    )
    checks = {"database": database, "broker": broker, "tables": tables_check(), "tails": tails_check()}
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
    """Records on each assigned partition that this worker has not read yet (high watermark minus next read)."""
    metrics.CONSUMER_LAG.clear()
    for tp, behind in worker_consumer.lag():
        metrics.CONSUMER_LAG.labels(tp.topic, str(tp.partition)).set(behind)
    for stage in control_batch.stages:
        for tp, behind in stage.lag():
            metrics.CONSUMER_LAG.labels(tp.topic, str(tp.partition)).set(behind)
