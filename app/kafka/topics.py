"""The project's Kafka topics, and their creation (the broker never auto-creates them)."""

from __future__ import annotations

import asyncio
import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from app.domain.delivery import kinds as delivery_kinds
from app.domain.shared.retry_schedule import RetrySchedule
from app.errors import TocsinError
from app.kafka.security import AccessCheck, client_args, start_client
from app.settings import Settings

log = logging.getLogger(__name__)

PUBLISH = "publish"
ACTIONS_INCIDENT = "actions.incident"
# Deliveries by kind (push, e-mail, webhook); a failed attempt waits in the retry topic of its
# delay level (records of one level are in due order), and one out of attempts goes to the
# deliveries' dead-letter topic.
ACTIONS = {kind.name: kind.topic for kind in delivery_kinds.KINDS}
RETRY_PREFIX = "actions.retry."
DELIVERY_DEAD_LETTER = "actions.dead-letter"
TRACES = "traces"
CONFIG_CHANGES = "config-changes"
DEAD_LETTER = "dead-letter"
IDEMPOTENCY = "idempotency"
# Changelogs of the worker's RocksDB tables (compacted; a table's partitions follow its source topic's).
CONTROL_CHANGELOG = "control-state-changelog"
IDEMPOTENCY_CHANGELOG = "idempotency-changelog"
CHANGELOGS = (CONTROL_CHANGELOG, IDEMPOTENCY_CHANGELOG)

# Written by the API in Kafka transactions (api/publisher.py): their offsets hold commit markers.
TRANSACTIONAL = (PUBLISH, IDEMPOTENCY)
# Keyed topics share the partition count, so every stage is co-partitioned.
KEYED = (PUBLISH, ACTIONS_INCIDENT, *ACTIONS.values(), TRACES, IDEMPOTENCY, *CHANGELOGS)


def retry_topic(level_s: float) -> str:
    """The retry topic of one delay level (``actions.retry.30s``)."""
    return f"{RETRY_PREFIX}{level_s:g}s"


def retry_topics(settings: Settings) -> list[str]:
    from app.domain.shared.retry_schedule import delay_levels

    return [retry_topic(level) for level in delay_levels(settings.retry.schedule())]


def keyed_topics(settings: Settings) -> list[str]:
    """The full names of every topic created with ``TOCSIN_PUBLISH_PARTITIONS`` partitions: the keyed
    topics, this worker group's changelogs and the retry topics. They must all have that count
    (checked at start, grown together by ``tocsin partitions``)."""
    names = [settings.topic(t) for t in KEYED if t not in CHANGELOGS]
    names += [changelog_topic(settings, t) for t in CHANGELOGS]
    return names + [settings.topic(t) for t in retry_topics(settings)]


def changelog_topic(settings: Settings, changelog: str) -> str:
    """A changelog's full name: named after the worker's consumer group (the previous release's Faust
    tables named theirs so; the stages restore from the same topics)."""
    return settings.topic(f"{settings.worker_id}.{changelog}")


def stage_group(settings: Settings, stage: str) -> str:
    """The consumer group of a stage that takes whole batches on a consumer of its own
    (tables/batch_stage.py): named after the worker's group, one per stage."""
    return f"{settings.worker_id}.{stage}"


# The worker's stages, each on a consumer of its own in its own group (stage_group), and their source
# topics: what a stage committed is what it applied (tables/batch_stage.py, tables/acked_stage.py).
BATCH_STAGES = {
    "control": PUBLISH,
    "idempotency": IDEMPOTENCY,
    "incidents": ACTIONS_INCIDENT,
    "traces": TRACES,
    **{kind.stage: kind.topic for kind in delivery_kinds.KINDS},
}


def grow_marker(settings: Settings) -> str:
    """The topic that exists while ``tocsin partitions`` grows the deployment (cli/partitions.py)."""
    return settings.topic(f"{settings.worker_id}.partitions-grow")


def topic_specs(settings: Settings) -> list[NewTopic]:
    """Every topic, replicated ``replication_factor`` ways with ``min.insync.replicas`` set on each."""
    rf, isr = settings.replication_factor, settings.min_insync_replicas
    if isr > rf:
        raise ValueError(f"TOCSIN_MIN_INSYNC_REPLICAS ({isr}) exceeds TOCSIN_REPLICATION_FACTOR ({rf})")

    def spec(name: str, partitions: int, **configs: str) -> NewTopic:
        configs = {"min.insync.replicas": str(isr), **configs}
        return NewTopic(settings.topic(name), partitions, rf, topic_configs=configs)

    compact = {"cleanup.policy": "compact"}
    keyed = settings.publish_partitions
    specs = [spec(t, keyed) for t in KEYED if t not in CHANGELOGS]
    specs += [spec(f"{settings.worker_id}.{t}", keyed, **compact) for t in CHANGELOGS]  # changelog_topic()
    specs.append(spec(CONFIG_CHANGES, 1, **compact))
    specs.append(spec(DEAD_LETTER, 1))
    specs.append(spec(DELIVERY_DEAD_LETTER, 1))
    specs += [spec(t, keyed) for t in retry_topics(settings)]
    return specs


class PartitionMismatch(TocsinError):
    """Existing keyed topics or changelogs whose partition count is not ``TOCSIN_PUBLISH_PARTITIONS``:
    the process must not start (records would be routed by one count and state kept by another)."""


async def partition_counts(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, int]:
    """The partition count of each of ``names`` that exists."""
    if not names:
        return {}
    described = await admin.describe_topics(names)
    return {t["topic"]: len(t["partitions"]) for t in described if t["error_code"] == 0 and t["partitions"]}


def mismatch_message(settings: Settings, counts: dict[str, int]) -> str | None:
    """What differs between the existing keyed topics' ``counts`` and the setting, and what to do;
    None when they all have ``TOCSIN_PUBLISH_PARTITIONS`` partitions."""
    wanted = settings.publish_partitions
    wrong = {name: n for name, n in counts.items() if n != wanted}
    if not wrong:
        return None
    listed = ", ".join(f"{name} has {n}" for name, n in sorted(wrong.items()))
    found = sorted(set(counts.values()))
    if len(found) == 1:
        (existing,) = found
        if existing > wanted:
            advice = f"set TOCSIN_PUBLISH_PARTITIONS={existing}: Kafka cannot take partitions away"
        else:
            advice = (
                f"either set TOCSIN_PUBLISH_PARTITIONS={existing} to run on the existing topics, or grow them: "
                f"stop publishing, let the workers drain, stop them, run `tocsin partitions --count {wanted}`, "
                f"then start again"
            )
    else:  # a grow that stopped midway: running it again finishes it
        advice = (
            f"the topics disagree among themselves (a `tocsin partitions` that did not finish?): run "
            f"`tocsin partitions --count {max(found)}` again, then start with TOCSIN_PUBLISH_PARTITIONS={max(found)}"
        )
    return (
        f"TOCSIN_PUBLISH_PARTITIONS is {wanted} but existing keyed topics differ ({listed}); "
        f"keyed topics and changelogs must share one partition count (docs/operations/partitions.md). {advice}"
    )


async def ensure_topics(settings: Settings, check: AccessCheck) -> None:
    """Create missing topics with the configured partitions (idempotent); :class:`PartitionMismatch`
    when an existing keyed topic or changelog has another partition count."""
    admin = AIOKafkaAdminClient(**client_args(settings), request_timeout_ms=10000)
    await start_client(admin, settings, check)  # a refused login or certificate: KafkaAccessError, not retried
    try:
        existing = set(await admin.list_topics())
        counts = await partition_counts(admin, [t for t in keyed_topics(settings) if t in existing])
        if grow_marker(settings) in existing:
            raise PartitionMismatch(
                f"a partition grow of this deployment is under way or stopped midway (topic "
                f"{grow_marker(settings)} exists): run `tocsin partitions --count {max(counts.values(), default=0)}` "
                f"until it reports done, then start with TOCSIN_PUBLISH_PARTITIONS set to that count"
            )
        problem = mismatch_message(settings, counts)
        if problem is not None:
            raise PartitionMismatch(problem)
        missing = [t for t in topic_specs(settings) if t.name not in existing]
        if missing:
            response = await admin.create_topics(missing)
            for topic, code, *rest in response.topic_errors:
                if code in NOT_READY_CODES:
                    raise BrokerNotReady(f"cannot create Kafka topic {topic} yet: error {code} {rest}")
                if code not in (0, TopicAlreadyExistsError.errno):
                    raise RuntimeError(f"cannot create Kafka topic {topic}: error {code} {rest}")
    finally:
        await admin.close()


# CreateTopics errors of a cluster still coming up: REQUEST_TIMED_OUT, INVALID_REPLICATION_FACTOR
# (fewer live brokers than the replication factor yet), NOT_CONTROLLER.
NOT_READY_CODES = frozenset({7, 38, 41})


class BrokerNotReady(TocsinError, KafkaError):  # type: ignore[misc]  # aiokafka ships no type hints
    """The cluster answered but cannot create the topics yet: :func:`ensure_topics_when_reachable`
    tries again (``retriable``, as aiokafka's own errors say it)."""

    retriable = True


# What a broker that is down or coming up raises from the admin client: KafkaError (connection,
# not ready), OSError and TimeoutError (aiokafka raises a plain TimeoutError when no node gets
# ready within the request timeout), AttributeError (aiokafka's controller lookup before a
# controller is known dereferences None).
UNREACHABLE = (KafkaError, OSError, TimeoutError, AttributeError)


async def ensure_topics_when_reachable(settings: Settings, check: AccessCheck, max_delay: float = 30.0) -> None:
    """:func:`ensure_topics`, waiting for the broker if it is not reachable yet: an API or a
    worker started before or during a broker outage waits (logging each retry) instead of exiting."""
    topic_specs(settings)  # a configuration error fails now, not after a wait
    waits = RetrySchedule(base_s=1.0, factor=2, max_delay_s=max_delay)
    attempt = 0
    while True:
        try:
            await ensure_topics(settings, check)
            return
        except UNREACHABLE as exc:
            attempt += 1
            delay = waits.nominal(attempt)
            log.warning("broker %s not reachable (%r); retrying in %.0f s", settings.kafka_bootstrap, exc, delay)
        await asyncio.sleep(delay)
