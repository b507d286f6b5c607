"""Workflows: which topic, which mode, which filter, which actions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from api.deps import SessionDep, StateDep, permission_extra, require
from api.pages import Page, page
from app.domain.ids import new_id
from app.domain.principal import Principal
from app.domain.workflow import Action, RunOperationBook
from app.errors import InvalidInput, NotFound
from app.store import audit
from app.store.accounts import utcnow
from app.store.models import OperationBook, Workflow
from app.store.workflows import find_in_org, find_topic, list_in_org

router = APIRouter(prefix="/v1/organizations/{org_id}/workflows", tags=["workflows"])


class WorkflowIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    topic: str = Field(min_length=1, max_length=200)
    topic_organization_id: str | None = None
    mode: Literal["ACTUAL", "DRILL", "TEST"]
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    filter: dict[str, Any] | None = None
    sites: list[str] | None = None
    actions: list[Action] = Field(min_length=1, max_length=20)


def _unavailable(field: str, what: str) -> InvalidInput:
    return InvalidInput(f"{what} is not available yet", details={"fields": [{"field": field, "message": what}]})


def workflow_out(wf: Workflow) -> dict[str, Any]:
    return {
        "id": wf.id,
        "organization_id": wf.organization_id,
        "name": wf.name,
        "topic_id": wf.topic_id,
        "mode": wf.mode,
        "status": wf.status,
        "filter": wf.filter,
        "sites": wf.sites,
        "actions": wf.actions,
        "created_at": wf.created_at.isoformat(),
    }


@router.post("", status_code=201, openapi_extra=permission_extra("organization.workflow:create"))
async def create_workflow(
    org_id: str,
    body: WorkflowIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:create"))],
) -> dict[str, Any]:
    if body.topic_organization_id not in (None, org_id):
        raise _unavailable("topic_organization_id", "receiving topics shared by other organizations")
    if body.filter is not None:
        raise _unavailable("filter", "workflow filters")
    if body.sites:
        raise _unavailable("sites", "site matching")
    topic = await find_topic(session, org_id, body.topic)
    if topic is None:
        raise InvalidInput("topic not found", details={"fields": [{"field": "topic", "message": "not found"}]})
    for index, action in enumerate(body.actions):
        if not isinstance(action, RunOperationBook):
            raise _unavailable(f"actions.{index}.type", f"action {action.type}")
        if await find_in_org(session, OperationBook, org_id, action.operation_book_id) is None:
            raise InvalidInput(
                "operation book not found",
                details={"fields": [{"field": f"actions.{index}.operation_book_id", "message": "not found"}]},
            )
    wf = Workflow(
        id=new_id("wfl"),
        organization_id=org_id,
        topic_id=topic.id,
        name=body.name,
        mode=body.mode,
        status=body.status,
        filter=None,
        sites=None,
        actions=[a.model_dump(mode="json") for a in body.actions],
        created_at=utcnow(),
    )
    session.add(wf)
    audit.record(session, principal, "create", "workflow", wf.id, {"name": wf.name, "topic_id": wf.topic_id})
    await session.commit()
    await state.config_changed(org_id, "workflow")
    return workflow_out(wf)


@router.get("", openapi_extra=permission_extra("organization.workflow:list"))
async def list_workflows(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow:list"))],
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> Page:
    rows, nxt = await list_in_org(session, Workflow, org_id, limit=limit, cursor=cursor)
    return page([workflow_out(w) for w in rows], nxt)


@router.get("/{workflow_id}", openapi_extra=permission_extra("organization.workflow:get"))
async def get_workflow(
    org_id: str,
    workflow_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow:get", "workflows/{workflow_id}"))],
) -> dict[str, Any]:
    wf: Workflow | None = await find_in_org(session, Workflow, org_id, workflow_id)
    if wf is None:
        raise NotFound("workflow not found")
    return workflow_out(wf)


@router.delete("/{workflow_id}", status_code=204, openapi_extra=permission_extra("organization.workflow:delete"))
async def delete_workflow(
    org_id: str,
    workflow_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:delete", "workflows/{workflow_id}"))],
) -> None:
    wf: Workflow | None = await find_in_org(session, Workflow, org_id, workflow_id)
    if wf is None:
        raise NotFound("workflow not found")
    await session.delete(wf)
    audit.record(session, principal, "delete", "workflow", wf.id, {"name": wf.name})
    await session.commit()
    await state.config_changed(org_id, "workflow")
