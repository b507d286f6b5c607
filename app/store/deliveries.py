"""Deliveries of actions, as the delivery agents store them in batches (streams/actions.py): each
delivery's state and attempts, the push outbox, the webhook endpoints a 410 disabled, and a trace step
per attempt, deduplicated on effect ids. What an attempt leads to is decided in
app/domain/delivery/delivery_verdicts.py; this module only persists it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.delivery.delivery_verdicts import Attempt, DeliveryOutcome
from app.store.models import (
    Delivery,
    DisabledEndpoint,
    PushNotification,
)
from app.store.results import insert_ignoring_duplicates, record_trace_steps


@dataclass(slots=True)
class DeliveryResult:
    """One attempt of one delivery item and what it leads to (see streams/actions.py)."""

    item: dict[str, Any]
    attempt: Attempt
    outcome: DeliveryOutcome
    # when the item was accepted, decided, received, attempted, ended and delivered (epoch ms; streams/actions.py)
    stages: dict[str, int | None] | None = None


_STATUS_OF = {"DELIVERED": "DELIVERED", "RETRY": "RETRYING", "DEAD": "DEAD", "DISABLE": "DISABLED"}


def delivery_status(result: DeliveryResult) -> str:
    if result.attempt.expired:
        return "EXPIRED"
    if result.outcome.verdict == "DEAD" and result.attempt.permanent:
        return "REFUSED"
    return _STATUS_OF[str(result.outcome.verdict)]


async def load_delivery_states(session: AsyncSession, ids: Sequence[str]) -> dict[str, tuple[str, int, int]]:
    """(status, attempts, replays) of the deliveries among ``ids`` that exist."""
    rows = await session.execute(
        select(Delivery.id, Delivery.status, Delivery.attempts, Delivery.replays).where(Delivery.id.in_(list(ids)))
    )
    return {r[0]: (r[1], int(r[2]), int(r[3])) for r in rows}


def _target(item: dict[str, Any]) -> str:
    content = item.get("content") or {}
    if "url" in content:
        return str(content["url"])
    if "to" in content:
        return ", ".join(content["to"])
    return ", ".join([*content.get("user_ids", []), *content.get("group_ids", [])])


async def store_delivery_results(session: AsyncSession, kind: str, results: Sequence[DeliveryResult]) -> None:
    """Upsert each delivery's state, the push outbox rows, the endpoints a 410 disabled, and one
    trace step per attempt: an event's trace is where every attempt is kept. ``kind`` is the kind
    of every result (the delivery stage of that kind stores them), recorded as it is."""
    now = datetime.now(UTC)
    # A row for each delivery first, one already there (stored meanwhile by another worker that
    # made the same attempt after a rebalance) left as it is; then every row is read and updated.
    # Read first and inserted when absent, two workers storing one effect id at once both found
    # none and the second insert failed on the primary key (an ERROR, then a retry of the batch).
    new_rows: dict[str, dict[str, Any]] = {}
    for r in results:
        item = r.item
        new_rows.setdefault(
            item["effect_id"],
            {
                "id": item["effect_id"],
                "organization_id": item["organization_id"],
                "event_id": item["event_id"],
                "workflow_id": item["workflow_id"],
                "action_index": int(item["action_index"]),
                "kind": kind,
                "target": _target(item)[:2048],
                "mode": item["mode"],
                "decision": item["decision"],
                "status": delivery_status(r),
                "attempts": 0,
                "replays": int(item.get("replay", 0)),
                "item": {},
                "created_at": now,
                "updated_at": now,
            },
        )
    await insert_ignoring_duplicates(session, Delivery, list(new_rows.values()))
    existing = {d.id: d for d in (await session.scalars(select(Delivery).where(Delivery.id.in_(list(new_rows))))).all()}
    pushes, steps = [], []
    for r in results:
        item, att, number = r.item, r.attempt, int(r.item["attempt"])
        replay = int(item.get("replay", 0))
        status = delivery_status(r)
        row = existing[item["effect_id"]]
        if replay < row.replays or (replay == row.replays and number < row.attempts):
            continue  # an older attempt stored late: the row already says more
        row.status, row.attempts, row.replays, row.updated_at = status, number, replay, now
        row.last_status_code, row.last_error = att.status_code, (att.error or None)
        row.next_attempt_at = (
            now + timedelta(seconds=r.outcome.delay_s) if r.outcome.verdict == "RETRY" and r.outcome.delay_s else None
        )
        if status in ("DEAD", "REFUSED"):  # kept for a replay (the only reader of the item)
            row.item = {k: v for k, v in item.items() if k not in ("attempt", "due_ms", "replay", "reason")}
        if att.record is not None:
            pushes.append({**att.record, "created_at": now})
        if r.outcome.verdict == "DISABLE" and att.status_code == 410:
            await insert_ignoring_duplicates(
                session,
                DisabledEndpoint,
                [
                    {
                        "workflow_id": item["workflow_id"],
                        "action_index": int(item["action_index"]),
                        "organization_id": item["organization_id"],
                        "url": _target(item),
                        "disabled_at": now,
                        "reason": "410 Gone",
                    }
                ],
            )
        steps.append(
            {
                "event_id": item["event_id"],
                "organization_id": item["organization_id"],
                "at_ms": int(item["accepted_ms"]),
                "step": f"delivery:{row.id}:{replay}:{number}",
                "seq": 20 + number,
                "detail": {
                    "effect_id": row.id,
                    "kind": row.kind,
                    "workflow_id": item["workflow_id"],
                    "action_index": int(item["action_index"]),
                    "attempt": number,
                    "replay": replay,
                    "outcome": status,
                    "status_code": att.status_code,
                    "error": att.error,
                    "reason": r.outcome.reason,
                    "duration_ms": att.duration_ms,
                    "next_attempt_in_s": r.outcome.delay_s if r.outcome.verdict == "RETRY" else None,
                    "stages": r.stages,
                },
            }
        )
    await session.flush()
    await insert_ignoring_duplicates(session, PushNotification, pushes)
    await record_trace_steps(session, steps)
