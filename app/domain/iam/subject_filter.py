"""Subject filters of federated credentials: which token subjects a credential trusts — pure."""

from __future__ import annotations

from app.errors import InvalidCredential

MAX_SUBJECT_FILTER_CHARS = 1024


def validate_subject_filter(value: str) -> str:
    """Exact value, or a prefix ending in one trailing ``*``; a bare ``*`` is refused."""
    if not value or len(value) > MAX_SUBJECT_FILTER_CHARS:
        raise InvalidCredential("subject_filter", f"must be 1 to {MAX_SUBJECT_FILTER_CHARS} characters")
    if value.strip() != value or any(ord(c) < 32 for c in value):
        raise InvalidCredential("subject_filter", "must not contain surrounding spaces or control characters")
    if "*" in value[:-1]:
        raise InvalidCredential("subject_filter", "'*' is allowed only once, as the last character")
    if value == "*":
        raise InvalidCredential("subject_filter", "a bare '*' would trust every subject of the issuer")
    return value


def subject_matches(subject_filter: str, subject: str) -> bool:
    """Exact match, or prefix match when the filter ends in ``*``."""
    if subject_filter.endswith("*"):
        return subject.startswith(subject_filter[:-1])
    return subject == subject_filter
