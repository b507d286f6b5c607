"""Value codecs of the worker's tables: versioned JSON, so a later change of shape can migrate
what an older worker wrote (the changelog keeps values for as long as their key lives)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from app.domain.events.control import STATE_VERSION, ControlState
from app.domain.pipeline import StoredControl
from app.errors import TocsinError

log = logging.getLogger(__name__)


def dump_control(stored: StoredControl) -> bytes:
    s = stored.state
    return orjson.dumps(
        {
            "v": STATE_VERSION,
            "offset": stored.offset,
            "seq": stored.seq,
            "due_ms": stored.due_ms,
            "state": {
                "policy_type": s.policy_type,
                "episode_open": s.episode_open,
                "episode_seq": s.episode_seq,
                "peaks": [list(p) for p in s.peaks],
                "last_values": [list(v) for v in s.last_values],
                "stable_count": s.stable_count,
                "set_members": list(s.set_members),
                "last_decision": s.last_decision,
                "last_notify_ms": s.last_notify_ms,
                "episode_workflows": None if s.episode_workflows is None else list(s.episode_workflows),
            },
        }
    )


class UnreadableValue(TocsinError, ValueError):
    """A stored table value that cannot be decoded (corrupted, or written by an unknown version)."""


def load_control(raw: bytes | None) -> StoredControl | None:
    """The stored state, migrated to the current version; None for no value. An unreadable value
    raises :class:`UnreadableValue`: the stage dead-letters it with the reason (never a silent
    fresh start)."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
        version = value.get("v")
        if version != STATE_VERSION:  # the only version so far; a new one adds its migration here
            raise ValueError(f"unknown control state version {version!r}")
        s: dict[str, Any] = value["state"]
        episode_open = bool(s["episode_open"])
        # Absent from a state written before it was kept: not known for an open episode (its
        # release then goes through each workflow's filter, as it did), empty otherwise.
        workflows = s.get("episode_workflows", None if episode_open else [])
        state = ControlState(
            policy_type=str(s["policy_type"]),
            episode_open=episode_open,
            episode_seq=int(s["episode_seq"]),
            peaks=tuple((str(m), float(v), int(at)) for m, v, at in s["peaks"]),
            last_values=tuple((str(m), float(v)) for m, v in s["last_values"]),
            stable_count=int(s["stable_count"]),
            set_members=tuple(str(a) for a in s["set_members"]),
            last_decision=s["last_decision"],
            last_notify_ms=s["last_notify_ms"],
            episode_workflows=None if workflows is None else tuple(str(w) for w in workflows),
        )
        return StoredControl(state, int(value["offset"]), int(value["seq"]), value.get("due_ms"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnreadableValue(f"control state unreadable: {type(exc).__name__}: {exc}") from exc


def load_due(raw: bytes) -> int | None:
    """The auto-resolve time of a stored state alone (the scans of the due index read every state:
    this skips building the state); :class:`UnreadableValue` as :func:`load_control`."""
    try:
        value = orjson.loads(raw)
        if value.get("v") != STATE_VERSION:
            raise ValueError(f"unknown control state version {value.get('v')!r}")
        due = value.get("due_ms")
        return None if due is None else int(due)
    except (ValueError, TypeError, AttributeError) as exc:
        raise UnreadableValue(f"control state unreadable: {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class StoredKey:
    """An idempotency key as stored: the first event that carried it, its event time and offset."""

    event_id: str
    at_ms: int
    offset: int


def dump_key(stored: StoredKey) -> bytes:
    return orjson.dumps({"v": 1, "event_id": stored.event_id, "at_ms": stored.at_ms, "offset": stored.offset})


def load_key(raw: bytes | None) -> StoredKey | None:
    """The stored key; None for no value; :class:`UnreadableValue` for an unreadable one."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
        if value.get("v") != 1:
            raise ValueError(f"unknown idempotency value version {value.get('v')!r}")
        return StoredKey(str(value["event_id"]), int(value["at_ms"]), int(value["offset"]))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnreadableValue(f"idempotency value unreadable: {type(exc).__name__}: {exc}") from exc


# The next source offset a table partition's agent had to apply, as the previous release's Faust
# tables stored it beside the states (one key per partition): an upgrade in place starts a stage no
# later than it (streams/stage_runner.py). Never a state key: those start with an organization id.
PROGRESS_KEY = b"\x00next-offset"


def is_progress_key(key: bytes) -> bool:
    return key == PROGRESS_KEY


# With transactions, also the commit markers owed after the applied records ("offset/owed"; a value
# without "/" owes none), so a worker that takes the partition over passes them without a seek.
def dump_progress(offset: int, owed: int = 0) -> bytes:
    return f"{offset}/{owed}".encode() if owed else str(offset).encode()


def load_progress_state(raw: bytes | None) -> tuple[int, int] | None:
    """``(next offset, commit markers owed)`` or None when never written."""
    if raw is None:
        return None
    offset, _, owed = raw.partition(b"/")
    return int(offset), int(owed or b"0")


def load_progress(raw: bytes | None) -> int | None:
    state = load_progress_state(raw)
    return None if state is None else state[0]
