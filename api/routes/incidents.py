"""Incidents created by workflows, and event traces."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select

from api.deps import SessionDep, permission_extra, require
from api.pages import Page, page
from app.domain import iam
from app.errors import NotFound
from app.store.accounts import Principal
from app.store.models import Incident
from app.store.results import event_trace

router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["incidents"])


def incident_out(inc: Incident) -> dict[str, Any]:
    return {
        "id": inc.id,
        "title": inc.title,
        "status": inc.status,
        "operation_book_id": inc.operation_book_id,
        "workflow_id": inc.workflow_id,
        "topic_id": inc.topic_id,
        "partition_key": inc.partition_key,
        "event_id": inc.event_id,
        "server_event_id": inc.server_event_id,
        "mode": inc.mode,
        "member_user_ids": inc.member_user_ids,
        "member_group_ids": inc.member_group_ids,
        "created_at": inc.created_at.isoformat(),
        "resolved_at": inc.resolved_at.isoformat() if inc.resolved_at else None,
    }


def _sees(principal: Principal, inc: Incident) -> bool:
    """Without ``incident:fullaccess`` a caller sees only incidents it is a member of."""
    full = iam.evaluate(
        principal.bindings,
        iam.SYSTEM_ROLES,
        "organization.incident:fullaccess",
        iam.resource_name(inc.organization_id, "incidents", inc.id),
    )
    return full is not None or principal.account_id in inc.member_user_ids


@router.get("/incidents", openapi_extra=permission_extra("organization.incident:list"))
async def list_incidents(
    org_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:list"))],
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> Page:
    query = select(Incident).where(Incident.organization_id == org_id)
    if cursor:
        query = query.where(Incident.id > cursor)
    rows = list((await session.scalars(query.order_by(Incident.id).limit(limit + 1))).all())
    nxt = rows[limit - 1].id if len(rows) > limit else None
    return page([incident_out(i) for i in rows[:limit] if _sees(principal, i)], nxt)


@router.get("/incidents/{incident_id}", openapi_extra=permission_extra("organization.incident:get"))
async def get_incident(
    org_id: str,
    incident_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:get", "incidents", "incident_id"))],
) -> dict[str, Any]:
    inc = await session.get(Incident, incident_id)
    if inc is None or inc.organization_id != org_id or not _sees(principal, inc):
        raise NotFound("incident not found")
    return incident_out(inc)


@router.get("/events/{event_id}", openapi_extra=permission_extra("organization.event:get"))
async def get_event_trace(
    org_id: str,
    event_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.event:get", "events", "event_id"))],
) -> dict[str, Any]:
    steps = await event_trace(session, org_id, event_id)
    if not steps:
        raise NotFound("no trace for this event yet")
    return {
        "id": event_id,
        "organization_id": org_id,
        "accepted_at": steps[0].recorded_at.isoformat(),
        "steps": [{"step": s.step, **s.detail} for s in steps],
    }
