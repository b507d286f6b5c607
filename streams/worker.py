"""Entry point of ``tocsin worker``: registers the agents and runs the Faust worker."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from app.kafka.app import app, settings
from app.kafka.config_changes import follow_changes
from app.kafka.topics import ensure_topics_when_reachable
from app.observability import tracing
from app.observability.logthrottle import throttle_library_logs
from streams import actions, control_batch, idempotency, ops, sinks
from streams.resources import resources
from streams.retry import RetryScheduler
from streams.tail_watch import run_forever
from streams.tails import tail_watch
from tables.kafka_access import check_access

AGENTS = (
    idempotency.idempotency,
    sinks.incident_sink,
    sinks.trace_sink,
    actions.push_deliveries,
    actions.email_deliveries,
    actions.webhook_deliveries,
)
PAGES = (ops.healthz, ops.readyz, ops.prometheus_metrics)
log = logging.getLogger(__name__)


@app.task  # type: ignore[untyped-decorator]  # faust ships no type hints
async def watch_the_tails() -> None:
    """Every source partition applied up to its last stable offset within seconds (streams/tail_watch.py)."""
    await run_forever(tail_watch)


@app.task  # type: ignore[untyped-decorator]  # faust ships no type hints
async def control_stage() -> None:
    """The control stage on whole batches, on a consumer of its own (streams/control_batch.py)."""
    while True:
        try:
            await control_batch.run_control_stage(settings)
        except Exception as exc:
            log.exception("control stage restarting after error: %s", exc)
            await asyncio.sleep(1.0)


@app.task  # type: ignore[untyped-decorator]  # faust ships no type hints
async def follow_config_changes() -> None:
    """Drop cached topic configuration when the API announces a change."""
    while True:
        try:
            await follow_changes(settings, resources().topics.invalidate_org)
        except Exception as exc:  # noqa: BLE001 - keep following whatever the broker does
            log.warning("config-changes follower restarting after error: %s", exc)
            await asyncio.sleep(1.0)


@app.task  # type: ignore[untyped-decorator]  # faust ships no type hints
async def retry_scheduler() -> None:
    """Bring waiting deliveries back when due (streams/retry.py)."""
    while True:
        try:
            await RetryScheduler(settings).run()
        except Exception as exc:  # noqa: BLE001 - keep scheduling whatever the broker does
            log.warning("retry scheduler restarting after error: %s", exc)
            await asyncio.sleep(1.0)


def run_worker() -> None:
    from faust import Worker

    Path(app.conf.datadir).mkdir(parents=True, exist_ok=True)
    throttle_library_logs()
    tracing.setup(settings.otlp_endpoint, settings.trace_sample_ratio, "worker")  # nothing when no OTLP endpoint is set
    asyncio.run(
        ensure_topics_when_reachable(settings, check_access)
    )  # the changelogs are named after this worker's group
    # Faust leaves logging as ``tocsin worker`` set it up (app/observability/logs.py: one format for
    # its lines and ours) instead of installing its own handler and format.
    worker = Worker(app, loglevel=settings.log_level, quiet=True, override_logging=False)
    worker.spinner = None  # with a spinner (log level ≥ WARN) Faust sets the root logger to DEBUG
    worker.execute_from_commandline()
