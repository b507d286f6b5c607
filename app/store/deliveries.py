"""Deliveries of actions, as the delivery agents store them in batches (streams/actions.py): each
delivery's state and attempts, the push outbox, the webhook endpoints a 410 disabled, and a trace step
per attempt, deduplicated on effect ids. What an attempt leads to is decided in
app/domain/delivery/delivery_verdicts.py; this module only persists it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.delivery.delivery_verdicts import Attempt, DeliveryOutcome
from app.store.models import (
    Delivery,
    DisabledEndpoint,
    PushNotification,
)
from app.store.results import dialect_insert, insert_ignoring_duplicates, record_trace_steps


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
    of every result (the delivery stage of that kind stores them), recorded as it is.

    Core statements, not the ORM's unit of work (a third of the CPU of storing a batch): the rows
    are first inserted as the batch leaves them; a delivery already stored (an attempt after the
    first, or the same attempt stored meanwhile by another worker after a rebalance) is then read
    and updated, only where the stored row says less than this batch (a conditional write, so two
    workers storing at once never go back)."""
    now = datetime.now(UTC)
    planned = _plan(kind, results, {}, now)
    inserted = set(
        await session.scalars(
            dialect_insert(session, Delivery).on_conflict_do_nothing().returning(Delivery.id),
            list(planned.rows.values()),
        )
    )
    applied = [r for r in planned.applied if r.item["effect_id"] in inserted]
    stored_ids = [effect_id for effect_id in planned.rows if effect_id not in inserted]
    if stored_ids:
        found = await session.execute(
            select(Delivery.id, Delivery.replays, Delivery.attempts, Delivery.kind).where(Delivery.id.in_(stored_ids))
        )
        stored = {row[0]: (int(row[1]), int(row[2]), str(row[3])) for row in found}
        again = _plan(kind, [r for r in results if r.item["effect_id"] in stored], stored, now)
        await _update_stored(session, again)
        applied.extend(again.applied)
        planned.rows.update(again.rows)  # the stored rows' values, their recorded kind among them
    pushes, steps, disabled = [], [], []
    for r in applied:
        item, att, number = r.item, r.attempt, int(r.item["attempt"])
        replay, status, effect_id = int(item.get("replay", 0)), delivery_status(r), item["effect_id"]
        if att.record is not None:
            pushes.append({**att.record, "created_at": now})
        if r.outcome.verdict == "DISABLE" and att.status_code == 410:
            disabled.append(
                {
                    "workflow_id": item["workflow_id"],
                    "action_index": int(item["action_index"]),
                    "organization_id": item["organization_id"],
                    "url": _target(item),
                    "disabled_at": now,
                    "reason": "410 Gone",
                }
            )
        steps.append(
            {
                "event_id": item["event_id"],
                "organization_id": item["organization_id"],
                "at_ms": int(item["accepted_ms"]),
                "step": f"delivery:{effect_id}:{replay}:{number}",
                "seq": 20 + number,
                "detail": {
                    "effect_id": effect_id,
                    "kind": planned.rows[effect_id]["kind"],
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
    await insert_ignoring_duplicates(session, DisabledEndpoint, disabled)
    await insert_ignoring_duplicates(session, PushNotification, pushes)
    await record_trace_steps(session, steps)


@dataclass
class _Planned:
    """What a batch does to its deliveries' rows: each row's final values (its recorded kind among
    them) and the results applied (in order)."""

    rows: dict[str, dict[str, Any]]
    applied: list[DeliveryResult]
    kept_items: set[str] = field(default_factory=set)  # rows whose item is kept for a replay


def _plan(
    kind: str, results: Sequence[DeliveryResult], stored: dict[str, tuple[int, int, str]], now: datetime
) -> _Planned:
    """Apply ``results`` in order to the rows ``stored`` ((replays, attempts, kind) by effect id;
    absent: no row yet). An attempt older than what its row already says is skipped: stored late."""
    planned = _Planned({}, [])
    seen = dict(stored)
    for r in results:
        item, att, number = r.item, r.attempt, int(r.item["attempt"])
        effect_id, replay = item["effect_id"], int(item.get("replay", 0))
        before = seen.get(effect_id)
        if before is not None and (replay < before[0] or (replay == before[0] and number < before[1])):
            continue  # an older attempt stored late: the row already says more
        row_kind = before[2] if before is not None else kind
        seen[effect_id] = (replay, number, row_kind)
        status = delivery_status(r)
        row = planned.rows.get(effect_id)
        if row is None:
            row = planned.rows[effect_id] = {
                "id": effect_id,
                "organization_id": item["organization_id"],
                "event_id": item["event_id"],
                "workflow_id": item["workflow_id"],
                "action_index": int(item["action_index"]),
                "kind": row_kind,
                "target": _target(item)[:2048],
                "mode": item["mode"],
                "decision": item["decision"],
                "item": {},
                "created_at": now,
            }
        row.update(
            status=status,
            attempts=number,
            replays=replay,
            updated_at=now,
            last_status_code=att.status_code,
            last_error=att.error or None,
            next_attempt_at=(
                now + timedelta(seconds=r.outcome.delay_s)
                if r.outcome.verdict == "RETRY" and r.outcome.delay_s
                else None
            ),
        )
        if status in ("DEAD", "REFUSED"):  # kept for a replay (the only reader of the item)
            row["item"] = {k: v for k, v in item.items() if k not in ("attempt", "due_ms", "replay", "reason")}
            planned.kept_items.add(effect_id)
        planned.applied.append(r)
    return planned


_UPDATED = ("status", "attempts", "replays", "updated_at", "last_status_code", "last_error", "next_attempt_at")


async def _update_stored(session: AsyncSession, planned: _Planned) -> None:
    """Write the planned values over stored rows, each only where the row says less (an older
    replay, or an older attempt of the same replay): one executemany per shape (with or without
    the item kept for a replay)."""
    table = cast(Table, Delivery.__table__)
    for keeps_item in (False, True):
        shaped = [row for row in planned.rows.values() if (row["id"] in planned.kept_items) is keeps_item]
        if not shaped:
            continue
        columns = (*_UPDATED, "item") if keeps_item else _UPDATED
        statement = (
            update(table)
            .where(
                table.c.id == bindparam("b_id"),
                or_(
                    table.c.replays < bindparam("b_replays"),
                    and_(table.c.replays == bindparam("b_replays"), table.c.attempts <= bindparam("b_attempts")),
                ),
            )
            .values({name: bindparam(f"b_{name}") for name in columns})
        )
        params = [{"b_id": row["id"], **{f"b_{name}": row[name] for name in columns}} for row in shaped]
        await session.execute(statement, params)
