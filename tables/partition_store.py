"""One stage's local state for one source partition: a RocksDB database (rocksdict, raw bytes)
holding the partition's keys and, beside them, the offset of the last changelog record they
include. Written only as whole write batches (:meth:`PartitionStore.apply`), so the values and
their changelog offset always move together: quixstreams' ``RocksDBStorePartition`` and Kafka
Streams' checkpoint file in one.

Memory: every store of the process shares one block cache and one memtable budget
(:mod:`tables.rocksdb_memory`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import rocksdict

from tables import rocksdb_memory

# Beside the state's own keys, which are Kafka keys ("org/topic/status/partition key"): never one of them.
OFFSET_KEY = b"\x00tocsin\x00changelog-offset"
MB = 1024 * 1024


def _options(settings_budget: tuple[int, int] | None) -> Any:
    options = rocksdict.Options(raw_mode=True)
    options.create_if_missing(True)
    if settings_budget is not None:
        cache, buffers = rocksdb_memory.shared_cache(), rocksdb_memory.shared_write_buffers()
        table = rocksdict.BlockBasedOptions()
        table.set_bloom_filter(10, True)
        table.set_block_cache(cache)
        table.set_cache_index_and_filter_blocks(True)
        table.set_pin_l0_filter_and_index_blocks_in_cache(True)
        options.set_block_based_table_factory(table)
        options.set_write_buffer_size(max(settings_budget[1] // 4, MB))
        options.set_max_write_buffer_number(2)
        options.set_write_buffer_manager(buffers)
    return options


class PartitionStore:
    """The state of one (stage, partition), opened from ``path`` (created when missing)."""

    def __init__(self, path: Path, *, shared_memory: bool = True) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        budget = rocksdb_memory.budget() if shared_memory else None
        self._db = rocksdict.Rdict(str(path), options=_options(budget))

    def get(self, key: bytes) -> bytes | None:
        value: bytes | None = self._db.get(key)
        return value

    def changelog_offset(self) -> int | None:
        """The offset of the last changelog record the store includes; None for a new store."""
        raw = self._db.get(OFFSET_KEY)
        return None if raw is None else int(raw)

    def apply(self, values: Mapping[bytes, bytes | None], changelog_offset: int) -> None:
        """Store ``values`` (None deletes the key) and ``changelog_offset`` in one atomic write."""
        self.apply_records(values.items(), changelog_offset)

    def apply_records(self, records: Iterable[tuple[bytes, bytes | None]], changelog_offset: int) -> int:
        """Changelog records in their order (a later record of a key wins), then the offset; one write.
        Returns how many records were applied."""
        batch = rocksdict.WriteBatch(raw_mode=True)
        n = 0
        for key, value in records:
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
            n += 1
        batch.put(OFFSET_KEY, str(changelog_offset).encode())
        self._db.write(batch)
        return n

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every stored key and value (not the changelog offset)."""
        for key, value in self._db.items():
            if key != OFFSET_KEY:
                yield key, value  # type: ignore[misc]  # raw mode: keys and values are bytes

    def close(self) -> None:
        self._db.close()

    def wipe(self) -> None:
        """Close and delete the store (its changelog rebuilds it)."""
        self._db.close()
        shutil.rmtree(self.path, ignore_errors=True)
