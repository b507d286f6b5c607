"""Every effect counted where a duplicate would show: each incident timeline entry, each
``updated=`` / ``duplicates=`` of the incident sink, each webhook delivery and e-mail received.

A sink dedupes a *redelivered* effect on its effect id, and on BYPASS topics a *second* effect
for an open incident with the same ``event.id`` becomes a timeline update rather than a second
incident; so "one incident per event" holds whatever the worker does. What shows the bug is the
timeline (a second entry) and the sink's ``updated=`` count. For receivers outside Tocsin a
repeat of the same effect (same ``webhook-id``, same ``Message-ID``) is at-least-once and
allowed; a second id for the same event and action is a second effect, the bug.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import Incident, IncidentEvent
from tests.support.db import in_db
from tests.support.logs import messages
from tests.support.stack import Stack

T = TypeVar("T")

_SINK = re.compile(r"^sink=incidents batch=\d+ created=(\d+) updated=(\d+) duplicates=(\d+)$")
# Late duplicates: how long a test keeps looking after its set of effects is complete.
LISTEN_SECONDS = 4.0


def sink_totals(logs: Iterable[Path]) -> dict[str, int]:
    """``created``, ``updated`` and ``duplicates`` summed over every incident sink line of ``logs``."""
    out = {"created": 0, "updated": 0, "duplicates": 0}
    for log in logs:
        for match in filter(None, map(_SINK.match, messages(log, "streams.sinks"))):
            out["created"] += int(match.group(1))
            out["updated"] += int(match.group(2))
            out["duplicates"] += int(match.group(3))
    return out


def timeline_entries(stack: Stack) -> list[tuple[str | None, str, str]]:
    """Every incident timeline entry of the stack's database: (publisher ``event.id`` of the
    incident, entry kind, server event id of the entry), one row per entry."""

    async def read(session: AsyncSession) -> list[tuple[str | None, str, str]]:
        rows = await session.execute(
            select(Incident.event_id, IncidentEvent.kind, IncidentEvent.server_event_id).join(
                Incident, Incident.id == IncidentEvent.incident_id
            )
        )
        return [(e, k, s or "") for e, k, s in rows.all()]

    return in_db(stack, read)


def entries_per_event(stack: Stack) -> Counter[tuple[str | None, str]]:
    """The multiset of timeline entries, by (incident's publisher ``event.id``, kind)."""
    return Counter((e, k) for e, k, _ in timeline_entries(stack))


def listen(snapshot: Callable[[], T], seconds: float = LISTEN_SECONDS) -> T:
    """``snapshot()`` taken after a short listening window that follows a complete set of
    effects, so that a late duplicate (a redelivery still in flight) is counted too."""
    time.sleep(seconds)  # a fixed listening window after completion, not a wait for a condition
    return snapshot()
