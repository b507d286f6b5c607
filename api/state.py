"""Per-process resources of an API replica, created in the lifespan."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from aiokafka import AIOKafkaProducer
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config_cache import TTLCache, announce_change
from app.settings import Settings
from app.store.accounts import Principal

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TopicRef:
    id: str
    key: str
    status: str
    policy: str


@dataclass
class ApiState:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    producer: AIOKafkaProducer
    principals: TTLCache[str, Principal]
    topics: TTLCache[tuple[str, str], TopicRef]
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def invalidate(self, org_id: str) -> None:
        self.topics.invalidate_org(org_id)
        self.principals.invalidate_org(org_id)

    async def config_changed(self, org_id: str, what: str) -> None:
        """Drop this replica's cache now and tell the others (and the workers)."""
        self.invalidate(org_id)
        try:
            await announce_change(self.producer, self.settings, org_id, what)
        except Exception as exc:  # noqa: BLE001 - the TTL still bounds staleness
            log.warning("could not announce config change of %s (%s): %s", org_id, what, exc)
