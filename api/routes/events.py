"""Events: one event's trace (``GET …/events/{id}``), and the list of a topic's events
(``GET …/workflow_topics/{topic}/events``): each event the worker decided, newest first, with its
status, partition key and control decision. Both read the trace store (app/store/results.py,
app/store/topic_events.py): an event is there once its trace is written, shortly after it is decided.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import AwareDatetime, Field

from api.deps import SessionDep, permission_extra, require
from api.models import Out, Timestamp
from api.pages import OrderQuery, Page, PageDep, cut, filter_text, keyset_after, page, time_cursor
from api.routes.topics import TopicAccess, topic_access
from app.domain.events.publish import MAX_KEY_CHARS
from app.domain.iam.principal import Principal
from app.errors import InvalidInput, NotFound
from app.store.models import EventTraceStep
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


@router.get("/events/{event_id}", response_model=EventTraceOut)
async def get_event_trace(
    org_id: str,
    event_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(READ_TRACE, "events/{event_id}"))],
) -> dict[str, Any]:
    steps = await event_trace(session, org_id, event_id)
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
    since: Annotated[AwareDatetime | None, Query(description="accepted at or after (RFC 3339)")] = None,
    until: Annotated[AwareDatetime | None, Query(description="accepted before (RFC 3339)")] = None,
) -> Page[Any]:
    """The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them)."""
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
    query = keyset_after(query, params.cursor, EventTraceStep.recorded_at, EventTraceStep.event_id, newest_first=newest)
    rows = (await session.execute(query.limit(params.limit + 1))).all()
    items, nxt = cut(rows, params, lambda r: time_cursor(r[0].recorded_at, r[0].event_id, newest_first=newest))
    return page([_event_out(step, decided) for step, decided in items], nxt)
