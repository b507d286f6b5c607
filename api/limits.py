"""The errors of the configurable input limits (app/domain/events/limits.py): 422 VAL-001 naming the
failing field, as every other validation error does (api/errors.py ``validation_details``)."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.events.limits import Violation
from app.domain.events.publish_check import limits_error
from app.errors import InvalidInput


def limits_exceeded(violations: Sequence[Violation]) -> InvalidInput:
    """422 VAL-001 listing each field over its limit: ``{"fields": [{field, message, type}]}``."""
    return limits_error(violations)


def count_exceeded(field: str, message: str) -> InvalidInput:
    """422 VAL-001 for one more of something an organization already has as many of as allowed."""
    return limits_exceeded([(field, message)])
