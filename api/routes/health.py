"""Liveness and readiness."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import Field

from api.deps import get_state
from api.models import Out
from api.responses import json_response
from app.observability import metrics
from app.observability.health import OK, broker_check, database_check

router = APIRouter(tags=["health"])


class HealthOut(Out):
    status: Literal["ok"]


class ReadyOut(Out):
    status: Literal["ready", "not ready"]
    checks: dict[str, str] = Field(description='database, broker, config_changes: "ok" or what is wrong')


@router.get("/healthz", response_model=HealthOut)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/metrics",
    response_class=PlainTextResponse,
    responses={200: {"content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}}}},
)
async def prometheus_metrics() -> Response:
    """Prometheus metrics of this API replica (requests, publishes, token exchanges)."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)


@router.get(
    "/readyz",
    response_model=ReadyOut,
    responses={503: {"model": ReadyOut, "description": "not ready: the failing checks say why"}},
)
async def readyz(request: Request) -> Response | dict[str, Any]:
    """Ready when the database and a broker answer now and the config-changes topic is followed."""
    state = get_state(request)
    database, broker = await asyncio.gather(database_check(state.engine), broker_check(state.producer.client))
    checks = {
        "database": database,
        "broker": broker,
        "config_changes": OK if state.changes_followed.is_set() else "not yet following",
    }
    ok = all(v == OK for v in checks.values())
    return json_response({"status": "ready" if ok else "not ready", "checks": checks}, 200 if ok else 503)
