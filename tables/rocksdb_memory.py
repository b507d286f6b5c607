"""RocksDB's memory in the worker: one block cache and one memtable budget for every table
partition of the process (README "Memory").

A stage opens one RocksDB per partition; with RocksDB's defaults each would have its own block
cache and memtables, and a worker holding 8 partitions of 2 stages could grow to gigabytes as its
key count grows. Here every database of the process shares one LRU block cache of
TOCSIN_ROCKSDB_BLOCK_CACHE_MB (index and filter blocks included, so they are bounded too) and one
write-buffer manager of TOCSIN_ROCKSDB_WRITE_BUFFER_MB: memtables are flushed to disk once their
total reaches it. Only memory changes: every value is on disk and in the changelog as before.
"""

from __future__ import annotations

from typing import Any

import rocksdict

from app.settings import Settings

MB = 1024 * 1024

_shared: dict[str, Any] = {}


def shared_cache() -> Any:
    return _shared["cache"]


def shared_write_buffers() -> Any:
    return _shared["write_buffers"]


def budget() -> tuple[int, int] | None:
    """(block cache bytes, memtable bytes) of the process, None before :func:`install`."""
    return _shared.get("budget")


def install(settings: Settings) -> None:
    """The process's shared block cache and memtable budget, for every store opened from now on
    (tables/partition_store.py)."""
    if _shared:
        return
    cache_bytes = settings.memory.rocksdb_block_cache_mb * MB
    buffer_bytes = settings.memory.rocksdb_write_buffer_mb * MB
    _shared["cache"] = rocksdict.Cache(cache_bytes)
    _shared["write_buffers"] = rocksdict.WriteBufferManager(buffer_bytes, False)
    _shared["budget"] = (cache_bytes, buffer_bytes)
