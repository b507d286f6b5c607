"""Kafka partitioning of keyed records, the same as Java clients and Faust use."""

from __future__ import annotations

from aiokafka.partitioner import DefaultPartitioner

from app.caches import BoundedMemo

_default_partitioner = DefaultPartitioner()


class KeyPartitioner:
    """aiokafka's default partitioner (murmur2 of the key, as Java and Faust use) with a memo.

    Pure-Python murmur2 costs ~15 µs a record; publish keys repeat (organization, topic,
    status, partition key), so the partition of a key is remembered (bounded).
    """

    def __init__(self, size: int = 65_536) -> None:
        self._memo: BoundedMemo[tuple[bytes, int], int] = BoundedMemo(size)

    def __call__(self, key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        if key is None:
            chosen: int = _default_partitioner(key, all_partitions, available)
            return chosen
        memo = (key, len(all_partitions))
        partition = self._memo.get(memo)
        if partition is None or partition not in all_partitions:
            partition = self._memo.remember(memo, int(_default_partitioner(key, all_partitions, available)))
        return partition
