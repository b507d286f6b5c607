"""How the control agent's state writes reach the changelog and RocksDB, with fakes for Faust's
store and producer (no broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import rocksdict
from faust.stores import rocksdb as faust_rocksdb
from faust.types import TP

import tables.faust_adapter
from tables.faust_adapter import FaustTable

CHANGELOG = "t.w.control-state-changelog"


class FakeBatch:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes]] = []

    def append(self, *, key: bytes, value: bytes, timestamp: None) -> object:
        self.records.append((key, value))
        return object()  # not full


class FakeProducer:
    def __init__(self) -> None:
        self.sent: list[tuple[int, FakeBatch, asyncio.Future[Any]]] = []

    def create_batch(self) -> FakeBatch:
        return FakeBatch()

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> asyncio.Future[Any]:
        assert topic == CHANGELOG
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.sent.append((partition, batch, future))
        return future


class FakeStore:
    """Faust's RocksDB store as FaustTable.write uses it: one real RocksDB per partition."""

    offset_key = b"__faust\0offset__"

    def __init__(self, root: Path, log: list[str]) -> None:
        self.root, self.log = root, log
        self.dbs: dict[int, rocksdict.Rdict] = {}

    def _open(self, partition: int) -> rocksdict.Rdict:
        if partition not in self.dbs:
            path = str(self.root / f"p{partition}")
            self.dbs[partition] = rocksdict.Rdict(path, options=rocksdict.Options(raw_mode=True))
        return self.dbs[partition]

    def _db_for_partition(self, partition: int) -> Any:
        db = self._open(partition)

        def write(batch: rocksdict.WriteBatch) -> None:
            self.log.append(f"rocksdb {partition}")
            db.write(batch)

        return SimpleNamespace(write=write)

    def value(self, partition: int, key: bytes) -> bytes | None:
        found: bytes | None = self._open(partition).get(key)
        return found


def _event(partition: int, offset: int = 0) -> Any:
    return SimpleNamespace(message=SimpleNamespace(partition=partition, offset=offset))


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Any, FakeProducer, list[str]]]:
    log: list[str] = []
    producer = FakeProducer()
    monkeypatch.setattr(
        tables.faust_adapter, "_faust", SimpleNamespace(producer=SimpleNamespace(_ensure_producer=lambda: producer))
    )
    store = FakeStore(tmp_path, log)
    table = SimpleNamespace(data=store, changelog_topic=SimpleNamespace(get_topic_name=lambda: CHANGELOG))
    yield table, producer, log
    for db in store.dbs.values():
        db.close()


ITEMS = [(_event(0), b"k1", b"v1"), (_event(1), b"k2", b"v2"), (_event(0), b"k3", b"v3")]


async def test_rocksdb_is_written_only_after_the_changelog_has_the_states(fakes: Any) -> None:
    table, producer, log = fakes
    writing = asyncio.create_task(FaustTable(table).write(ITEMS))
    for _ in range(10):  # let it send both partitions' batches and wait for the broker
        await asyncio.sleep(0)
    assert [(p, batch.records) for p, batch, _f in producer.sent] == [
        (0, [(b"k1", b"v1"), (b"k3", b"v3")]),
        (1, [(b"k2", b"v2")]),
    ]
    assert not writing.done() and log == [], "RocksDB written before the changelog acknowledged the states"
    for offset, (_p, _batch, future) in zip((40, 7), producer.sent, strict=True):
        future.set_result(SimpleNamespace(offset=offset))  # the base offset of the batch
    await writing
    assert log == ["rocksdb 0", "rocksdb 1"]
    store = table.data
    assert (store.value(0, b"k1"), store.value(0, b"k3"), store.value(1, b"k2")) == (b"v1", b"v3", b"v2")
    # the persisted changelog offset (the last record of each partition) in the same write as the states
    assert (store.value(0, store.offset_key), store.value(1, store.offset_key)) == (b"41", b"7")


async def test_a_refused_changelog_write_leaves_rocksdb_and_the_persisted_offset_alone(fakes: Any) -> None:
    table, producer, log = fakes
    writing = asyncio.create_task(FaustTable(table).write(ITEMS))
    for _ in range(10):
        await asyncio.sleep(0)
    producer.sent[0][2].set_result(SimpleNamespace(offset=0))
    producer.sent[1][2].set_exception(RuntimeError("NotEnoughReplicas"))
    with pytest.raises(RuntimeError, match="NotEnoughReplicas"):
        await writing
    assert log == []  # the batch is processed again (streams/batches.py): nothing of it may be stored yet
    assert table.data.value(0, b"k1") is None and table.data.value(0, table.data.offset_key) is None


class RealStore(FakeStore):
    """Faust's own RocksDB store methods (persisted offset, changelog batches: patched by
    tables.faust_patches) on one real RocksDB per partition."""

    use_rocksdict = True
    persisted_offset = faust_rocksdb.Store.persisted_offset
    set_persisted_offset = faust_rocksdb.Store.set_persisted_offset
    apply_changelog_batch = faust_rocksdb.Store.apply_changelog_batch

    def __init__(self, root: Path) -> None:
        super().__init__(root, [])

    def _db_for_partition(self, partition: int) -> Any:
        return self._open(partition)


def _changelog_event(partition: int, offset: int, key: bytes, value: bytes) -> Any:
    tp = TP(CHANGELOG, partition)
    return SimpleNamespace(message=SimpleNamespace(tp=tp, partition=partition, offset=offset, key=key, value=value))


@pytest.fixture
def real_store(tmp_path: Path) -> Iterator[RealStore]:
    store = RealStore(tmp_path)
    yield store
    for db in store.dbs.values():
        db.close()


def _apply(store: RealStore, events: list[Any], apply: Any = None) -> None:
    (apply or RealStore.apply_changelog_batch)(store, events, lambda k: k, lambda v: v)


def test_a_changelog_record_read_again_never_takes_the_local_store_back(real_store: RealStore) -> None:
    """What tests/e2e/test_scaling.py caught: Faust's recovery read the agents' own changelog records
    after it ended, and a rebalance's buffer flush applied them over the newer states written since,
    moving the persisted offset back (a partition's store 34 records back: offset 491, changelog at
    525). Before the patch (Faust's own apply, below) the store went back."""
    store = real_store
    _apply(store, [_changelog_event(0, 10, b"k", b"old"), _changelog_event(0, 11, b"other", b"x")])
    # the agent writes a newer state (FaustTable.write: changelog offset 12, then RocksDB with it)
    db = store._db_for_partition(0)
    db[b"k"] = b"new"
    db[store.offset_key] = b"12"
    stale = [_changelog_event(0, 10, b"k", b"old"), _changelog_event(0, 12, b"k", b"new")]
    _apply(store, stale)
    assert db[b"k"] == b"new" and store.persisted_offset(TP(CHANGELOG, 0)) == 12
    # newer records (another worker's, while this one was not the owner) are applied as before
    _apply(store, [_changelog_event(0, 13, b"k", b"newer"), _changelog_event(1, 0, b"p1", b"y")])
    assert db[b"k"] == b"newer" and store.persisted_offset(TP(CHANGELOG, 0)) == 13
    assert store._db_for_partition(1)[b"p1"] == b"y"
    # Faust's own apply, unpatched: a stale read takes the store and its offset back
    _apply(store, [_changelog_event(0, 10, b"k", b"old")], faust_rocksdb.Store.apply_changelog_batch.__wrapped__)
    assert db[b"k"] == b"old" and store.persisted_offset(TP(CHANGELOG, 0)) == 10
