"""What the actions did: the push outbox, dead-lettered deliveries and their replay."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from api.deps import SessionDep, StateDep, require
from api.errors import CONFLICT
from api.models import Out, Timestamp
from api.pages import Page, PageDep, page, page_in_org
from app.domain.iam.principal import Principal
from app.errors import Conflict, NotFound
from app.kafka.records import encode
from app.kafka.topics import ACTIONS
from app.store import audit
from app.store.accounts import utcnow
from app.store.models import Delivery, PushNotification

router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["deliveries"])


class PushOut(Out):
    id: str
    event_id: str
    workflow_id: str
    mode: str
    user_ids: list[str]
    group_ids: list[str]
    title: str
    body: str
    apns: dict[str, Any]
    fcm: dict[str, Any]
    created_at: Timestamp


class DeliveryOut(Out):
    id: str
    kind: str
    event_id: str
    workflow_id: str
    action_index: int
    target: str | None
    mode: str
    decision: str
    status: str
    attempts: int
    replays: int
    last_status_code: int | None
    last_error: str | None
    updated_at: Timestamp


class ReplayOut(Out):
    id: str
    status: Literal["PENDING"]
    replay: int


def push_out(row: PushNotification) -> dict[str, Any]:
    return {
        "id": row.id,
        "event_id": row.event_id,
        "workflow_id": row.workflow_id,
        "mode": row.mode,
        "user_ids": row.user_ids,
        "group_ids": row.group_ids,
        "title": row.title,
        "body": row.body,
        "apns": row.apns,
        "fcm": row.fcm,
        "created_at": row.created_at.isoformat(),
    }


def delivery_out(row: Delivery) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "event_id": row.event_id,
        "workflow_id": row.workflow_id,
        "action_index": row.action_index,
        "target": row.target,
        "mode": row.mode,
        "decision": row.decision,
        "status": row.status,
        "attempts": row.attempts,
        "replays": row.replays,
        "last_status_code": row.last_status_code,
        "last_error": row.last_error,
        "updated_at": row.updated_at.isoformat(),
    }


@router.get("/push_notifications", response_model=Page[PushOut])
async def list_push_notifications(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.event:list"))],
    params: PageDep,
    event_id: Annotated[str | None, Query(max_length=64)] = None,
) -> Page[Any]:
    """What the outbox push provider recorded, newest id last, with the APNs and FCM payloads."""
    where = (PushNotification.event_id == event_id,) if event_id else ()
    rows, nxt = await page_in_org(session, PushNotification, org_id, params, *where)
    return page([push_out(r) for r in rows], nxt)


@router.get("/dead_letters", response_model=Page[DeliveryOut])
async def list_dead_letters(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow:list"))],
    params: PageDep,
) -> Page[Any]:
    """Deliveries that exhausted their retries (or failed permanently) and were not replayed since."""
    rows, nxt = await page_in_org(session, Delivery, org_id, params, Delivery.status.in_(("DEAD", "REFUSED")))
    return page([delivery_out(r) for r in rows], nxt)


@router.post(
    "/dead_letters/{delivery_id}:replay",
    status_code=202,
    response_model=ReplayOut,
    responses=CONFLICT,
)
async def replay_dead_letter(
    org_id: str,
    delivery_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:update"))],
) -> dict[str, Any]:
    """Deliver again now: the stored item goes back to its action topic as attempt 1 of a new
    replay (the delivery keeps its effect id, so ``webhook-id`` stays the same)."""
    row: Delivery | None = await session.get(Delivery, delivery_id)
    if row is None or row.organization_id != org_id:
        raise NotFound("dead letter not found")
    if row.status not in ("DEAD", "REFUSED"):
        raise Conflict(f"the delivery is {row.status}, not dead-lettered")
    replay = row.replays + 1
    item = {**row.item, "attempt": 1, "replay": replay, "kind": row.kind}
    sent = await state.producer.send(state.settings.topic(ACTIONS[row.kind]), value=encode(item), key=row.id.encode())
    await sent
    row.status, row.replays, row.attempts, row.updated_at = "PENDING", replay, 0, utcnow()
    audit.record(session, principal, "replay", "delivery", row.id, {"replay": replay})
    await session.commit()
    return {"id": row.id, "status": row.status, "replay": replay}
