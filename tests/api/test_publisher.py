"""The transactional publisher (api/publisher.py): publishes share transactions; a 202 only for a
committed one, a 503 only for one that will never be committed (a fake producer stands in for
aiokafka's; tests/e2e/test_faults.py runs the real one against a paused broker)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.producers import Record as PublishedRecord
from api.publisher import TransactionalPublisher
from app.errors import Unavailable

TOPIC = "t.publish"


@dataclass
class Record:
    topic: str
    key: bytes
    value: bytes
    partition: int
    headers: list[tuple[str, bytes]]


@dataclass
class FakeBatch:
    """aiokafka's BatchBuilder: ``append`` answers None once ``capacity`` records are in."""

    capacity: int
    records: list[tuple[Any, Any, Any, list[tuple[str, bytes]]]] = field(default_factory=list)

    def append(self, *, key: Any, value: Any, timestamp: Any, headers: Any) -> object | None:
        if len(self.records) >= self.capacity:
            return None
        self.records.append((key, value, timestamp, list(headers)))
        return object()


@dataclass
class FakeProducer:
    """An in-memory transactional producer; the knobs make a step fail or hang."""

    name: str
    batch_capacity: int = 1_000_000  # records per record batch
    batches_sent: int = 0
    fail_send: bytes | None = None  # the value whose send fails
    hold_sends: bool = False  # acknowledgements never come
    commit_gate: asyncio.Event | None = None  # the commit waits for it
    fail_commit: bool = False
    hang_abort: bool = False
    fail_start: bool = False
    started: bool = False
    stopped: bool = False
    in_transaction: bool = False
    current: list[Record] = field(default_factory=list)
    committed: list[list[Record]] = field(default_factory=list)
    aborted: list[list[Record]] = field(default_factory=list)

    async def start(self) -> None:
        if self.fail_start:
            raise ConnectionError("broker unreachable")
        self.started = True

    async def stop(self) -> None:
        self.stopped = True

    async def partitions_for(self, topic: str) -> set[int]:
        return {0, 1, 2, 3}

    async def begin_transaction(self) -> None:
        assert not self.in_transaction, "one transaction at a time"
        self.in_transaction, self.current = True, []

    async def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: Any = None,
        timestamp_ms: Any = None,
        headers: Any = None,
    ) -> asyncio.Future[None]:
        assert self.in_transaction, "a send outside a transaction"
        self.current.append(Record(topic, key, value, partition, list(headers)))
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if value == self.fail_send:
            fut.set_exception(ConnectionError("send failed"))
        elif not self.hold_sends:
            fut.set_result(None)
        return fut

    def create_batch(self) -> FakeBatch:
        return FakeBatch(self.batch_capacity)

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> asyncio.Future[list[None]]:
        assert batch.records, "an empty batch sent"
        self.batches_sent += 1
        sent = [
            await self.send(topic, value=v, key=k, partition=partition, timestamp_ms=t, headers=h)
            for k, v, t, h in batch.records
        ]
        return asyncio.gather(*sent)

    async def commit_transaction(self) -> None:
        assert self.in_transaction
        if self.commit_gate is not None:
            await self.commit_gate.wait()
        if self.fail_commit:
            self.in_transaction = False
            raise RuntimeError("ProducerFenced")
        self.committed.append(self.current)
        self.in_transaction = False

    async def abort_transaction(self) -> None:
        assert self.in_transaction
        if self.hang_abort:
            await asyncio.Event().wait()
        self.aborted.append(self.current)
        self.in_transaction = False


class Producers:
    """The factory the publisher calls; ``next_knobs`` configure the next producer made."""

    def __init__(self, **knobs: Any) -> None:
        self.made: list[FakeProducer] = []
        self.next_knobs = knobs

    def __call__(self, lane: int = 0) -> FakeProducer:
        producer = FakeProducer(f"p{len(self.made)}", **self.next_knobs)
        self.made.append(producer)
        return producer

    def committed_values(self) -> list[bytes]:
        return [r.value for p in self.made for txn in p.committed for r in txn]


async def _publish(publisher: TransactionalPublisher, value: bytes, key: bytes | None = None) -> int:
    """202 or 503, as the route would answer."""
    try:
        await publisher.publish(TOPIC, key or value, value, 1)
    except Unavailable:
        return 503
    return 202


async def _started(producers: Producers, wait: float = 0.3, max_records: int = 1000) -> TransactionalPublisher:
    publisher = TransactionalPublisher(producers, timeout=wait, max_records=max_records)
    await publisher.start()
    return publisher


async def test_concurrent_publishes_share_one_transaction_one_record_batch_per_partition() -> None:
    producers = Producers()
    publisher = await _started(producers)
    try:
        values = [f"v{i}".encode() for i in range(12)]
        answers = await asyncio.gather(*(_publish(publisher, v) for v in values))
        assert answers == [202] * 12
        (producer,) = producers.made
        assert len(producer.committed) == 1, "all queued together: one transaction"
        (txn,) = producer.committed
        assert sorted(r.value for r in txn) == sorted(values)
        partitions = {record.partition for record in txn}
        assert len(partitions) > 1, "the keys spread over partitions"
        assert producer.batches_sent == len(partitions), "one record batch per partition"
        assert all(record.headers == [] for record in txn), "no header the worker does not read"
        assert publisher.transactions == 1 and publisher.aborted == 0
    finally:
        await publisher.stop()


async def test_one_failed_send_aborts_the_whole_group_and_the_next_one_commits() -> None:
    producers = Producers(fail_send=b"bad")
    publisher = await _started(producers)
    try:
        answers = await asyncio.gather(*(_publish(publisher, v) for v in (b"a", b"bad", b"c")))
        assert answers == [503, 503, 503], "not accepted: none of the group is committed"
        (producer,) = producers.made
        assert producer.committed == [] and len(producer.aborted) == 1
        assert await _publish(publisher, b"d") == 202
        assert producers.committed_values() == [b"d"]
        assert len(producers.made) == 1, "an aborted transaction keeps the producer"
    finally:
        await publisher.stop()


async def test_sends_never_acknowledged_give_503_at_the_deadline_and_are_aborted() -> None:
    producers = Producers(hold_sends=True)
    publisher = await _started(producers, wait=0.2)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        answers = await asyncio.gather(*(_publish(publisher, v) for v in (b"a", b"b")))
        assert answers == [503, 503]
        assert loop.time() - started < 0.2 + 0.15, "503 at the produce timeout"
        producer = producers.made[0]
        deadline = loop.time() + 2
        while not producer.aborted:  # the abort follows the answers
            assert loop.time() < deadline, "the transaction was not aborted"
            await asyncio.sleep(0.01)
        assert producer.committed == []
        assert sorted(r.value for r in producer.aborted[0]) == [b"a", b"b"]
    finally:
        await publisher.stop()


async def test_a_commit_asked_for_is_awaited_past_the_timeout_and_answers_202() -> None:
    gate = asyncio.Event()
    producers = Producers(commit_gate=gate)
    publisher = await _started(producers, wait=0.1)
    try:
        pending = asyncio.gather(*(_publish(publisher, v) for v in (b"a", b"b")))
        await asyncio.sleep(0.3)  # three timeouts pass while the commit is in progress
        assert not pending.done(), "no 503 while the commit may still succeed"
        gate.set()
        assert await pending == [202, 202]
        assert producers.made[0].aborted == []
    finally:
        await publisher.stop()


async def test_a_refused_commit_answers_503_for_the_group_and_replaces_the_producer() -> None:
    producers = Producers(fail_commit=True)
    publisher = await _started(producers)
    producers.next_knobs = {}  # only the first producer is refused
    try:
        assert await asyncio.gather(*(_publish(publisher, v) for v in (b"a", b"b"))) == [503, 503]
        assert await _publish(publisher, b"c") == 202
        assert len(producers.made) == 2 and producers.made[0].stopped
        assert producers.committed_values() == [b"c"]
    finally:
        await publisher.stop()


async def test_an_abort_that_hangs_replaces_the_producer() -> None:
    producers = Producers(fail_send=b"bad", hang_abort=True)
    publisher = await _started(producers, wait=0.2)
    try:
        assert await _publish(publisher, b"bad") == 503
        producers.next_knobs = {"fail_start": True}  # the broker is still unreachable once
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 3
        while len(producers.made) < 2:
            assert loop.time() < deadline, "the producer was not replaced"
            await asyncio.sleep(0.01)
        producers.next_knobs = {}
        deadline = loop.time() + 5
        while (answer := await _publish(publisher, b"c")) != 202:  # 503 until a new producer started
            assert answer == 503
            assert loop.time() < deadline, "no producer started again"
        assert producers.made[0].stopped and producers.made[1].stopped  # the one that failed to start too
        assert producers.committed_values() == [b"c"]
        assert producers.made[0].committed == []
    finally:
        await publisher.stop()


async def test_publishes_queued_during_a_transaction_form_the_next_and_given_up_ones_are_not_sent() -> None:
    gate = asyncio.Event()
    producers = Producers(commit_gate=gate)
    publisher = await _started(producers, wait=0.2)
    try:
        first = asyncio.ensure_future(_publish(publisher, b"first"))
        await asyncio.sleep(0.05)  # the first transaction is committing
        late = asyncio.ensure_future(_publish(publisher, b"late"))
        assert await late == 503, "queued past its deadline behind a slow commit"
        queued = [asyncio.ensure_future(_publish(publisher, v)) for v in (b"q1", b"q2")]
        await asyncio.sleep(0)
        gate.set()
        assert await first == 202
        assert await asyncio.gather(*queued) == [202, 202]
        committed = producers.made[0].committed
        assert [[r.value for r in txn] for txn in committed] == [[b"first"], [b"q1", b"q2"]]
        assert b"late" not in producers.committed_values(), "a publish answered 503 is never sent"
    finally:
        await publisher.stop()


async def test_max_records_bounds_a_transaction() -> None:
    producers = Producers()
    publisher = await _started(producers, max_records=4)
    try:
        assert await asyncio.gather(*(_publish(publisher, f"v{i}".encode()) for i in range(10))) == [202] * 10
        assert [len(txn) for txn in producers.made[0].committed] == [4, 4, 2]
    finally:
        await publisher.stop()


async def test_stop_lets_the_transaction_in_progress_end_and_refuses_what_is_queued() -> None:
    producers = Producers(hold_sends=True)
    publisher = await _started(producers, wait=0.5)
    in_flight = asyncio.ensure_future(_publish(publisher, b"a"))
    await asyncio.sleep(0.05)
    queued = asyncio.ensure_future(_publish(publisher, b"b"))
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await publisher.stop()
    assert loop.time() - started < 2 * 0.5
    assert await in_flight == 503 and await queued == 503
    assert producers.made[0].stopped and producers.made[0].committed == []
    assert len(producers.made[0].aborted) == 1


async def test_stop_waits_for_a_commit_in_progress() -> None:
    gate = asyncio.Event()
    producers = Producers(commit_gate=gate)
    publisher = await _started(producers, wait=0.5)
    in_flight = asyncio.ensure_future(_publish(publisher, b"a"))
    await asyncio.sleep(0.05)
    stopping = asyncio.ensure_future(publisher.stop())
    await asyncio.sleep(0.1)
    assert not stopping.done()
    gate.set()
    await stopping
    assert await in_flight == 202
    assert producers.committed_values() == [b"a"]


async def test_a_second_lane_commits_while_the_first_waits_for_its_commit() -> None:
    gate = asyncio.Event()
    made: dict[int, FakeProducer] = {}

    def factory(lane: int) -> FakeProducer:
        made[lane] = FakeProducer(f"lane{lane}", commit_gate=gate if lane == 0 else None)
        return made[lane]

    publisher = TransactionalPublisher(factory, timeout=1.0, lanes=2)
    await publisher.start()
    try:
        assert sorted(made) == [0, 1] and all(p.started for p in made.values())
        slow = asyncio.ensure_future(_publish(publisher, b"slow"))
        await asyncio.sleep(0.05)  # a lane is committing "slow" and waits for the gate
        assert await _publish(publisher, b"fast") == 202, "the other lane commits meanwhile"
        assert not slow.done()
        gate.set()
        assert await slow == 202
        committed = {name: [r.value for t in p.committed for r in t] for name, p in made.items()}
        assert sorted(committed.values()) == [[b"fast"], [b"slow"]]
    finally:
        await publisher.stop()


async def test_with_tracing_on_each_record_carries_its_request_span_traceparent(monkeypatch: Any) -> None:
    """The records a publish request makes (api/routes/publish.py ``records``) carry its span's
    traceparent, which the transactional path writes (the worker's decide span continues it:
    app/observability/tracing.py); off, no header."""
    from types import SimpleNamespace

    from api.publishing import publish_records
    from api.state import TopicRef
    from app.domain.events.publish import PublishRequest
    from app.observability import trace_context, tracing
    from app.settings import Settings

    state: Any = SimpleNamespace(settings=Settings())
    ref = TopicRef("wft_1", "t", "ACTIVE", "BYPASS")
    producers = Producers()
    publisher = await _started(producers)

    async def publish(event_id: str, idempotency_key: str | None = None) -> None:
        attributes = {"idempotency_key": idempotency_key} if idempotency_key else None
        request = PublishRequest.model_validate_json(
            orjson.dumps({"status": "ACTUAL", "data": {}, "attributes": attributes})
        )
        records = publish_records(state, "org_1", ref, [request], [event_id], 1, None)
        await publisher.publish_batch(records)

    async def traced(event_id: str, idempotency_key: str | None = None) -> str:
        with tracing.server_span("publish", tracing.PUBLISH_ROUTE, None, "org_1", "t") as span:
            await publish(event_id, idempotency_key)
            return trace_context.traceparent_of(span)

    try:
        await publish("evt_off")
        monkeypatch.setattr(tracing, "enabled", True)
        parents = await asyncio.gather(traced("evt_a"), traced("evt_b", idempotency_key="k"))
        records = {r.value: r for p in producers.made for txn in p.committed for r in txn}
        by_event = {
            event_id: r
            for event_id in ("evt_off", "evt_a", "evt_b")
            for v, r in records.items()
            if event_id.encode() in v
        }
        assert by_event["evt_off"].headers == []
        for event_id, parent in zip(("evt_a", "evt_b"), parents, strict=True):
            headers = dict(by_event[event_id].headers)
            assert set(headers) == {"traceparent"} and headers["traceparent"] == parent.encode()
    finally:
        await publisher.stop()


async def _publish_batch(publisher: TransactionalPublisher, values: list[bytes]) -> int:
    try:
        await publisher.publish_batch(tuple(PublishedRecord(TOPIC, v, v, 1) for v in values))
    except Unavailable:
        return 503
    return 202


async def test_a_batch_is_never_split_between_transactions() -> None:
    producers = Producers()
    publisher = await _started(producers, max_records=4)
    try:
        batch = [f"b{i}".encode() for i in range(3)]
        big = [f"g{i}".encode() for i in range(6)]  # more than max_records: a transaction of its own
        answers = await asyncio.gather(
            _publish(publisher, b"s0"),
            _publish(publisher, b"s1"),
            _publish_batch(publisher, batch),
            _publish_batch(publisher, big),
            _publish(publisher, b"s2"),
        )
        assert answers == [202] * 5
        txns = [sorted(r.value for r in txn) for txn in producers.made[0].committed]
        assert txns == [[b"s0", b"s1"], batch, big, [b"s2"]]  # (record batches per partition: order within one)
    finally:
        await publisher.stop()


async def test_one_failed_send_of_a_batch_aborts_all_of_it() -> None:
    producers = Producers(fail_send=b"b2")
    publisher = await _started(producers)
    try:
        assert await _publish_batch(publisher, [b"b1", b"b2", b"b3"]) == 503
        (producer,) = producers.made
        assert producer.committed == [] and [[r.value for r in t] for t in producer.aborted] == [[b"b1", b"b2", b"b3"]]
        assert await _publish_batch(publisher, [b"c1", b"c2"]) == 202
        assert producers.committed_values() == [b"c1", b"c2"]
    finally:
        await publisher.stop()


async def test_a_batch_whose_sends_are_never_acknowledged_gives_up_whole_at_its_deadline() -> None:
    producers = Producers(hold_sends=True)
    publisher = await _started(producers, wait=0.2)
    try:
        assert await _publish_batch(publisher, [b"a", b"b", b"c"]) == 503
        assert producers.committed_values() == []
    finally:
        await publisher.stop()


async def test_records_go_in_record_batches_per_partition_in_order_a_full_one_sent_and_another_started() -> None:
    producers = Producers(batch_capacity=2)
    publisher = await _started(producers)
    try:
        values = [f"v{i}".encode() for i in range(9)]
        key = b"one key"  # one partition: five record batches of at most two
        await publisher.publish_batch(tuple(PublishedRecord(TOPIC, key, v, 1) for v in values))
        (producer,) = producers.made
        (txn,) = producer.committed
        assert [r.value for r in txn] == values
        assert producer.batches_sent == 5
    finally:
        await publisher.stop()


async def _answered_at(publisher: TransactionalPublisher, value: bytes) -> tuple[int, float]:
    status = await _publish(publisher, value)
    return status, asyncio.get_running_loop().time()


async def test_publishes_within_the_window_share_one_transaction_and_wait_at_most_the_window() -> None:
    """Grouped by time (issue 31): a publish arriving within ``window`` of the oldest queued one joins
    its transaction, where a free lane used to take whatever was queued (the first one alone)."""
    producers = Producers()
    publisher = TransactionalPublisher(producers, timeout=2.0, lanes=2, window=0.2)
    await publisher.start()
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = asyncio.ensure_future(_answered_at(publisher, b"first"))
        await asyncio.sleep(0.05)  # well inside the window
        assert not first.done(), "the window is still open"
        second = asyncio.ensure_future(_answered_at(publisher, b"second"))
        (status1, at1), (status2, at2) = await asyncio.gather(first, second)
        assert (status1, status2) == (202, 202)
        committed = [sorted(r.value for r in txn) for p in producers.made for txn in p.committed]
        assert committed == [[b"first", b"second"]], "one transaction"
        assert 0.2 <= at1 - started < 0.2 + 0.15, "the first waited the window once"
        assert abs(at2 - at1) < 0.02, "answered together"
    finally:
        await publisher.stop()


async def test_a_publish_queued_while_every_lane_is_busy_does_not_wait_another_window() -> None:
    """The window starts when the oldest queued publish arrived: one queued behind a slow commit
    (every lane busy) is sent as soon as a lane is free, not a window later."""
    gate = asyncio.Event()
    producers = Producers(commit_gate=gate)
    publisher = TransactionalPublisher(producers, timeout=5.0, lanes=1, window=0.3)
    await publisher.start()
    try:
        loop = asyncio.get_running_loop()
        first = asyncio.ensure_future(_publish(publisher, b"first"))
        deadline = loop.time() + 2
        while not producers.made[0].in_transaction:  # the first transaction is committing
            assert loop.time() < deadline, "the first transaction did not begin"
            await asyncio.sleep(0.01)
        late = asyncio.ensure_future(_answered_at(publisher, b"late"))
        await asyncio.sleep(0.35)  # the late publish's window passes while the lane is busy
        released = loop.time()
        gate.set()
        assert await first == 202
        status, at = await late
        assert status == 202
        assert at - released < 0.1, f"the late publish waited {at - released:.3f} s more (another window)"
    finally:
        await publisher.stop()


async def test_lanes_overlap_one_collects_while_another_commits() -> None:
    """With two lanes, the publishes that arrive while a transaction commits form the next one on
    the other lane within one window, whatever the first commit takes."""
    gate = asyncio.Event()
    made: dict[int, FakeProducer] = {}

    def factory(lane: int) -> FakeProducer:
        made[lane] = FakeProducer(f"lane{lane}", commit_gate=gate if lane == 0 else None)
        return made[lane]

    publisher = TransactionalPublisher(factory, timeout=5.0, lanes=2, window=0.1)
    await publisher.start()
    try:
        loop = asyncio.get_running_loop()
        slow = asyncio.ensure_future(_publish(publisher, b"slow"))
        deadline = loop.time() + 2
        while not made[0].in_transaction:
            assert loop.time() < deadline, "lane 0 did not begin"
            await asyncio.sleep(0.01)
        sent = loop.time()
        status, at = await _answered_at(publisher, b"fast")
        # the window's 0.1 s measured between two loop.time() readings: allow the float's last digits
        assert status == 202 and 0.1 - 1e-3 <= at - sent < 0.1 + 0.15, "one window on the other lane"
        assert not slow.done()
        gate.set()
        assert await slow == 202
    finally:
        await publisher.stop()


async def test_max_records_queued_closes_the_window_early() -> None:
    producers = Producers()
    publisher = TransactionalPublisher(producers, timeout=5.0, max_records=4, window=2.0)
    await publisher.start()
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        answers = await asyncio.gather(*(_publish(publisher, f"v{i}".encode()) for i in range(4)))
        assert answers == [202] * 4 and loop.time() - started < 0.5, "a full group does not wait the window"
    finally:
        await publisher.stop()


def test_publish_transactions_are_on_by_default() -> None:
    from app.settings import Settings

    settings = Settings()
    assert settings.transactions.publish_transactions is True
    assert 0 < settings.transactions.publish_transaction_window_ms <= 10
