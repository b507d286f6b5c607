"""Every change the worker makes to faust-streaming's behaviour, installed from one place (pinned
versions in pyproject.toml: an upgrade that moves these internals breaks here, loudly). The commit
guard of 2b and 2c is commit_guard.py; 8, a patch of aiokafka's fetcher, is aiokafka_patches.py.

1. A short consumer fetch wait (latency between agents).
2. Records lost on a rebalance, three ways (found by tests/e2e/test_scaling.py: on the old code
   211 of ~1,400 accepted events were never decided, and 2 of 1,138 webhook effects never sent):
   a. At the end of a rebalance Faust's recovery resumes the stream partitions, then seeks them
      to their committed offsets (a broker round trip per partition, 50-160 ms here), then
      resumes flow control, whose resume clears every channel queue (created with
      ``clear_on_resume``). Records fetched in that window were dropped by the clear while the
      fetch position had moved past them. Now the stream partitions resume only after the seek
      and the clear.
   b. The next record's jump was taken for a compaction gap (``Consumer._add_gap``), counted as
      acknowledged and committed past. Our topics are never compacted: a jump is logged and
      never committed past.
   c. A single missing record right at the committed offset passed both checks: Faust keeps the
      committed offset as the next offset to read but compares it as the last one read (a jump
      of one is "no gap"), and ``_new_offset`` commits when the first acknowledged offset is
      within one of it. Now a commit of one of our topics moves only from the committed offset
      through acknowledged offsets without a hole; a commit held back for ``STALL_SECONDS`` by
      records no agent holds (none delivered and unacknowledged) sends the consumer back to the
      committed offset to fetch the missing records again (whatever was
      processed since is deduplicated downstream on its effect id, or skipped by the control and
      idempotency agents' progress markers: streams/progress.py).
   d. Faust hands its live set of active partitions to aiokafka's ``fetched_records`` and waits
      there up to a second. A pause during the wait empties that set in place (the end of a
      changelog recovery pauses the changelog partitions, the only active ones then); aiokafka
      reads an empty set as "every partition" and returns, advancing their positions, the
      records fetched for the stream partitions, which Faust's ``getmany`` then skips as not
      active: lost until a later record of the partition shows the hole, and a partition whose
      last records they were stalled for good (found with transactional publishes on, where the
      lost-RocksDB test stalled in 2 of 5 runs: the records 6..502 of four partitions were
      returned with ``active=[]`` during the seek to the committed offsets and never delivered).
      Now aiokafka gets a copy taken when the fetch starts, and ``getmany`` filters by that copy:
      what is fetched is what was asked for, and nothing fetched is skipped.
3. Faust's stream-timeout check ("Stream has not started processing TP(…)", an ERROR) measures
   from the worker's start, not from the partition's assignment: a worker older than the timeout
   that takes over a partition with a backlog (a rebalance when others leave) had it reported as
   stuck seconds after the assignment, before its first batch could start (found by the scale-in
   step of tests/e2e/test_scaling.py: 16 such ERROR lines 4 s after the assignment, every record
   processed). Faust forgets a partition's last event at every rebalance (the check then says "not
   started" even for a partition the worker kept), so the check now counts from the later of the
   worker's start and the partition's latest assignment: a partition is reported only when it has
   processed nothing for the whole timeout since it was (re)assigned.
4. Recovery observed (``observe_recovery``, nothing changed): the start and end of each table
   recovery and the moment its start offsets are known are reported to the adapter's
   ``RecoveryWatch``, which shows the progress in the log and in ``/readyz``.
5. A table's local store never goes back (``_local_store_never_goes_back``). Faust's recovery keeps
   reading changelog records after it ended (a fetch in flight when it paused the partitions, the
   active partitions it resumes): records the agents wrote themselves, buffered and applied to
   RocksDB later — at the next rebalance's buffer flush, or when 1,000 have gathered — over the
   newer states written since, with the persisted offset moved back to theirs. A changelog record
   at or below the offset a partition's store already holds is now dropped; the agents' own writes
   (tables.faust_adapter.FaustTable.write) store the offset of their last changelog record with
   them. Found by tests/e2e/test_scaling.py: a rebalance's flush put a partition's store 34
   changelog records back (persisted offset 491, changelog at 525).
6. Work after a rebalance (``after_rebalance``): callbacks that run once a rebalance's tables are
   recovered and the stream partitions sought to their committed offsets, before those partitions
   resume (tables.faust_adapter.FaustConsumer.keep_aligned sends them back to the agents' progress).
7. No batch applied while the tables recover (``quiet``): from a rebalance's assignment to the end
   of its recovery the agents that keep state apply nothing (streams/progress.applicable), and the
   recovery starts only once the batches in flight have stored their states (``quiet.batch``). A
   batch handed to an agent mid-recovery (fetched before the rebalance, held in the stream) read a
   partial state: tests/e2e/test_scaling.py saw the 85th value of 16 keys decided SUPPRESS from a
   state four records old. And a state written mid-recovery set the store's offset past changelog
   records the recovery had still to apply (5 would then pass them).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol

from faust.stores import rocksdb as faust_rocksdb
from faust.tables import manager as faust_manager
from faust.tables import recovery as faust_recovery
from faust.transport import consumer as faust_consumer
from faust.transport.drivers import aiokafka as faust_aiokafka

from app.kafka import topics
from app.observability import metrics
from app.settings import Settings
from tables.aiokafka_patches import note_skipped_offsets
from tables.commit_guard import contiguous_commits

log = logging.getLogger(__name__)
ISOLATION_LEVEL = "read_committed"


_installed = False


def install(settings: Settings) -> None:
    global _installed
    if _installed:
        return
    _installed = True
    _short_fetch_wait(settings)
    _resume_streams_after_seek()
    contiguous_commits(settings)
    _fetch_what_was_asked()
    _stream_timeout_since_assignment()
    _local_store_never_goes_back()
    _quiet_while_recovering()
    note_skipped_offsets({settings.topic(name) for name in topics.TRANSACTIONAL})


def _short_fetch_wait(settings: Settings) -> None:
    """Faust builds its consumer with fetch_max_wait_ms=1500 and no setting to change it. A fetch in
    flight covers only the partitions with nothing buffered, so a record arriving on one that was
    left out waits for that fetch to time out: up to 1.5 s per hop between agents (measured: the
    publish → webhook p50 was 0.4 s, p99 3.8 s). 100 ms bounds the wait; an idle worker sends at
    most 10 fetch requests per second. TOCSIN_WORKER_FETCH_WAIT_MS changes it."""
    create = faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer

    def with_short_fetch_wait(self: Any, transport: Any) -> Any:
        consumer = create(self, transport)
        consumer._fetch_max_wait_ms = settings.worker_fetch_wait_ms  # read by AIOKafkaConsumer.start()
        # The API may write publishes in Kafka transactions and abort those it answered 503 for
        # (api/publisher.py): the worker reads committed records only, or a refused publish would
        # still be decided.
        consumer._isolation_level = ISOLATION_LEVEL  # read by AIOKafkaConsumer.start() for its fetcher too
        return consumer

    faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer = with_short_fetch_wait  # type: ignore[method-assign]


class Quiet:
    """7: whether the tables are being recovered, and the batches using them now (several agents'
    batches may run at once; a recovery waits for all of them)."""

    def __init__(self) -> None:
        self.recovering = False
        self.running = 0
        self._idle: asyncio.Event | None = None

    @contextlib.asynccontextmanager
    async def batch(self) -> AsyncIterator[None]:
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            if not self.running and self._idle is not None:
                self._idle.set()

    async def idle(self) -> None:
        """Return once no batch is running."""
        while self.running:
            self._idle = asyncio.Event()
            await self._idle.wait()


quiet = Quiet()


def wait_for_batches(on_rebalance: Any, state: Quiet = quiet) -> Any:
    """7: the tables' ``on_rebalance`` (the assignment), once the batches in flight have ended; the
    batches after it apply nothing until the recovery ends (``_resume_streams_last``)."""

    @functools.wraps(on_rebalance)
    async def after_the_batches_in_flight(self: Any, *args: Any, **kwargs: Any) -> None:
        state.recovering = True
        await state.idle()
        await on_rebalance(self, *args, **kwargs)

    return after_the_batches_in_flight


def _quiet_while_recovering() -> None:
    manager = faust_manager.TableManager
    manager.on_rebalance = wait_for_batches(manager.on_rebalance)  # type: ignore[method-assign]


_after_rebalance: list[Callable[[], Awaitable[None]]] = []


def after_rebalance(callback: Callable[[], Awaitable[None]]) -> None:
    """6: run ``callback`` after each rebalance that ends on this worker, once its tables are
    recovered and its stream partitions sought to their committed offsets, before they resume."""
    _after_rebalance.append(callback)


def _resume_streams_last(method: Any) -> Any:
    async def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        consumer = self.app.consumer
        deferred: list[set[Any]] = []
        consumer.resume_partitions = lambda tps: deferred.append(set(tps))  # an instance attribute shadows it
        try:
            result = await method(self, *args, **kwargs)
            if not self.app.rebalancing:  # the rebalance ended (not overtaken by another one)
                quiet.recovering = False
                for callback in _after_rebalance:
                    await callback()
            return result
        finally:
            del consumer.resume_partitions
            for tps in deferred:
                consumer.resume_partitions(tps)

    return patched


def _resume_streams_after_seek() -> None:
    """2a: ``resume_partitions`` calls inside these two methods run when the method returns."""
    recovery = faust_recovery.Recovery
    recovery.on_recovery_completed = _resume_streams_last(recovery.on_recovery_completed)  # type: ignore[method-assign]
    recovery._resume_streams = _resume_streams_last(recovery._resume_streams)  # type: ignore[method-assign]


def _fetch_what_was_asked() -> None:
    """2d: the active partitions a fetch asks for, copied when it starts."""
    consumer_class = faust_consumer.ThreadDelegateConsumer
    getmany: Any = consumer_class._getmany
    wait_next_records: Any = consumer_class._wait_next_records

    async def getmany_of_a_copy(self: Any, active_partitions: Any, timeout: float) -> Any:  # noqa: ASYNC109 - Faust's signature
        asked = frozenset(active_partitions) if active_partitions is not None else None
        self._tocsin_asked = asked
        return await getmany(self, asked, timeout)

    async def wait_next_records_of_the_copy(self: Any, timeout: float) -> Any:  # noqa: ASYNC109 - Faust's signature
        self._tocsin_asked = None
        records, active_partitions = await wait_next_records(self, timeout)
        asked = self._tocsin_asked
        return records, (asked if asked is not None else active_partitions)

    consumer_class._getmany = getmany_of_a_copy  # type: ignore[method-assign]
    consumer_class._wait_next_records = wait_next_records_of_the_copy  # type: ignore[method-assign]


class AssignedAt:
    """3: when each partition was last assigned to this worker (monotonic, Faust's clock)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.clock = clock
        self.at: dict[Any, float] = {}

    def assigned(self, tps: Any) -> None:
        now = self.clock()
        self.at = dict.fromkeys(tps, now)

    def since(self, tp: Any, started: float) -> float:
        """The start the stream-timeout check must count from for ``tp``."""
        return max(started, self.at.get(tp, started))


assigned_at = AssignedAt()


def _stream_timeout_since_assignment() -> None:
    consumer_class = faust_consumer.Consumer
    thread_class = faust_aiokafka.AIOKafkaConsumerThread
    on_assigned: Any = consumer_class.on_partitions_assigned
    verify: Any = thread_class.verify_event_path

    async def noting_on_partitions_assigned(self: Any, assigned: Any, generation_id: int = 0) -> None:
        assigned_at.assigned(assigned)
        await on_assigned(self, assigned, generation_id)

    def verify_since_assignment(self: Any, now: float, tp: Any) -> None:
        started = self.time_started
        self.time_started = assigned_at.since(tp, started)  # read by every "since start" branch
        try:
            verify(self, now, tp)
        finally:
            self.time_started = started

    consumer_class.on_partitions_assigned = noting_on_partitions_assigned  # type: ignore[method-assign]
    thread_class.verify_event_path = verify_since_assignment  # type: ignore[method-assign]


class RecoveryObserver(Protocol):
    """What :func:`observe_recovery` reports, each with Faust's ``Recovery`` service."""

    def started(self, recovery: Any) -> None: ...

    def seeked(self, recovery: Any) -> None: ...

    def ended(self, recovery: Any) -> None: ...


_observed = False


def observe_recovery(observer: RecoveryObserver) -> None:
    """3: Faust marks a recovery started twice per rebalance (before it reads the highwaters and
    start offsets, and again once it knows records must be read), seeks the active changelog
    partitions to their start offsets in between, and marks it ended when every active partition
    reached its highwater (or at once when none was behind)."""
    global _observed
    if _observed:
        return
    _observed = True
    recovery_class = faust_recovery.Recovery
    started: Any = recovery_class._set_recovery_started
    ended: Any = recovery_class._set_recovery_ended
    seek: Any = recovery_class._seek_offsets

    def observed_started(self: Any) -> None:
        started(self)
        observer.started(self)

    def observed_ended(self: Any) -> None:
        ended(self)
        observer.ended(self)

    async def observed_seek(self: Any, consumer: Any, tps: Any, offsets: Any, title: str) -> None:
        await seek(self, consumer, tps, offsets, title)
        if title == "active":
            observer.seeked(self)

    recovery_class._set_recovery_started = observed_started  # type: ignore[method-assign]
    recovery_class._set_recovery_ended = observed_ended  # type: ignore[method-assign]
    recovery_class._seek_offsets = observed_seek  # type: ignore[method-assign]


def newer_than_stored(store: Any, events: Iterable[Any]) -> list[Any]:
    """The changelog ``events`` above the offset ``store`` holds for their partition (5)."""
    floors: dict[Any, int | None] = {}
    newer = []
    for event in events:
        tp = event.message.tp
        if tp not in floors:
            floors[tp] = store.persisted_offset(tp)
        floor = floors[tp]
        if floor is None or event.message.offset > floor:
            newer.append(event)
    return newer


def _local_store_never_goes_back() -> None:
    """5: Faust's RocksDB store applies only the changelog records newer than what it holds."""
    store_class = faust_rocksdb.Store
    apply: Any = store_class.apply_changelog_batch

    @functools.wraps(apply)
    def apply_newer(self: Any, batch: Any, to_key: Any, to_value: Any) -> None:
        events = list(batch)
        newer = newer_than_stored(self, events)
        if len(newer) < len(events):
            metrics.CHANGELOG_RECORDS_PASSED.inc(len(events) - len(newer))
        if newer:
            apply(self, newer, to_key, to_value)

    store_class.apply_changelog_batch = apply_newer  # type: ignore[method-assign]
