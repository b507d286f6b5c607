"""``tocsin purge``: one retention pass."""

from __future__ import annotations

import asyncio
import json

from app.settings import Settings


async def _purge(settings: Settings) -> dict[str, int]:
    from app.store.db import create_engine
    from app.store.retention import purge

    engine = create_engine(settings.effective_database_url)
    try:
        return await purge(engine, settings)
    finally:
        await engine.dispose()


def cmd_purge(settings: Settings) -> None:
    """One retention pass (what the API process runs every TOCSIN_RETENTION_INTERVAL_SECONDS)."""
    print(json.dumps(asyncio.run(_purge(settings))), flush=True)
