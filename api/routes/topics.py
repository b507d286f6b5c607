"""Workflow topics."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import select

from api.deps import SessionDep, StateDep, permission_extra, require
from api.pages import Page, page
from app.domain.ids import new_id
from app.domain.principal import Principal
from app.errors import Conflict, InvalidInput, NotFound
from app.store import audit
from app.store.accounts import utcnow
from app.store.db import commit_unique
from app.store.models import Workflow, WorkflowTopic
from app.store.workflows import find_topic, list_in_org

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["workflow topics"])


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldValue(_Strict):
    value_source: str = "value"
    type: Literal["number", "string", "boolean", "any"]
    operators: list[str] = Field(default_factory=list, max_length=20)


class TopicField(_Strict):
    id: str = Field(min_length=1, max_length=100)
    name_ja: str = ""
    name_en: str = ""
    description_ja: str = ""
    description_en: str = ""
    path: str = Field(min_length=1, max_length=500)
    values: list[FieldValue] = Field(default_factory=list, max_length=10)
    site: bool = False


class TemplateVariable(_Strict):
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    path: str = Field(min_length=1, max_length=500)
    description: str = ""


class ControlPolicyProfile(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["BYPASS", "METRIC", "SET"] = "BYPASS"
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"


class TopicIn(_Strict):
    key: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    name_ja: str = Field(default="", max_length=500)
    name_en: str = Field(default="", max_length=500)
    description_ja: str = Field(default="", max_length=5000)
    description_en: str = Field(default="", max_length=5000)
    access_scope: Literal["private", "restricted", "public"] = "private"
    share_with_partner_orgs: bool = False
    share_with_license_subscribers: bool = False
    share_with_allowed_orgs: bool = False
    share_with_sibling_orgs: bool = False
    allowed_organization_ids: list[str] = Field(default_factory=list, max_length=1000)
    fields: list[TopicField] = Field(default_factory=list, max_length=200)
    template_variables: list[TemplateVariable] = Field(default_factory=list, max_length=100)
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    control_policy_profile: ControlPolicyProfile | None = None

    @field_validator("key")
    @classmethod
    def _not_an_id(cls, value: str) -> str:
        # A key may stand where an id does in paths, so it must never look like one.
        if value.startswith("wtp_"):
            raise ValueError("a key must not start with 'wtp_' (the prefix of topic ids)")
        return value


def _check_policy(profile: ControlPolicyProfile | None) -> None:
    if profile is not None and profile.type != "BYPASS" and profile.status == "ACTIVE":
        raise InvalidInput(
            f"control policy type {profile.type} is not available yet; use BYPASS",
            details={"fields": [{"field": "control_policy_profile.type", "message": "not available yet"}]},
        )


def topic_out(topic: WorkflowTopic) -> dict[str, Any]:
    return {
        "id": topic.id,
        "organization_id": topic.organization_id,
        **topic.spec,
        "key": topic.key,
        "status": topic.status,
        "created_at": topic.created_at.isoformat(),
    }


async def _get(session: SessionDep, org_id: str, topic: str) -> WorkflowTopic:
    found = await find_topic(session, org_id, topic)
    if found is None:
        raise NotFound("workflow topic not found")
    return found


@router.post("", status_code=201, openapi_extra=permission_extra("organization.workflow_topic:create"))
async def create_topic(
    org_id: str,
    body: TopicIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow_topic:create"))],
) -> dict[str, Any]:
    _check_policy(body.control_policy_profile)
    spec = body.model_dump(mode="json", exclude={"key", "status"})
    topic = WorkflowTopic(
        id=new_id("wtp"), organization_id=org_id, key=body.key, spec=spec, status=body.status, created_at=utcnow()
    )
    session.add(topic)
    audit.record(session, principal, "create", "workflow_topic", topic.id, {"key": body.key})
    await commit_unique(session, f"a workflow topic with key {body.key!r} already exists")
    await state.config_changed(org_id, "workflow_topic")
    return topic_out(topic)


@router.get("", openapi_extra=permission_extra("organization.workflow_topic:list"))
async def list_topics(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow_topic:list"))],
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> Page:
    rows, nxt = await list_in_org(session, WorkflowTopic, org_id, limit=limit, cursor=cursor)
    return page([topic_out(t) for t in rows], nxt)


@router.get("/{topic}", openapi_extra=permission_extra("organization.workflow_topic:get"))
async def get_topic(
    org_id: str,
    topic: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow_topic:get", "workflow_topics/{topic}"))],
) -> dict[str, Any]:
    return topic_out(await _get(session, org_id, topic))


@router.delete("/{topic}", status_code=204, openapi_extra=permission_extra("organization.workflow_topic:delete"))
async def delete_topic(
    org_id: str,
    topic: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow_topic:delete", "workflow_topics/{topic}"))],
) -> None:
    row = await _get(session, org_id, topic)
    used = (await session.scalars(select(Workflow.id).where(Workflow.topic_id == row.id).limit(1))).first()
    if used is not None:
        raise Conflict("workflows still use this topic", details={"workflow_id": used})
    await session.delete(row)
    audit.record(session, principal, "delete", "workflow_topic", row.id, {"key": row.key})
    await session.commit()
    await state.config_changed(org_id, "workflow_topic")
