"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy import text

from api.deps import get_state
from api.responses import json_response

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", response_model=None)
async def readyz(request: Request) -> Response | dict[str, Any]:
    """Ready when the database answers and the producer knows the broker."""
    state = get_state(request)
    checks: dict[str, str] = {}
    try:
        async with state.engine.connect() as conn:
            await conn.execute(text("select 1"))
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a check result
        checks["database"] = f"unavailable: {type(exc).__name__}"
    checks["broker"] = "ok" if state.producer.client.cluster.brokers() else "unavailable"
    checks["config_changes"] = "ok" if state.changes_followed.is_set() else "not yet following"
    ok = all(v == "ok" for v in checks.values())
    return json_response({"status": "ready" if ok else "not ready", "checks": checks}, 200 if ok else 503)
