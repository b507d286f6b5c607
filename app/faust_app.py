"""The one Faust application of the worker, and its topics.

Nothing here touches the event loop or the producer at import time (it only selects uvloop,
as the API runs on, for the loop the worker creates); ``streams/`` declares the agents on :data:`app`.
"""

from __future__ import annotations

import logging
from typing import Any

import faust
import mode.loop
from faust.tables import recovery as faust_recovery
from faust.transport import consumer as faust_consumer
from faust.transport.drivers import aiokafka as faust_aiokafka

from app import topics
from app.partitioner import KeyPartitioner
from app.settings import get_settings

mode.loop.use("uvloop")

# Faust builds its consumer with fetch_max_wait_ms=1500 and no setting to change it. A fetch in
# flight covers only the partitions with nothing buffered, so a record arriving on one that was
# left out waits for that fetch to time out: up to 1.5 s per hop between agents (measured: the
# publish → webhook p50 was 0.4 s, p99 3.8 s). 100 ms bounds the wait; an idle worker sends at
# most 10 fetch requests per second. TOCSIN_WORKER_FETCH_WAIT_MS changes it.
_create_worker_consumer = faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer


# The API writes publishes in Kafka transactions and aborts those it answered 503 for (api/publisher.py):
# the worker must read committed records only, or a refused publish would still be decided.
ISOLATION_LEVEL = "read_committed"


def _with_short_fetch_wait(self: Any, transport: Any) -> Any:
    consumer = _create_worker_consumer(self, transport)
    consumer._fetch_max_wait_ms = settings.worker_fetch_wait_ms  # read by AIOKafkaConsumer.start() for its fetcher
    consumer._isolation_level = ISOLATION_LEVEL  # read by AIOKafkaConsumer.start() for its fetcher too
    return consumer


faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer = _with_short_fetch_wait  # type: ignore[method-assign]
settings = get_settings()


# Records lost on a rebalance (found by tests/e2e/test_scaling.py: 24 of 1,200 events never
# decided). At the end of a rebalance Faust's recovery resumes the stream partitions, then seeks
# them to their committed offsets (one broker round trip per partition, 50-160 ms here), then
# resumes flow control, whose resume clears every channel queue (they are created with
# clear_on_resume). Records fetched in that window were delivered into the queues and thrown
# away there, while the fetch position had moved past them; the next record's jump was then
# taken for a compaction gap (Consumer._add_gap), counted as acknowledged, and committed past.
# Two corrections, each enough for the loss on its own:
# 1. the stream partitions resume only after the seek and the queue clear, so nothing is fetched
#    into a queue that is about to be cleared;
# 2. a jump in one of our topics (never compacted, never transactional: offsets are contiguous)
#    is not a gap to commit past: it is logged, and the commit stays before it until the records
#    come (streams/progress.py sends the control and idempotency agents back for them).
#    Except in the topics the API writes in transactions (publish, idempotency): every transaction
#    leaves a commit marker there, an offset no record fills, so the commit would stop at the first
#    one for good. Faust's own gap handling commits past those; nothing is lost by it, because the
#    agents that read them (control, idempotency) keep their own next offset per partition in
#    their table and never trust the committed offset (streams/progress.py).
def _resume_streams_last(method: Any) -> Any:
    async def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        consumer = self.app.consumer
        deferred: list[set[Any]] = []
        consumer.resume_partitions = lambda tps: deferred.append(set(tps))  # an instance attribute shadows it
        try:
            return await method(self, *args, **kwargs)
        finally:
            del consumer.resume_partitions
            for tps in deferred:
                consumer.resume_partitions(tps)

    return patched


faust_recovery.Recovery.on_recovery_completed = _resume_streams_last(  # type: ignore[method-assign]
    faust_recovery.Recovery.on_recovery_completed
)
faust_recovery.Recovery._resume_streams = _resume_streams_last(faust_recovery.Recovery._resume_streams)  # type: ignore[method-assign]
_add_gap = faust_consumer.Consumer._add_gap
_log = logging.getLogger(__name__)


_GAPS_ALLOWED = {settings.topic(topics.CONFIG_CHANGES), *(settings.topic(name) for name in topics.TRANSACTIONAL)}


async def _no_gap_in_contiguous_topics(self: Any, tp: Any, offset_from: int, offset_to: int) -> None:
    if tp.topic.startswith(settings.topic_prefix) and tp.topic not in _GAPS_ALLOWED:
        _log.warning(
            "consumer: %s[%d]: offsets %d..%d skipped by the fetch; not committed past",
            tp.topic,
            tp.partition,
            offset_from,
            offset_to - 1,
        )
        return
    await _add_gap(self, tp, offset_from, offset_to)


faust_consumer.Consumer._add_gap = _no_gap_in_contiguous_topics  # type: ignore[method-assign]
# Records the agents send wait this long to share a produce request with others (fewer, larger requests
# cost the worker and the broker far less CPU); it adds at most this much to the end-to-end latency.
WORKER_LINGER_MS = 10

app = faust.App(
    settings.worker_id,
    broker=f"kafka://{settings.kafka_bootstrap}",
    store="rocksdb://",
    datadir=str(settings.worker_data_path),
    topic_partitions=settings.publish_partitions,
    # Faust declares no topic (app/topics.py creates them all, replicated); the replication factor is
    # still what Faust would give its own internal topics (changelogs, the leader-assignor topic).
    topic_allow_declare=False,
    topic_replication_factor=settings.replication_factor,
    consumer_auto_offset_reset="earliest",
    producer_acks=-1,
    producer_linger=max(settings.producer_linger_ms, WORKER_LINGER_MS) / 1000.0,
    broker_commit_interval=settings.worker_commit_seconds,
    # A killed worker's partitions move to a survivor after this long, not Kafka's 45-60 s.
    broker_session_timeout=10.0,
    broker_heartbeat_interval=2.0,
    # /healthz, /readyz and /metrics (streams/ops.py) on the worker's own port.
    web_enabled=settings.worker_port > 0,
    web_bind=settings.worker_host,
    web_host=settings.worker_host,
    web_port=settings.worker_port or 6066,
    autodiscover=False,
    producer_partitioner=KeyPartitioner(),
    cython_optimizations=True,  # our topics are raw bytes, so the reused-event fast path decodes nothing
)


def raw_topic(name: str) -> Any:
    """A topic of raw bytes (values are JSON encoded by ``app.records``)."""
    return app.topic(
        settings.topic(name),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.publish_partitions if name in topics.KEYED else 1,
        internal=False,
    )


publish_topic = raw_topic(topics.PUBLISH)
incident_actions_topic = raw_topic(topics.ACTIONS_INCIDENT)
traces_topic = raw_topic(topics.TRACES)
dead_letter_topic = raw_topic(topics.DEAD_LETTER)
idempotency_topic = raw_topic(topics.IDEMPOTENCY)
# Push, e-mail and webhook deliveries by kind (streams/actions.py consumes them).
action_topics = {kind: raw_topic(name) for kind, name in topics.ACTIONS.items()}
