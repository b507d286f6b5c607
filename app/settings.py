"""All configuration, from environment variables prefixed ``TOCSIN_``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """One settings object for every process (api, worker, cli)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

    var_dir: Path = Path("var")
    database_url: str = ""
    kafka_bootstrap: str = "127.0.0.1:9092"
    topic_prefix: str = "tocsin."
    publish_partitions: int = Field(default=4, ge=1, le=256)
    worker_id: str = "tocsin"
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    access_log: bool = True
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    produce_timeout_seconds: float = Field(default=4.0, gt=0, le=30)
    producer_linger_ms: int = Field(default=2, ge=0, le=100)
    auth_cache_seconds: float = Field(default=1.0, ge=0, le=60)
    config_cache_seconds: float = Field(default=5.0, ge=0, le=300)
    sink_batch_size: int = Field(default=500, ge=1)
    sink_batch_seconds: float = Field(default=0.2, gt=0)

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.var_dir / 'tocsin.db').resolve()}"

    def topic(self, name: str) -> str:
        """Full Kafka topic name for one of the project's logical topics."""
        return f"{self.topic_prefix}{name}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
