"""The batch stage's checkpoint order and its rebalance rules, with fakes for the consumer and the
producer (no broker): tests/integration/test_batch_stage.py runs the same engine on a real one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from aiokafka.errors import CommitFailedError, KafkaConnectionError
from aiokafka.structs import ConsumerRecord, TopicPartition

from tables.batch_stage import BatchStage, Checkpoint, Records
from tables.partition_store import PartitionStore


class FakeBatch:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def append(self, *, key: bytes, value: bytes | None, timestamp: None) -> object:
        self.records.append((key, value))
        return object()


class FakeProducer:
    """Records what was sent, in order; an output topic named in ``failing`` fails its delivery."""

    def __init__(self, failing: set[str] | None = None) -> None:
        self.sent: list[str] = []
        self.failing = failing or set()
        self.offsets: dict[str, int] = {}

    def _future(self, topic: str, count: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if topic in self.failing:
            future.set_exception(KafkaConnectionError("the partition's leader is gone"))
        else:
            offset = self.offsets.get(topic, 0)
            future.set_result(type("Meta", (), {"offset": offset})())
            self.offsets[topic] = offset + count
        return future

    async def send(self, topic: str, value: bytes, *, key: bytes | None = None, **_options: Any) -> Any:
        self.sent.append(topic)
        return self._future(topic, 1)

    def create_batch(self) -> FakeBatch:
        return FakeBatch()

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> Any:
        self.sent.append(topic)
        return self._future(topic, len(batch.records))


class FakeConsumer:
    def __init__(self, commit_fails: bool = False) -> None:
        self.commit_fails = commit_fails
        self.commits: list[dict[TopicPartition, int]] = []

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.commit_fails:
            raise CommitFailedError("the group has already rebalanced")
        self.commits.append(offsets)


def _record(partition: int, offset: int, key: bytes = b"k", value: bytes = b"1") -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord("src", partition, offset, 0, 0, key, value, None, len(key), len(value), [])


def _stage(tmp_path: Path, consumer: Any, producer: Any, handler: Any) -> BatchStage:
    stage = BatchStage("t", "src", "cl", consumer, None, producer, tmp_path, handler)
    stage.stores[0] = PartitionStore(tmp_path / "t-0.db", shared_memory=False)
    stage.assigned = frozenset({0})
    return stage


async def _writes_a_state(records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
    for partition, batch in records.items():
        for rec in batch:
            checkpoint.send("out", b"effect", partition=partition)
            checkpoint.put(partition, rec.key, b"state")


async def test_the_changelog_is_sent_only_once_the_outputs_are_acknowledged(tmp_path: Path) -> None:
    """Defect (found in review): the outputs and the changelog records were sent together. A changelog
    acknowledged while an output failed (or a kill between the two) left a state whose records the
    next owner skips as applied, and their outputs were never sent. Now the changelog waits."""
    producer = FakeProducer(failing={"out"})
    consumer = FakeConsumer()
    stage = _stage(tmp_path, consumer, producer, _writes_a_state)
    with pytest.raises(KafkaConnectionError):
        await stage._process([_record(0, 5)], stage.epoch, {})
    assert producer.sent == ["out"], "no changelog record may be sent before the outputs are acknowledged"
    assert consumer.commits == [] and stage.stores[0].changelog_offset() is None
    stage.stores[0].close()


async def test_a_batch_goes_out_in_checkpoint_order(tmp_path: Path) -> None:
    producer = FakeProducer()
    consumer = FakeConsumer()
    stage = _stage(tmp_path, consumer, producer, _writes_a_state)
    await stage._process([_record(0, 5), _record(0, 6, key=b"j")], stage.epoch, {})
    assert producer.sent == ["out", "out", "cl"]
    assert consumer.commits == [{TopicPartition("src", 0): 7}]
    assert stage.stores[0].get(b"k") == b"state" and stage.stores[0].changelog_offset() == 1
    stage.stores[0].close()


async def test_a_batch_revoked_while_it_was_decided_sends_nothing(tmp_path: Path) -> None:
    """Defect (found in review): the epoch was checked only before the handler; a worker dropped from
    the group while deciding still sent its states, over the newer ones of the partition's next owner."""
    producer = FakeProducer()
    consumer = FakeConsumer()

    async def revoked_meanwhile(records: Records, checkpoint: Checkpoint, stores: Any) -> None:
        await _writes_a_state(records, checkpoint, stores)
        stage.epoch += 1  # what on_partitions_revoked does first

    stage = _stage(tmp_path, consumer, producer, revoked_meanwhile)
    epoch = stage.epoch
    with pytest.raises(Exception, match="revoked"):
        await stage._process([_record(0, 5)], epoch, {})
    assert producer.sent == [] and consumer.commits == []
    stage.stores[0].close()


async def test_a_commit_the_group_refuses_sends_the_partitions_back(tmp_path: Path) -> None:
    """Defect (found in review): a refused commit was taken for a revocation already seen; the next
    fetch, made after the batch, was decided on top of a batch whose states were never stored."""
    producer = FakeProducer()
    consumer = FakeConsumer(commit_fails=True)
    stage = _stage(tmp_path, consumer, producer, _writes_a_state)
    epoch = stage.epoch
    with pytest.raises(Exception, match="revoked"):
        await stage._process([_record(0, 5)], epoch, {})
    assert stage.epoch != epoch, "what was fetched after the batch must be dropped"
    assert stage.to_seek == {0}, "the partition goes back to its committed offset"
    assert stage.stores[0].changelog_offset() is None
    stage.stores[0].close()


async def test_a_partition_whose_fetch_ended_on_transaction_markers_commits_past_them(tmp_path: Path) -> None:
    """A fetch whose last records are followed by a commit marker leaves the consumer's position past
    the marker: the commit is that position, so a caught-up partition shows no lag (it showed 1 per
    partition of the transactional publish topic). A batch split before the fetch's last record
    commits only past its own last record."""
    producer = FakeProducer()
    consumer = FakeConsumer()
    stage = _stage(tmp_path, consumer, producer, _writes_a_state)
    ends = {0: (6, 8)}  # the fetch's last record of partition 0 is 6; the position after it, 8
    await stage._process([_record(0, 5)], stage.epoch, ends)
    await stage._process([_record(0, 6, key=b"j")], stage.epoch, ends)
    assert consumer.commits == [{TopicPartition("src", 0): 6}, {TopicPartition("src", 0): 8}]
    stage.stores[0].close()


async def _stores_nothing(records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
    for partition in records:
        checkpoint.send("out", b"row", partition=partition)


async def test_a_sink_commits_its_applied_batches_together_and_before_a_rebalance(tmp_path: Path) -> None:
    """A stage without state (a sink) commits every ``commit_every_s``, not every batch; what it
    applied is committed when the source goes quiet and before its partitions are revoked."""
    producer, consumer = FakeProducer(), FakeConsumer()
    stage = BatchStage("s", "src", None, consumer, None, producer, tmp_path, _stores_nothing, commit_every_s=3600)
    stage.assigned = frozenset({0, 1})
    stage.committed_at = time.monotonic()  # a commit just happened
    await stage._process([_record(0, 5)], stage.epoch, {})
    await stage._process([_record(1, 9), _record(0, 6)], stage.epoch, {})
    assert consumer.commits == [] and stage.uncommitted == {0: 7, 1: 10}
    await stage._commit_due(stage.epoch, force=True)  # the run loop's quiet fetch
    assert consumer.commits == [{TopicPartition("src", 0): 7, TopicPartition("src", 1): 10}]
    await stage._process([_record(0, 7)], stage.epoch, {})
    await stage.on_partitions_revoked([TopicPartition("src", 0)])
    assert consumer.commits[-1] == {TopicPartition("src", 0): 8} and stage.uncommitted == {}
