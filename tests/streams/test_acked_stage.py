"""The delivery stages' offsets (tables/acked_stage.py): a partition's committed offset is its first
record not acknowledged yet, whatever order the acknowledgements come in; an acknowledgement of a
record handed out before a rebalance moves nothing; what was acknowledged is committed before the
partitions go."""

from __future__ import annotations

from typing import Any

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from tables.acked_stage import AckedRecord, AckedStage

SRC = "actions.webhook"


class FakeConsumer:
    def __init__(self) -> None:
        self.commits: list[dict[TopicPartition, int]] = []

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.commits.append(dict(offsets))


def _record(stage: AckedStage, partition: int, offset: int) -> AckedRecord:
    rec: ConsumerRecord[bytes, bytes] = ConsumerRecord(SRC, partition, offset, 1_000, 0, b"k", b"{}", None, 1, 2, [])
    stage.acks[partition].handed.append(offset)
    return AckedRecord(rec, stage, stage.epoch)


async def _assigned(partitions: set[int]) -> tuple[AckedStage, FakeConsumer]:
    consumer = FakeConsumer()
    stage = AckedStage("deliveries.webhook", SRC, consumer)  # type: ignore[arg-type]  # commits only
    await stage.on_partitions_assigned([TopicPartition(SRC, p) for p in partitions])
    return stage, consumer


async def test_the_commit_is_the_first_record_not_acknowledged() -> None:
    stage, consumer = await _assigned({0, 1})
    records: dict[int, Any] = {o: _record(stage, 0, o) for o in (10, 11, 12, 13)}
    other = _record(stage, 1, 4)
    records[12].ack()
    records[13].ack()
    await stage._commit_settled()
    assert consumer.commits == [], "10 is not settled: nothing moves"
    records[10].ack()
    other.ack()
    await stage._commit_settled()
    assert consumer.commits == [{TopicPartition(SRC, 0): 11, TopicPartition(SRC, 1): 5}]
    records[11].ack()
    await stage._commit_settled()
    await stage._commit_settled()  # nothing new: no commit
    assert consumer.commits[-1] == {TopicPartition(SRC, 0): 14} and len(consumer.commits) == 2
    assert stage.applied == {0: 14, 1: 5}
    assert records[10].message.timestamp == 1.0, "seconds, as the delivery stage reads it"


async def test_an_acknowledgement_from_before_a_rebalance_moves_nothing_and_the_settled_are_committed_first() -> None:
    stage, consumer = await _assigned({0})
    first, second = _record(stage, 0, 7), _record(stage, 0, 8)
    first.ack()
    await stage.on_partitions_revoked([TopicPartition(SRC, 0)])
    assert consumer.commits == [{TopicPartition(SRC, 0): 8}], "what was settled is committed before the partition goes"
    await stage.on_partitions_assigned([TopicPartition(SRC, 0)])
    second.ack()  # written after the rebalance: its next owner (maybe this worker) reads it again
    await stage._commit_settled()
    assert consumer.commits == [{TopicPartition(SRC, 0): 8}]
    assert stage.to_seek == {0}, "the partition is placed again at its committed offset"
