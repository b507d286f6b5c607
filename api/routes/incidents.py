"""Incidents created by workflows, their timeline and form answers (event traces: api/routes/events.py).

Without ``organization.incident:fullaccess`` a caller sees only incidents it is a member of
(the operation book's members, or an incident binding naming it or one of its groups), and
only its own form answers.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import SessionDep, require
from api.models import In, Out, Timestamp
from api.pages import (
    OrderQuery,
    Page,
    PageDep,
    cut,
    filter_text,
    keyset_after,
    page,
    paginate,
    paginate_by_time,
    time_cursor,
)
from app.domain.events.publish import MAX_KEY_CHARS
from app.domain.iam.evaluation import evaluate_pattern
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import resource_name
from app.domain.shared.ids import new_id
from app.domain.workflows.incidents import changes_from
from app.errors import InvalidInput, NotFound
from app.store.accounts import utcnow
from app.store.models import FormAnswer, Incident, IncidentEvent
from app.store.results import change_incident_status
from app.store.workflows import find_topic

router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["incidents"])
FULL = "organization.incident:fullaccess"
# Rows read at a time while filling a page with the incidents a member sees.
VISIBILITY_BATCH = 500
ONE = "incidents/{incident_id}"
TOPIC_ID = re.compile(r"wtp_[0-9a-z]{10,64}")  # app/domain/shared/ids.py


class IncidentOut(Out):
    id: str
    title: str
    status: Literal["OPEN", "ACKNOWLEDGED", "RESOLVED"]
    operation_book_id: str
    workflow_id: str
    topic_id: str
    partition_key: str | None
    event_id: str | None = Field(description="the publisher's event.id")
    server_event_id: str
    mode: Literal["ACTUAL", "DRILL", "TEST"]
    member_user_ids: list[str]
    member_group_ids: list[str]
    created_at: Timestamp | None
    acknowledged_at: Timestamp | None
    resolved_at: Timestamp | None


class TimelineEntryOut(Out):
    id: str
    kind: str
    message: str
    author_id: str | None
    event_id: str | None
    created_at: Timestamp | None


class FormAnswerOut(Out):
    id: str
    account_id: str
    answers: dict[str, Any]
    created_at: Timestamp | None


def iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


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
        "created_at": iso(inc.created_at),
        "acknowledged_at": iso(inc.acknowledged_at),
        "resolved_at": iso(inc.resolved_at),
    }


def _full(principal: Principal, inc: Incident) -> bool:
    return principal.can(FULL, resource_name(inc.organization_id, "incidents", inc.id))


def _sees(principal: Principal, inc: Incident) -> bool:
    return _full(principal, inc) or principal.sees_incident(inc.id, inc.member_user_ids, inc.member_group_ids)


async def visible_incident(session: SessionDep, principal: Principal, org_id: str, incident_id: str) -> Incident:
    inc = await session.get(Incident, incident_id)
    if inc is None or inc.organization_id != org_id or not _sees(principal, inc):
        raise NotFound("incident not found")
    return inc


IncidentStatus = Literal["OPEN", "ACKNOWLEDGED", "RESOLVED"]
Mode = Literal["ACTUAL", "DRILL", "TEST"]


async def _topic_filter(session: AsyncSession, org_id: str, topic: str) -> str:
    """The topic id ``?topic=`` names: one of the organization's topics by id or key, or a topic id
    that no longer names one (a deleted topic, another organization's shared topic: its incidents
    keep the id); a key that names no topic → ``422``."""
    found = await find_topic(session, org_id, topic)
    if found is not None:
        return found.id
    if TOPIC_ID.fullmatch(topic):
        return topic
    raise InvalidInput(
        "topic is neither a workflow topic's key in this organization nor a topic id",
        details={"fields": [{"field": "topic", "message": "no such workflow topic", "type": "value_error"}]},
    )


@router.get("/incidents", response_model=Page[IncidentOut])
async def list_incidents(
    org_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:list", "incidents"))],
    params: PageDep,
    order: OrderQuery = "newest",
    status: Annotated[IncidentStatus | None, Query(description="only incidents in this status")] = None,
    mode: Annotated[Mode | None, Query(description="only incidents of this operating mode")] = None,
    topic: Annotated[str | None, Query(min_length=1, max_length=256, description="a topic's id or key")] = None,
    partition_key: Annotated[str | None, Query(min_length=1, max_length=MAX_KEY_CHARS)] = None,
) -> Page[Any]:
    """The incidents the caller sees, newest first by ``created_at`` (``?order=oldest``: oldest
    first), ``limit`` of them a page: visibility is applied before the page is cut, so a member gets
    full pages of its incidents, not a page thinned afterwards."""
    newest = order == "newest"
    query = select(Incident).where(Incident.organization_id == org_id)
    if status is not None:
        query = query.where(Incident.status == status)
    if mode is not None:
        query = query.where(Incident.mode == mode)
    topic, partition_key = filter_text("topic", topic), filter_text("partition_key", partition_key)
    if topic is not None:
        topic_id = await _topic_filter(session, org_id, topic)
        query = query.where(Incident.topic_id == topic_id)
    if partition_key is not None:
        query = query.where(Incident.partition_key == partition_key)
    every_incident = resource_name(org_id, "incidents") + "<(/.*)?$>"
    if evaluate_pattern(principal.bindings, principal.roles, FULL, every_incident) is not None:
        rows, nxt = await paginate_by_time(
            session, query, params, Incident.created_at, Incident.id, newest_first=newest, prefix="inc"
        )
        return page([incident_out(i) for i in rows], nxt)
    visible: list[Incident] = []
    cursor = params.cursor
    while len(visible) <= params.limit:
        batch_query = keyset_after(query, cursor, Incident.created_at, Incident.id, newest_first=newest, prefix="inc")
        batch = (await session.scalars(batch_query.limit(VISIBILITY_BATCH))).all()
        visible += [i for i in batch if _sees(principal, i)]
        if len(batch) < VISIBILITY_BATCH:
            break
        cursor = time_cursor(batch[-1].created_at, batch[-1].id, newest_first=newest)
    rows, nxt = cut(visible, params, lambda i: time_cursor(i.created_at, i.id, newest_first=newest))
    return page([incident_out(i) for i in rows], nxt)


@router.get("/incidents/{incident_id}", response_model=IncidentOut)
async def get_incident(
    org_id: str,
    incident_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:get", ONE))],
) -> dict[str, Any]:
    return incident_out(await visible_incident(session, principal, org_id, incident_id))


class IncidentPatch(In):
    status: Literal["OPEN", "ACKNOWLEDGED", "RESOLVED"]


@router.patch(
    "/incidents/{incident_id}",
    response_model=IncidentOut,
)
async def update_incident(
    org_id: str,
    incident_id: str,
    body: IncidentPatch,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:update", ONE))],
) -> dict[str, Any]:
    # A change to the status the incident has changes nothing; of concurrent changes to one status
    # exactly one is made and has a timeline entry (one conditional write), the others answer like
    # that repeat: the incident as it is.
    inc = await visible_incident(session, principal, org_id, incident_id)
    if body.status != inc.status:
        now = utcnow()
        if await change_incident_status(session, inc.id, body.status, now, changes_from(body.status)):
            session.add(
                IncidentEvent(
                    id=new_id("iev"),
                    incident_id=inc.id,
                    kind=body.status,
                    message=f"status {body.status}",
                    author_id=principal.account_id,
                    created_at=now,
                )
            )
        await session.commit()
        await session.refresh(inc)
    return incident_out(inc)


class NoteIn(In):
    message: str = Field(min_length=1, max_length=10000)


def timeline_out(entry: IncidentEvent) -> dict[str, Any]:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "message": entry.message,
        "author_id": entry.author_id,
        "event_id": entry.server_event_id,
        "created_at": iso(entry.created_at),
    }


@router.get(
    "/incidents/{incident_id}/events",
    response_model=Page[TimelineEntryOut],
)
async def get_timeline(
    org_id: str,
    incident_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:get", ONE + "/events"))],
    params: PageDep,
) -> Page[Any]:
    """The timeline, oldest first (entry ids are effect ids, not time-sortable: the cursor holds both)."""
    await visible_incident(session, principal, org_id, incident_id)
    query = select(IncidentEvent).where(IncidentEvent.incident_id == incident_id)
    rows, nxt = await paginate_by_time(session, query, params, IncidentEvent.created_at, IncidentEvent.id)
    return page([timeline_out(e) for e in rows], nxt)


@router.post(
    "/incidents/{incident_id}/events",
    status_code=201,
    response_model=TimelineEntryOut,
)
async def add_note(
    org_id: str,
    incident_id: str,
    body: NoteIn,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:update", ONE + "/events"))],
) -> dict[str, Any]:
    await visible_incident(session, principal, org_id, incident_id)
    entry = IncidentEvent(
        id=new_id("iev"),
        incident_id=incident_id,
        kind="NOTE",
        message=body.message,
        author_id=principal.account_id,
        created_at=utcnow(),
    )
    session.add(entry)
    await session.commit()
    return timeline_out(entry)


class AnswersIn(In):
    answers: dict[str, Any] = Field(max_length=200)


def answer_out(row: FormAnswer) -> dict[str, Any]:
    return {"id": row.id, "account_id": row.account_id, "answers": row.answers, "created_at": iso(row.created_at)}


@router.get(
    "/incidents/{incident_id}/form_answers",
    response_model=Page[FormAnswerOut],
)
async def get_answers(
    org_id: str,
    incident_id: str,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:get", ONE + "/form_answers"))],
    params: PageDep,
) -> Page[Any]:
    inc = await visible_incident(session, principal, org_id, incident_id)
    query = select(FormAnswer).where(FormAnswer.incident_id == incident_id)
    if not _full(principal, inc):
        query = query.where(FormAnswer.account_id == principal.account_id)
    rows, nxt = await paginate(session, query, params, FormAnswer.id)
    return page([answer_out(a) for a in rows], nxt)


@router.post(
    "/incidents/{incident_id}/form_answers",
    status_code=201,
    response_model=FormAnswerOut,
)
async def post_answers(
    org_id: str,
    incident_id: str,
    body: AnswersIn,
    session: SessionDep,
    principal: Annotated[Principal, Depends(require("organization.incident:update", ONE + "/form_answers"))],
) -> dict[str, Any]:
    await visible_incident(session, principal, org_id, incident_id)
    row = FormAnswer(
        id=new_id("fan"),
        organization_id=org_id,
        incident_id=incident_id,
        account_id=principal.account_id,
        answers=body.answers,
        created_at=utcnow(),
    )
    session.add(row)
    await session.commit()
    return answer_out(row)
