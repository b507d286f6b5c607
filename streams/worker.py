"""Entry point of ``tocsin worker``: registers the stages and runs the Faust worker."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from app import gc_tuning
from app.domain.delivery import kinds as delivery_kinds
from app.kafka.app import app, settings
from app.kafka.config_changes import follow_changes
from app.kafka.topics import ensure_topics_when_reachable
from app.observability import tracing
from app.observability.logthrottle import throttle_library_logs
from app.settings import Settings
from streams import actions, control_batch, idempotency, ops, sinks, stage_runner
from streams.resources import resources
from streams.retry import RetryScheduler
from tables.kafka_access import check_access

PAGES = (ops.healthz, ops.readyz, ops.prometheus_metrics)
log = logging.getLogger(__name__)


# The stages on whole batches, each on a consumer of its own (streams/stage_runner.py), by name.
STAGES: dict[str, Callable[[Settings], stage_runner.StageSpec]] = {
    "control": control_batch.control_spec,  # publish → decided: traces, incident actions, deliveries
    "idempotency": idempotency.idempotency_spec,  # idempotency → the first of each key forwarded to publish
    "incidents": sinks.incident_sink,  # incident actions → incidents
    "traces": sinks.trace_sink,  # traces → trace steps, control-state views
}
STAGE_NAMES = [*STAGES, *(kind.stage for kind in delivery_kinds.KINDS)]  # and a delivery stage per kind
stage_runner.expected[:] = STAGE_NAMES


def _stage_task(name: str, run: Callable[[], Awaitable[None]]) -> Any:
    async def stage() -> None:
        await stage_runner.run_forever(name, run)

    stage.__name__ = stage.__qualname__ = f"{name.replace('.', '_')}_stage"
    return app.task(stage)


def _batch_stage(make: Callable[[Settings], stage_runner.StageSpec]) -> Callable[[], Awaitable[None]]:
    """Runs the stage ``make`` describes, with a fresh handler at every start."""
    return lambda: stage_runner.run_stage(settings, make(settings))


STAGE_TASKS = [
    *(_stage_task(name, _batch_stage(make)) for name, make in STAGES.items()),
    *(
        _stage_task(kind.stage, functools.partial(actions.run_deliveries, settings, kind.name))
        for kind in delivery_kinds.KINDS
    ),
]


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
    gc_tuning.tune()  # every module is imported by now (app/gc_tuning.py)
    worker = Worker(app, loglevel=settings.log_level, quiet=True, override_logging=False)
    worker.spinner = None  # with a spinner (log level ≥ WARN) Faust sets the root logger to DEBUG
    worker.execute_from_commandline()
