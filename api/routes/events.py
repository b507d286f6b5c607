"""Events: one event's trace (``GET …/events/{id}``), and the list of a topic's events
(``GET …/workflow_topics/{topic}/events``): each event the worker decided, newest first, with its
status, partition key and control decision. Both read the trace store (app/store/results.py,
app/store/topic_events.py): an event is there once its trace is written, shortly after it is decided.

Reading a trace takes ``organization.event:get`` on the event's name or on its topic's names, so a
publisher bound to one topic (the ``workflow_publisher`` role holds the permission) reads the traces
of that topic's events and of no other (docs/api.md, "A publisher reads its events' traces").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import Field
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import PrincipalDep, SessionDep, authorize, permission_extra
from api.models import Out, Timestamp
from api.pages import (
    OrderQuery,
    Page,
    PageDep,
    TimeFilter,
    cut,
    filter_text,
    filter_time,
    keyset_after,
    page,
    time_cursor,
)
from api.routes.topics import TopicAccess, topic_access
from app.domain.events.publish import MAX_KEY_CHARS
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import coverable, organization_name, topic_names
from app.domain.shared.ids import has_id_form
from app.errors import InvalidInput, NotFound
from app.store.models import EventTraceStep, WorkflowTopic
from app.store.results import event_trace
from app.store.topic_events import dialect_of, topic_events

# the trace keeps the incidents' tag: the generated client's module for it stays where it was
router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["incidents"])
topic_router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["workflow topics"])
READ_TRACE = "organization.event:get"
LIST = "organization.event:list"


class EventTraceOut(Out):
    id: str
    organization_id: str
    accepted_at: Timestamp | None
    steps: list[dict[str, Any]] = Field(description="each step: {step, ...its outcome}")


async def _topic_grants_trace(session: AsyncSession, principal: Principal, org_id: str, steps: list[Any]) -> bool:
    """Whether ``organization.event:get`` on the event's topic (either of its names) lets the caller
    read this trace: the topic is the one its ``accepted`` step names, a topic of this organization
    (a receiving organization's part of a shared topic's event names none)."""
    topic_id = next((s.detail.get("topic_id") for s in steps if s.step == "accepted"), None)
    topic = await session.get(WorkflowTopic, topic_id) if isinstance(topic_id, str) else None
    if topic is None or topic.organization_id != org_id:
        return False
    return any(principal.can(READ_TRACE, name) for name in topic_names(org_id, topic.id, topic.key))


@router.get(
    "/events/{event_id}",
    response_model=EventTraceOut,
    openapi_extra=permission_extra(READ_TRACE),
)
async def get_event_trace(
    org_id: str,
    event_id: str,
    session: SessionDep,
    principal: PrincipalDep,
) -> dict[str, Any]:
    """The event's trace. ``organization.event:get`` on the event's name, or on its topic's (a
    publisher bound to a topic reads the traces of that topic's events): without it on either, ``404``
    as for an event that does not exist when the caller holds the permission on some name, else ``403``."""
    name = f"{organization_name(org_id)}:events/{event_id}"
    if not coverable(name):
        raise NotFound("not found")
    on_event = principal.organization_id == org_id and principal.can(READ_TRACE, name)
    if not on_event and (principal.organization_id != org_id or not principal.holds_anywhere(READ_TRACE)):
        authorize(principal, org_id, READ_TRACE, name)  # 404 another organization, else 403
    if not has_id_form(event_id, "evt"):  # the same checks as for an id that could exist came first
        raise NotFound("no such event: an event id is evt_ and 26 letters and digits")
    steps = await event_trace(session, org_id, event_id)
    if steps and not on_event and not await _topic_grants_trace(session, principal, org_id, steps):
        steps = []  # another topic's event: answered as one that does not exist
    if not steps:
        raise NotFound("no trace for this event yet")
    return {
        "id": event_id,
        "organization_id": org_id,
        "accepted_at": steps[0].recorded_at.isoformat(),
        # a receiving organization's workflows step is stored as "workflows@<its id>" (workflow_stage.py)
        "steps": [{"step": s.step.partition("@")[0], **s.detail} for s in steps],
    }


class TopicEventOut(Out):
    id: str
    status: Literal["ACTUAL", "DRILL", "TEST"] | None
    partition_key: str | None
    decision: Literal["NOTIFY", "SUPPRESS", "RESOLVE"] | None = None
    accepted_at: Timestamp | None


def _event_out(step: EventTraceStep, decision: str | None) -> dict[str, Any]:
    detail = step.detail
    return {
        "id": step.event_id,
        "status": detail.get("status"),
        "partition_key": detail.get("partition_key"),
        "decision": decision,
        "accepted_at": step.recorded_at.isoformat(),
    }


@topic_router.get("/{topic}/events", response_model=Page[TopicEventOut], openapi_extra=permission_extra(LIST))
async def list_topic_events(
    org_id: str,
    topic: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access(LIST))],
    params: PageDep,
    order: OrderQuery = "newest",
    status: Annotated[Literal["ACTUAL", "DRILL", "TEST"] | None, Query(description="the publish status")] = None,
    partition_key: Annotated[str | None, Query(min_length=1, max_length=MAX_KEY_CHARS)] = None,
    decision: Annotated[
        Literal["NOTIFY", "SUPPRESS", "RESOLVE"] | None, Query(description="the control decision")
    ] = None,
    since: Annotated[TimeFilter | None, Query(description="accepted at or after (RFC 3339)")] = None,
    until: Annotated[TimeFilter | None, Query(description="accepted before (RFC 3339)")] = None,
) -> Page[Any]:
    """The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them)."""
    since, until = filter_time("since", since), filter_time("until", until)
    if since is not None and until is not None and since > until:
        raise InvalidInput("since is after until", details={"fields": [{"field": "since", "message": "after until"}]})
    partition_key = filter_text("partition_key", partition_key)
    row = access.topic  # 404 for a topic that does not exist, once the request is valid
    newest = order == "newest"
    query = topic_events(
        dialect_of(session),
        org_id,
        row.id,
        status=status,
        partition_key=partition_key,
        decision=decision,
        since=since,
        until=until,
    )
    query = keyset_after(
        query, params.cursor, EventTraceStep.recorded_at, EventTraceStep.event_id, newest_first=newest, prefix="evt"
    )
    rows = (await session.execute(query.limit(params.limit + 1))).all()
    items, nxt = cut(rows, params, lambda r: time_cursor(r[0].recorded_at, r[0].event_id, newest_first=newest))
    return page([_event_out(step, decided) for step, decided in items], nxt)
