"""One publish request from its raw JSON, checked as the API accepts it: the one place of that
rule, for the single publish and for every item of a batch (api/routes/publish.py).

The checks, in order: the model (:class:`PublishRequest`, strict: pydantic's ``ValidationError``),
the deployment's input limits (app/domain/limits.py), and, on a topic with a control policy, the
partition key (both :class:`InvalidInput`). Each failure is a ``422 VAL-001`` whose details list
the failing fields, ``{"fields": [{field, message, type}]}``.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.limits import LIMIT_EXCEEDED, PublishLimits, Violation, publish_violations
from app.domain.publish import PublishRequest
from app.errors import InvalidInput

PARTITION_KEY_REQUIRED = "event_control.partition_key is required on topics with a control policy"


def limits_error(violations: Sequence[Violation]) -> InvalidInput:
    """422 VAL-001 listing each field over its limit: ``{"fields": [{field, message, type}]}``."""
    return InvalidInput(
        "; ".join(f"{field}: {message}" if field else message for field, message in violations),
        details={"fields": [{"field": f, "message": m, "type": LIMIT_EXCEEDED} for f, m in violations]},
    )


def check_publish(
    body: bytes, limits: PublishLimits, *, partition_key_required: bool, numbers_cleared: bool = False
) -> PublishRequest:
    """The request ``body`` holds; raises ``pydantic.ValidationError`` or :class:`InvalidInput`.

    ``partition_key_required``: the topic has a control policy (METRIC, SET), so the request must
    name its control state; False also when the topic is not known yet (its 404 comes later).
    ``numbers_cleared``: the batch holding ``body`` holds no number out of range
    (:func:`~app.domain.limits.publish_violations`).
    """
    request = PublishRequest.model_validate_json(body)
    if violations := publish_violations(request, body, limits, numbers_cleared=numbers_cleared):
        raise limits_error(violations)
    if partition_key_required and request.partition_key is None:
        raise InvalidInput(
            PARTITION_KEY_REQUIRED,
            details={"fields": [{"field": "event_control.partition_key", "message": "required", "type": "missing"}]},
        )
    return request
