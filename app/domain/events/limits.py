"""Input limits a deployment sets (``TOCSIN_MAX_*``), checked after the static bounds of the
pydantic models (which stay as hard ceilings: a setting can only tighten what they allow).

A publish is checked on the hot path, so the checks start from what is already at hand: the raw
body. A body no longer than the data limit cannot carry a larger ``data``; a body with fewer
``{``/``[`` than the depth limit cannot nest deeper; one with fewer commas than the array limit
cannot hold a longer array; one shorter than the string limit cannot hold a longer string. Only a
body that fails one of these cheap counts is walked — iteratively, never deeper than the limit,
and stopping at the first violation of each kind — so a hostile body costs one bounded pass.

Depth counts containers: ``data`` itself is level 1, ``{"data": {"a": [1]}}`` has depth 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from app.domain.events.publish import PublishRequest
from app.domain.shared.json_bounds import json_violations, may_exceed

LIMIT_EXCEEDED = "limit_exceeded"

# (field path as the API reports it, message)
Violation = tuple[str, str]


@dataclass(frozen=True, slots=True)
class PublishLimits:
    data_bytes: int = 64 * 1024
    data_depth: int = 32
    string_chars: int = 16_384
    array_items: int = 1000
    metrics: int = 100


@dataclass(frozen=True, slots=True)
class ConfigLimits:
    workflow_actions: int = 20
    filter_conditions: int = 100
    filter_values: int = 1000
    bindings_per_subject: int = 200
    bindings_per_organization: int = 10_000
    workflows_per_organization: int = 1000
    workflows_per_topic: int = 100


def _path(parts: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in parts)


def _tree_violations(root: Any, prefix: tuple[str, ...], limits: PublishLimits) -> Iterator[Violation]:
    """Depth, string and array violations inside one JSON value, walked without recursion.

    Reports at most one violation of each kind (the first found): enough to fix the body,
    and the walk stays linear in the body's size.
    """
    seen: set[str] = set()
    # (value, path, depth of the value if it is a container)
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(root, prefix, 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth > limits.data_depth:
                if "depth" not in seen:
                    seen.add("depth")
                    yield _path(path), f"nested deeper than {limits.data_depth} levels"
                continue
            for key, item in value.items():
                if len(key) > limits.string_chars and "string" not in seen:
                    seen.add("string")
                    yield _path(path), f"has a key longer than {limits.string_chars} characters"
                if isinstance(item, dict | list | str):
                    stack.append((item, (*path, key), depth + 1))
        elif isinstance(value, list):
            if depth > limits.data_depth:
                if "depth" not in seen:
                    seen.add("depth")
                    yield _path(path), f"nested deeper than {limits.data_depth} levels"
                continue
            if len(value) > limits.array_items and "array" not in seen:
                seen.add("array")
                yield _path(path), f"more than {limits.array_items} items"
            for index, item in enumerate(value):
                if isinstance(item, dict | list | str):
                    stack.append((item, (*path, index), depth + 1))
        elif isinstance(value, str) and len(value) > limits.string_chars and "string" not in seen:
            seen.add("string")
            yield _path(path), f"longer than {limits.string_chars} characters"
        if len(seen) == 3:
            return


def publish_violations(
    request: PublishRequest, body: bytes, limits: PublishLimits, *, numbers_cleared: bool = False
) -> list[Violation]:
    """Every limit ``request`` (parsed from ``body``) exceeds, ``[(field path, message)]``; empty if none.

    ``numbers_cleared``: a text holding ``body`` (a batch's whole body) was found by
    :func:`may_exceed` to hold no number out of range, so ``body`` holds none either (the search is
    for substrings): the numbers are not searched again."""
    found: list[Violation] = []
    if len(body) > limits.data_bytes and len(to_json(request.data)) > limits.data_bytes:
        found.append(("data", f"larger than {limits.data_bytes} bytes as JSON"))
    control = request.event_control
    if control is not None:
        if control.metrics is not None and len(control.metrics) > limits.metrics:
            found.append(("event_control.metrics", f"more than {limits.metrics} metrics"))
        if control.areas is not None and len(control.areas) > limits.array_items:
            found.append(("event_control.areas", f"more than {limits.array_items} items"))
    targets = request.attributes.target_organization_ids if request.attributes is not None else None
    if targets is not None and len(targets) > limits.array_items:
        found.append(("attributes.target_organization_ids", f"more than {limits.array_items} items"))
    if (
        body.count(b"{") + body.count(b"[") > limits.data_depth
        or body.count(b",") >= limits.array_items
        or len(body) > limits.string_chars
    ):
        found.extend(_tree_violations(request.data, ("data",), limits))
        notification = request.notification
        if notification is not None and notification.data is not None:
            found.extend(_tree_violations(notification.data, ("notification", "data"), limits))
    if not numbers_cleared and may_exceed(body, None):
        # every number of the request: data, notification, event_control (app/domain/shared/json_bounds.py)
        found.extend(json_violations(request.model_dump(exclude_none=True)))
    return found


def count_violation(what: str, count: int, limit: int, setting: str) -> str | None:
    """The message refusing one more of ``what`` when ``count`` already exist, else None."""
    if count < limit:
        return None
    return f"at most {limit} {what} (TOCSIN_{setting.upper()}); delete one first"
