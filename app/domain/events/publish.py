"""The publish request of the spec, validated field by field, and the record the
ingress writes to Kafka for the agents."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_core import to_json

from app.domain.events.notification import NotificationObject
from app.domain.shared.strict_model import FrozenStrictModel

MAX_KEY_CHARS = 256
# Hard ceilings; a deployment tightens them with TOCSIN_MAX_PUBLISH_* (app/domain/events/limits.py).
MAX_ARRAY_ITEMS = 10_000
MAX_METRICS = 1000
MAX_ITEM_CHARS = 1024  # one SET member (``areas``) or target organization id

Item = Annotated[str, Field(max_length=MAX_ITEM_CHARS)]


class PublishStatus(StrEnum):
    ACTUAL = "ACTUAL"
    DRILL = "DRILL"
    TEST = "TEST"


class EventInfo(FrozenStrictModel):
    id: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    lang: str | None = Field(default=None, max_length=35)
    name: str | None = Field(default=None, max_length=1024)
    description: str | None = Field(default=None, max_length=16384)


class Attributes(FrozenStrictModel):
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    target_organization_ids: list[Item] | None = Field(default=None, max_length=MAX_ARRAY_ITEMS)


# What a publish asks of its partition key's episode (docs/api.md, "Resolve and acknowledge from the
# source"): ``trigger`` (absent: the default) goes through the topic's policy; ``resolve`` ends the open
# episode, or on BYPASS topics the open incident of the publisher's key; ``acknowledge`` sets it ACKNOWLEDGED.
SourceAction = Literal["trigger", "acknowledge", "resolve"]


class EventControl(FrozenStrictModel):
    partition_key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    metrics: dict[str, float] | None = Field(default=None, max_length=MAX_METRICS)
    areas: list[Item] | None = Field(default=None, max_length=MAX_ARRAY_ITEMS)
    action: SourceAction | None = None

    @field_validator("metrics")
    @classmethod
    def _finite(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None:
            for name, number in value.items():
                if len(name) > MAX_KEY_CHARS:
                    raise ValueError(f"metric names have at most {MAX_KEY_CHARS} characters")
                if number != number or number in (float("inf"), float("-inf")):
                    raise ValueError(f"metric {name!r} must be a finite number")
        return value


class PublishRequest(FrozenStrictModel):
    """The body of ``POST .../workflow_topics/{topic}/publish``."""

    data: dict[str, Any]
    status: PublishStatus
    event: EventInfo | None = None
    attributes: Attributes | None = None
    notification: NotificationObject | None = None
    event_control: EventControl | None = None

    @property
    def partition_key(self) -> str | None:
        return self.event_control.partition_key if self.event_control else None


def state_key(org_id: str, topic_id: str, status: str, partition: str) -> str:
    """Kafka key of a publish: the control state it belongs to (docs/operations/partitions.md)."""
    return f"{org_id}/{topic_id}/{status}/{partition}"


def idempotency_stage_key(org_id: str, topic_id: str, status: str, idempotency_key: str) -> str:
    """Kafka key of a publish carrying ``attributes.idempotency_key``: one key space per organization,
    topic and publish status (shared by the topic's publishers), so an exercise never suppresses a
    real event, whatever the partition key."""
    return f"{org_id}/{topic_id}/{status}/{idempotency_key}"


def publish_record(
    *, event_id: str, org_id: str, topic_id: str, request: PublishRequest, accepted_ms: int
) -> dict[str, Any]:
    """The value the ingress writes to the publish topic (decoded by the control agent)."""
    body = request.model_dump(mode="json", exclude_none=True)
    body.update(id=event_id, organization_id=org_id, topic_id=topic_id, accepted_ms=accepted_ms, v=1)
    return body


class PublishRecordEncoder:
    """:func:`publish_record` (plus ``state_key``, for the idempotency stage) as the JSON the ingress
    writes, for the publishes of one request: they share all the server's fields but the event id
    (a batch's up to 1,000), so those are encoded once. Each request is serialized by pydantic
    straight to bytes, behind the server's fields — the same object as :func:`publish_record`, in
    about a third of the time of a dict encoded again."""

    __slots__ = ("_shared",)

    def __init__(self, org_id: str, topic_id: str, accepted_ms: int, request_id: str | None = None) -> None:
        shared: dict[str, Any] = {"organization_id": org_id, "topic_id": topic_id, "accepted_ms": accepted_ms, "v": 1}
        if request_id is not None:  # the API request's, on the worker's lines about the event too
            shared["request_id"] = request_id
        self._shared = b"," + to_json(shared)[1:-1]

    def encode(self, event_id: str, request: PublishRequest, state_key: str | None = None) -> bytes:
        """The record of ``request`` as event ``event_id`` (a server id: ASCII letters, digits, ``_``)."""
        body = request.__pydantic_serializer__.to_json(request, exclude_none=True)
        keyed = b',"state_key":' + to_json(state_key) if state_key is not None else b""
        # the body has at least "data" and "status": its "{" opens the rest of this object
        return b'{"id":"' + event_id.encode() + b'"' + self._shared + keyed + b"," + body[1:]
