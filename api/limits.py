"""The errors of the configurable input limits (app/domain/limits.py): 422 VAL-001 naming the
failing field, as every other validation error does (api/errors.py ``validation_details``)."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.limits import LIMIT_EXCEEDED, Violation
from app.errors import InvalidInput


def limits_exceeded(violations: Sequence[Violation]) -> InvalidInput:
    """422 VAL-001 listing each field over its limit: ``{"fields": [{field, message, type}]}``."""
    return InvalidInput(
        "; ".join(f"{field}: {message}" for field, message in violations),
        details={"fields": [{"field": f, "message": m, "type": LIMIT_EXCEEDED} for f, m in violations]},
    )


def count_exceeded(field: str, message: str) -> InvalidInput:
    """422 VAL-001 for one more of something an organization already has as many of as allowed."""
    return limits_exceeded([(field, message)])
