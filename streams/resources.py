"""What the agents share inside one worker process: the store and the config cache."""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config_cache import TTLCache
from app.settings import get_settings
from app.store.db import create_engine, sessionmaker
from app.store.workflows import TopicConfig, load_topic_config


class WorkerResources:
    """Created on first use, inside the worker's event loop."""

    def __init__(self) -> None:
        settings = get_settings()
        self.engine: AsyncEngine = create_engine(settings.effective_database_url)
        self.sessions: async_sessionmaker[AsyncSession] = sessionmaker(self.engine)
        self.topics: TTLCache[tuple[str, str], TopicConfig | None] = TTLCache(settings.config_cache_seconds)

    async def topic_config(self, org_id: str, topic_id: str) -> TopicConfig | None:
        """The topic's configuration, cached; reloaded in the background before it expires
        (refresh-ahead), so the agents never wait for the database once a topic is warm."""

        async def load() -> tuple[str, TopicConfig | None]:
            async with self.sessions() as session:
                return org_id, await load_topic_config(session, org_id, topic_id)

        return await self.topics.get_or_load((org_id, topic_id), load)


@lru_cache(maxsize=1)
def resources() -> WorkerResources:
    return WorkerResources()
