"""RocksDB's memory in the worker: one block cache and one memtable budget for every table
partition of the process (README "Memory").

Faust opens one RocksDB per table partition, each with its own 2 GiB block cache and up to three
64 MiB memtables: a worker holding 8 partitions of 2 tables could grow to gigabytes as its key
count grows. Here every database of the process shares one LRU block cache of
TOCSIN_ROCKSDB_BLOCK_CACHE_MB (index and filter blocks included, so they are bounded too) and one
write-buffer manager of TOCSIN_ROCKSDB_WRITE_BUFFER_MB: memtables are flushed to disk once their
total reaches it. Only memory changes: every value is on disk and in the changelog as before.
"""

from __future__ import annotations

from typing import Any

import rocksdict
from faust.stores import rocksdb as faust_rocksdb

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
    """Make every RocksDB Faust opens from now on use the process's shared cache and memtable budget."""
    if _shared:
        return
    cache_bytes = settings.memory.rocksdb_block_cache_mb * MB
    buffer_bytes = settings.memory.rocksdb_write_buffer_mb * MB
    _shared["cache"] = rocksdict.Cache(cache_bytes)
    _shared["write_buffers"] = rocksdict.WriteBufferManager(buffer_bytes, False)
    _shared["budget"] = (cache_bytes, buffer_bytes)
    original = faust_rocksdb.RocksDBOptions.as_options

    def as_options(self: Any) -> Any:
        options = original(self)
        if not self.use_rocksdict:
            return options
        table = rocksdict.BlockBasedOptions()
        table.set_bloom_filter(self.bloom_filter_size, True)
        table.set_block_cache(_shared["cache"])
        table.set_cache_index_and_filter_blocks(True)
        table.set_pin_l0_filter_and_index_blocks_in_cache(True)
        table.set_index_type(rocksdict.BlockBasedIndexType.binary_search())
        options.set_block_based_table_factory(table)
        # one memtable of at most a quarter of the budget per database; all of them within the budget
        options.set_write_buffer_size(max(buffer_bytes // 4, MB))
        options.set_max_write_buffer_number(2)
        options.set_write_buffer_manager(_shared["write_buffers"])
        return options

    faust_rocksdb.RocksDBOptions.as_options = as_options  # type: ignore[method-assign]
