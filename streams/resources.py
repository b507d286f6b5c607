"""What the agents share inside one worker process: the store and the config cache."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.caches import TTLCache
from app.domain.delivery import kinds
from app.domain.workflows.topic_config import TopicConfig
from app.executors.base import Executor
from app.executors.email import EmailExecutor
from app.executors.push import OutboxPushExecutor
from app.executors.webhook import WebhookExecutor
from app.observability.metrics import register_cache
from app.settings import Settings, get_settings
from app.store.db import create_engine, sessionmaker, when_available
from app.store.workflows import load_topic_config


class WorkerResources:
    """Created on first use, inside the worker's event loop."""

    def __init__(self) -> None:
        settings = get_settings()
        self.engine: AsyncEngine = create_engine(settings.effective_database_url)
        self.sessions: async_sessionmaker[AsyncSession] = sessionmaker(self.engine)
        self.topics: TTLCache[tuple[str, str], TopicConfig | None] = TTLCache(
            settings.config_cache_seconds, maxsize=settings.memory.config_cache_size
        )
        register_cache("worker_topic_configs", self.topics)
        self._executors: dict[str, Executor] = {}

    def executor(self, kind: str) -> Executor:
        """The executor of ``kind`` (PUSH, EMAIL, WEBHOOK), made on first use."""
        if kind not in self._executors:
            self._executors[kind] = make_executor(kind, get_settings())
        return self._executors[kind]

    async def topic_config(self, org_id: str, topic_id: str) -> TopicConfig | None:
        """The topic's configuration, cached; reloaded in the background before it expires
        (refresh-ahead), so the agents never wait for the database once a topic is warm."""

        async def read() -> tuple[str, TopicConfig | None]:
            async with self.sessions() as session:
                return org_id, await load_topic_config(session, org_id, topic_id)

        async def load() -> tuple[str, TopicConfig | None]:
            # a database outage holds the control stage here until the database is back
            return await when_available("topic config", read)

        return await self.topics.get_or_load((org_id, topic_id), load)


# the executor of each delivery kind (app/domain/delivery/kinds.py), from the worker's settings
EXECUTORS: dict[str, Callable[[Settings], Executor]] = {
    kinds.WEBHOOK.name: lambda settings: WebhookExecutor(settings.outbound.webhook_config()),
    kinds.EMAIL.name: lambda settings: EmailExecutor(settings.smtp.config()),
    kinds.PUSH.name: lambda _settings: OutboxPushExecutor(),
}
assert EXECUTORS.keys() == kinds.BY_NAME.keys(), "every delivery kind has an executor, and nothing else does"


def make_executor(kind: str, settings: Settings) -> Executor:
    if kind not in EXECUTORS:
        raise ValueError(f"no executor for {kind!r}")
    return EXECUTORS[kind](settings)


@lru_cache(maxsize=1)
def resources() -> WorkerResources:
    return WorkerResources()
