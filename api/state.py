"""Per-process resources of an API replica, created in the lifespan."""

from __future__ import annotations

import asyncio
import gc
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from aiokafka import AIOKafkaProducer
from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from api.producers import sender_task
from api.publisher import TransactionalPublisher
from app.caches import TTLCache
from app.domain.events.limits import ConfigLimits, PublishLimits
from app.domain.iam.principal import Principal
from app.domain.shared.rate_limit import RateLimiter
from app.identity.federation import Federation
from app.kafka.config_changes import announce_change
from app.kafka.partitioner import KeyPartitioner
from app.kafka.producer_errors import PRODUCER_FATAL
from app.kafka.security import client_args
from app.observability.metrics import register_cache
from app.settings import Settings
from app.store.models import AccessToken

log = logging.getLogger(__name__)


PRODUCER_BATCH_BYTES = 512 * 1024  # below the broker's message.max.bytes (1 MiB by default)


def new_producer(settings: Settings) -> AIOKafkaProducer:
    """The replica's producer of single publishes (without TOCSIN_PUBLISH_TRANSACTIONS) and of
    everything else outside transactions (config-change announcements, redeliveries): acks=all, no
    duplicates from its own retries (idempotent)."""
    return AIOKafkaProducer(
        **client_args(settings),
        acks="all",
        enable_idempotence=True,
        linger_ms=settings.producer_linger_ms,
        # aiokafka keeps one open batch per partition while the previous one is in flight (one
        # request at a time per broker); a publish finding it full waits until the sender takes it,
        # after the previous one's acknowledgement (16 KiB by default: about 50 publish records,
        # fewer with a trace header)
        max_batch_size=PRODUCER_BATCH_BYTES,
        request_timeout_ms=int(settings.produce_timeout_seconds * 1000),
        retry_backoff_ms=100,
        partitioner=KeyPartitioner(),
    )


def new_transactional_producer(settings: Settings, lane: int = 0) -> AIOKafkaProducer:
    """A producer of publishes (api/publisher.py): transactional (hence idempotent, acks=all)."""
    return AIOKafkaProducer(
        **client_args(settings),
        acks="all",
        enable_idempotence=True,
        transactional_id=f"{settings.effective_transactional_id}-{lane}",
        transaction_timeout_ms=int(settings.transactions.transaction_timeout_seconds * 1000),
        # a transaction's records are all queued before the sender runs (api/publisher.py): nothing to wait for
        linger_ms=0,
        # a batch publish's records (up to 1,000) in one produce request per partition, not in 16 KiB
        # batches each waiting for the previous one's acknowledgement
        max_batch_size=PRODUCER_BATCH_BYTES,
        request_timeout_ms=int(settings.produce_timeout_seconds * 1000),
        retry_backoff_ms=100,
        partitioner=KeyPartitioner(),
    )


def new_publisher(settings: Settings) -> TransactionalPublisher:
    return TransactionalPublisher(
        lambda lane: new_transactional_producer(settings, lane),
        timeout=settings.produce_timeout_seconds,
        max_records=settings.transactions.publish_transaction_records,
        lanes=settings.transactions.publish_transaction_lanes,
        window=settings.transactions.publish_transaction_window_ms / 1000,
    )


@dataclass(frozen=True, slots=True)
class TopicRef:
    id: str
    key: str
    status: str
    policy: str


@dataclass
class ApiState:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    producer: AIOKafkaProducer
    principals: TTLCache[str, Principal]
    topics: TTLCache[tuple[str, str], TopicRef]
    federation: Federation
    publisher: TransactionalPublisher | None = None  # TOCSIN_PUBLISH_TRANSACTIONS; else publishes use ``producer``
    # batch publishes: always in transactions (all or nothing); the same object as ``publisher`` when that is set
    batch_publisher: TransactionalPublisher | None = None
    publish_limits: RateLimiter = field(default_factory=lambda: RateLimiter(1.0, 1))  # replaced at start
    changes_followed: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    used_tokens: set[str] = field(default_factory=set)
    _renew_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @cached_property
    def input_limits(self) -> PublishLimits:
        return self.settings.limits.publish_limits()

    @cached_property
    def config_limits(self) -> ConfigLimits:
        return self.settings.limits.config_limits()

    async def renew_producer_if_dead(self, used: AIOKafkaProducer, failure: BaseException | None = None) -> None:
        """Replace ``used`` (the producer a send just failed on) when it cannot recover by itself.

        After a broker restart with batches in flight, aiokafka's idempotent producer either ends
        its sender task or keeps its sequence numbers while the broker refuses them with
        ``OutOfOrderSequenceNumber``; either way every later send fails and the replica would
        answer 503 forever (tests/e2e/test_faults.py saw both). A new producer gets a new
        producer id and works. Only the producer still in use is replaced, once.
        """
        if used is not self.producer:
            return  # another request renewed it meanwhile
        task = sender_task(used)
        dead = task is not None and task.done()
        if not dead and not isinstance(failure, PRODUCER_FATAL):
            return
        async with self._renew_lock:
            if self.producer is not used:
                return  # another request renewed it meanwhile
            fresh = new_producer(self.settings)
            try:
                async with asyncio.timeout(self.settings.produce_timeout_seconds):
                    await fresh.start()
            except BaseException:
                await fresh.stop()
                raise
            self.producer = fresh
            if dead and task is not None and not task.cancelled():
                failure = task.exception()
            log.warning("the Kafka producer could not recover (%r); replaced it", failure)
            self.tasks.append(asyncio.create_task(used.stop()))

    def invalidate(self, org_id: str) -> None:
        self.topics.invalidate_org(org_id)
        self.principals.invalidate_org(org_id)
        self.federation.credentials.invalidate_org(org_id)

    async def config_changed(self, org_id: str, what: str) -> None:
        """Drop this replica's cache now and tell the others (and the workers)."""
        self.invalidate(org_id)
        try:
            await announce_change(self.producer, self.settings, org_id, what)
        except Exception as exc:  # noqa: BLE001 - the TTL still bounds staleness
            log.warning("could not announce config change of %s (%s): %s", org_id, what, exc)
            try:
                await self.renew_producer_if_dead(self.producer, exc)
            except Exception as renew_failed:  # noqa: BLE001 - tried again on the next failure
                log.warning("could not replace the stopped Kafka producer yet: %r", renew_failed)


def register_caches(state: ApiState) -> None:
    """Every cache of the replica is bounded and exposed as ``tocsin_cache_*`` (docs/operations/memory.md)."""
    register_cache("api_principals", state.principals)
    register_cache("api_topics", state.topics)
    register_cache("api_publish_rate_limit", state.publish_limits)
    register_cache("api_exchange_credentials", state.federation.credentials)
    register_cache("api_exchange_rate_per_credential", state.federation.per_credential)
    register_cache("api_exchange_rate_per_client", state.federation.per_client)
    register_cache("api_exchange_failures_per_client", state.federation.failures_per_client)


async def record_token_use(state: ApiState, every: float = 2.0) -> None:
    """Write ``last_used_at`` for the tokens used since the last round, in one statement."""
    while True:
        await asyncio.sleep(every)
        if not state.used_tokens:
            continue
        used, state.used_tokens = state.used_tokens, set()
        try:
            async with state.sessions.begin() as session:
                await session.execute(
                    update(AccessToken).where(AccessToken.id.in_(used)).values(last_used_at=datetime.now(UTC))
                )
        except SQLAlchemyError as exc:
            log.warning("could not record last_used_at of %d tokens: %s", len(used), exc)


def tune_gc(gen0: int = 50_000) -> None:
    """Once the replica has started: keep the collector off everything alive now, and run it less often.

    ``gc.freeze`` moves the objects of imports, the app and its clients to the permanent
    generation, so a full collection no longer walks them (~64 ms pauses before); a larger
    first-generation threshold makes young collections rarer (request objects die by
    reference counting anyway).
    """
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0, gen1, gen2)
