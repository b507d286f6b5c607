"""The one Faust application of the worker, and its topics.

Nothing here touches the event loop or the producer at import time (it only selects uvloop,
as the API runs on, for the loop the worker creates); ``streams/`` declares the stages' tasks on :data:`app`.
"""

from __future__ import annotations

from typing import Any

import faust
import mode.loop

from app.kafka import topics
from app.kafka.partitioner import KeyPartitioner
from app.kafka.security import faust_credentials
from app.settings import get_settings

mode.loop.use("uvloop")

settings = get_settings()

# Records the agents send wait at least this long to share a produce request with others. The control
# agent waits for its batch's outputs to be acknowledged before it takes the next batch, so the linger
# is added to every control cycle and to every event's latency: 10 ms was 10 ms of each ~50 ms cycle
# at 500 publishes/s. A batch's outputs are sent together, so they share requests without it.
WORKER_LINGER_MS = 2

app = faust.App(
    settings.worker_id,
    broker=f"kafka://{settings.kafka_bootstrap}",
    broker_credentials=faust_credentials(settings),  # TLS and SASL (app/kafka/security.py)
    store="rocksdb://",
    datadir=str(settings.worker_data_path),
    topic_partitions=settings.publish_partitions,
    # Faust declares no topic (app/kafka/topics.py creates them all, replicated); the replication factor is
    # still what Faust would give its own internal topics (changelogs).
    topic_allow_declare=False,
    topic_replication_factor=settings.replication_factor,
    # No leader-election topic: nothing here runs on the leader only (no on_leader=True timer or task),
    # and with declaring off Faust subscribed to a topic it never created, logging "Topic
    # <worker id>-__assignor-__leader not found in cluster metadata" as an ERROR at every start.
    topic_disable_leader=True,
    consumer_auto_offset_reset="earliest",
    producer_acks=-1,
    producer_linger=max(settings.producer_linger_ms, WORKER_LINGER_MS) / 1000.0,
    # A killed worker's partitions move to a survivor after this long, not Kafka's 45-60 s.
    broker_session_timeout=10.0,
    broker_heartbeat_interval=2.0,
    # /healthz, /readyz and /metrics (streams/ops.py) on the worker's own port (loopback unless
    # TOCSIN_WORKER_HOST says otherwise), and nothing else: Faust's own blueprints are not registered.
    # /table/ serves table contents and /router/ the cluster's worker URLs to anyone, without
    # authentication; nothing here uses @table_route, the one feature /router/ is for.
    web_enabled=settings.worker_port > 0,
    web_bind=settings.worker_host,
    web_host=settings.worker_host,
    web_port=settings.worker_port or 6066,
    web_tables_enabled=False,
    web_router_enabled=False,
    web_stats_enabled=False,
    web_graph_enabled=False,
    web_metrics_enabled=False,
    autodiscover=False,
    producer_partitioner=KeyPartitioner(),
    cython_optimizations=True,  # our topics are raw bytes, so the reused-event fast path decodes nothing
)


def raw_topic(name: str) -> Any:
    """A topic of raw bytes (values are JSON encoded by ``app.kafka.records``)."""
    return app.topic(
        settings.topic(name),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.publish_partitions if name in topics.KEYED else 1,
        internal=False,
    )


publish_topic = raw_topic(topics.PUBLISH)  # the bench's Faust baselines read it (tests/bench/control_worker.py)
dead_letter_topic = raw_topic(topics.DEAD_LETTER)
