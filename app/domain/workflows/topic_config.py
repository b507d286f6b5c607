"""What the worker knows about one topic: its spec, its ACTIVE workflows (each with its filter
compiled against the topic's fields) and the operation books they reference. The store loads
it (app/store/workflows.py) and the worker caches it; the per-event pipeline reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.domain.workflows.filters.compiled import CompiledFilter, compile_filter
from app.domain.workflows.filters.validation import InvalidFilter


@dataclass(frozen=True)
class WorkflowConfig:
    id: str
    name: str
    mode: str
    filter: dict[str, Any] | None
    sites: list[Any] | None
    actions: list[dict[str, Any]]
    # The filter compiled against the topic's fields when the configuration was loaded; None with
    # ``filter_error`` when the topic's fields changed since and the filter no longer fits them.
    compiled: CompiledFilter | None = None
    filter_error: str | None = None
    # Webhook actions (by index) disabled after a 410 Gone, until the workflow is updated.
    disabled_actions: frozenset[int] = frozenset()
    # The organization the workflow belongs to (another one than the topic's when shared), and
    # why it may no longer receive the topic (sharing changed since it subscribed), if so.
    organization_id: str = ""
    receive_error: str | None = None


def compiled_filter(
    filter: dict[str, Any] | None, fields: list[dict[str, Any]]
) -> tuple[CompiledFilter | None, str | None]:
    """A workflow's filter compiled against the topic's ``fields``, or the reason it no longer
    fits them (the workflow then runs no action, and its trace says why)."""
    try:
        return compile_filter(filter, fields), None
    except InvalidFilter as exc:
        return None, "; ".join(f"{path}: {message}" for path, message in exc.errors)


@dataclass(frozen=True)
class TopicConfig:
    """What the agents need to know about one topic, loaded once and cached."""

    org_id: str
    topic_id: str
    key: str
    spec: dict[str, Any]
    workflows: tuple[WorkflowConfig, ...]
    books: dict[str, dict[str, Any]] = field(default_factory=dict)
