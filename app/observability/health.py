"""Readiness checks shared by the API (``/readyz``) and the worker (its ``/readyz``): each asks
the real component now, with a deadline, rather than trusting cached metadata."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

CHECK_SECONDS = 2.0
OK = "ok"


async def database_check(engine: AsyncEngine) -> str:
    """``ok`` when the database answers ``select 1`` in time, else why not."""
    try:
        async with asyncio.timeout(CHECK_SECONDS), engine.connect() as conn:
            await conn.execute(text("select 1"))
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a check result
        return f"unavailable: {type(exc).__name__}"
    return OK


async def broker_check(client: Any) -> str:
    """``ok`` when a broker answers a metadata request from the aiokafka ``client`` in time."""
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            await client.fetch_all_metadata()
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a check result
        return f"unavailable: {type(exc).__name__}"
    return OK
