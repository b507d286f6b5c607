"""The memory bounds of the worker and the API (docs/operations/memory.md), as one group.

Every in-process cache keeps at most this many entries (least recently used out first; ``tocsin_cache_*``
metrics; app/caches/). States stay in RocksDB and the changelog: an evicted state is read again, an
auto-resolve time or idempotency expiry beyond its window is found again by a scan of the table.
RocksDB's own memory: one block cache and one memtable budget per process.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class MemoryBounds(BaseSettings):
    """How much each in-process cache, window and RocksDB budget may hold (variables keep their names)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

    control_state_cache_size: int = Field(
        default=20_000,
        ge=0,
        le=10_000_000,
        description=("decoded control states kept in memory per worker, least recently used out first (0 keeps none)"),
    )
    control_due_window_size: int = Field(
        default=50_000,
        ge=10,
        le=10_000_000,
        description=("the earliest auto-resolve times kept in memory per worker; beyond, found again by a scan"),
    )
    idempotency_expiry_window_size: int = Field(
        default=50_000,
        ge=10,
        le=10_000_000,
        description=("the oldest idempotency keys kept in memory for their expiry; beyond, found again by a scan"),
    )
    config_cache_size: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="topic configurations per worker and topic lookups per API replica kept in memory",
    )
    auth_cache_size: int = Field(
        default=10_000, ge=1, le=1_000_000, description="authenticated tokens kept in memory per API replica"
    )
    rate_limit_keys: int = Field(
        default=100_000,
        ge=1,
        le=10_000_000,
        description="publish rate-limit buckets per API replica (least recently used out first)",
    )
    rocksdb_block_cache_mb: int = Field(
        default=64, ge=1, le=65_536, description="one RocksDB block cache for every table partition of a worker"
    )
    rocksdb_write_buffer_mb: int = Field(
        default=64, ge=4, le=65_536, description="one memtable budget for every table partition of a worker"
    )
