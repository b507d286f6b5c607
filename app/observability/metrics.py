"""Prometheus metrics of the API and the worker (each process exposes its own registry).

The API serves them at ``GET /metrics``; the worker on its own port (``TOCSIN_WORKER_PORT``,
``GET /metrics`` there too). Label values come from closed sets (outcome, decision, kind,
error code, route template), never from caller input, so the series count stays bounded.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from importlib import metadata
from typing import Protocol

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST

# process_* (CPU, resident memory, open fds, start time), python_info, python_gc_*: the
# collectors prometheus_client puts on its default registry, which this one is not
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)


def distribution_version(name: str) -> str:
    """The installed version of a distribution, or ``unknown`` (a source tree without metadata)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


BUILD_INFO = Gauge(
    "tocsin_build_info",
    "Always 1: the versions this process runs (Tocsin, Python, Faust, aiokafka)",
    ["version", "python", "faust", "aiokafka"],
    registry=REGISTRY,
)
BUILD_INFO.labels(
    distribution_version("tocsin"),
    platform.python_version(),
    distribution_version("faust-streaming"),
    distribution_version("aiokafka"),
).set(1)

# API
HTTP_REQUESTS = Counter(
    "tocsin_http_requests",
    "HTTP requests answered, by route template and status",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_SECONDS = Histogram(
    "tocsin_http_request_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
    registry=REGISTRY,
)
HTTP_DURATION = Histogram(
    "tocsin_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and status code (p99 per route and code)",
    ["method", "route", "code"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
    registry=REGISTRY,
)
PUBLISHES = Counter(
    "tocsin_publishes",
    "Publish requests: accepted (202, stored by the broker) or refused (with the HTTP status)",
    ["outcome", "status"],
    registry=REGISTRY,
)
PUBLISH_TRANSACTIONS = Counter(
    "tocsin_publish_transactions",
    "Kafka transactions of an API replica's publishes: committed (202 for all), aborted or commit_refused (503)",
    ["outcome"],
    registry=REGISTRY,
)
EXCHANGES = Counter(
    "tocsin_token_exchanges",
    "Token exchanges by outcome (issued, or the RFC 6749 error)",
    ["outcome"],
    registry=REGISTRY,
)

# worker
DECISIONS = Counter(
    "tocsin_decisions",
    "Event-control decisions by policy and decision",
    ["policy", "decision"],
    registry=REGISTRY,
)
DELIVERIES = Counter(
    "tocsin_action_deliveries",
    "Push, e-mail and webhook delivery attempts by kind and verdict",
    ["kind", "verdict"],
    registry=REGISTRY,
)
RETRIES = Counter(
    "tocsin_action_retries",
    "Delivery attempts scheduled for a retry, by kind",
    ["kind"],
    registry=REGISTRY,
)
DEAD_LETTERS = Counter(
    "tocsin_dead_letters",
    "Records sent to a dead-letter topic, by stage",
    ["stage"],
    registry=REGISTRY,
)
BATCH_RETRIES = Counter(
    "tocsin_batch_retries",
    "Batches of a stage (or delivery checks) processed again after a failure, by stage",
    ["stage"],
    registry=REGISTRY,
)
UNREADABLE_STATES = Counter(
    "tocsin_unreadable_states",
    "Stored states that could not be decoded, dead-lettered; the key started again from empty state",
    ["table"],
    registry=REGISTRY,
)
TAIL_REFETCHES = Counter(
    "tocsin_tail_refetches",
    "Retry topic partitions whose committed offset stayed behind the last stable offset with nothing in flight, "
    "by stage and outcome: sought (fetched again from the applied offset), recovered (records came and "
    "were applied), empty (the offsets held no record), stuck (still behind after every retry: an ERROR)",
    ["stage", "outcome"],
    registry=REGISTRY,
)
TAIL_STUCK = Gauge(
    "tocsin_tail_stuck_partitions",
    "Retry topic partitions whose committed offset cannot reach the last stable offset (an ERROR line says which)",
    ["stage"],
    registry=REGISTRY,
)
CONSUMER_LAG = Gauge(
    "tocsin_consumer_lag",
    "Records a stage of this worker has not applied yet (high watermark minus committed offset), per partition",
    ["topic", "partition"],
    registry=REGISTRY,
)


# Bounded caches (worker and API): entries, bound and evictions of each, read when scraped.
class BoundedCache(Protocol):
    @property
    def maxsize(self) -> float: ...

    @property
    def evictions(self) -> int: ...

    def __len__(self) -> int: ...


_CACHES: dict[str, BoundedCache] = {}


def register_cache(name: str, cache: BoundedCache) -> None:
    """Expose ``cache`` as ``tocsin_cache_*{cache=name}`` (a later one of the same name replaces it)."""
    _CACHES[name] = cache


class _CacheCollector:
    def collect(self) -> Iterator[Metric]:
        entries = GaugeMetricFamily(
            "tocsin_cache_entries", "Entries held by a bounded in-process cache", labels=["cache"]
        )
        bound = GaugeMetricFamily(
            "tocsin_cache_max_entries", "The size bound of a cache (its setting)", labels=["cache"]
        )
        evictions = CounterMetricFamily(
            "tocsin_cache_evictions", "Entries a bounded cache dropped to stay within its bound", labels=["cache"]
        )
        for name, cache in sorted(_CACHES.items()):
            entries.add_metric([name], len(cache))
            bound.add_metric([name], cache.maxsize)
            evictions.add_metric([name], cache.evictions)
        yield from (entries, bound, evictions)


REGISTRY.register(_CacheCollector())  # a collector is anything with collect()


def exposition() -> bytes:
    """The registry in the Prometheus text format."""
    return generate_latest(REGISTRY)
