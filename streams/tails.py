"""The worker's tail watch (streams/tail_watch.py): which Faust agents' records carry a promise, and
how far each has applied its source partitions. The control stage takes whole batches on a consumer
of its own (streams/control_batch.py), whose committed offset is what it applied, by construction."""

from __future__ import annotations

from app.kafka.app import action_topics, idempotency_topic, incident_actions_topic, traces_topic
from streams.tail_watch import TailWatch, Watched
from tables.control import idempotency_keys
from tables.faust_adapter import tail_view
from tables.state import PartitionState


def _stored_progress(stage: str, source: object, table: PartitionState) -> Watched:
    """An agent that stores its next offset with its states (streams/progress.py); a partition it
    never wrote is watched from the committed offset."""
    topic = source.get_topic_name()  # type: ignore[attr-defined]

    async def applied(partition: int) -> int | None:
        stored = table.progress_of(partition)
        return stored[0] if stored is not None else tail_view.committed(topic, partition)

    return Watched(stage, topic, applied)


def _committed(stage: str, source: object) -> Watched:
    """An agent whose records count as applied once acknowledged (and then committed)."""
    topic = source.get_topic_name()  # type: ignore[attr-defined]

    async def applied(partition: int) -> int | None:
        return tail_view.acknowledged(topic, partition)

    return Watched(stage, topic, applied)


tail_watch = TailWatch(
    tail_view,
    [
        _stored_progress("idempotency", idempotency_topic, idempotency_keys),
        _committed("incidents", incident_actions_topic),
        _committed("traces", traces_topic),
        *(_committed(f"deliveries.{kind.lower()}", topic) for kind, topic in action_topics.items()),
    ],
)
