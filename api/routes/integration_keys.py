"""A workflow topic's integration keys: the PagerDuty Events v2 ``routing_key`` that
``POST /v2/enqueue`` (api/formats/pagerduty.py) takes in place of a bearer token.

A key is bound to one topic and stored as its SHA-256 (app/store/integration_keys.py); the routing key
is in the create's answer only. Whoever holds a key publishes to its topic, so creating one also needs
the topic's ``publish`` permission (else ``403 IAM-002``, as the escalation guard of bindings).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends
from pydantic import Field
from sqlalchemy import select

from api.deps import SessionDep, permission_extra
from api.models import In, Out, Timestamp
from api.pages import Page, PageDep, page, paginate
from api.routes.topics import TopicAccess, topic_access
from app.domain.iam.resource_names import topic_names
from app.errors import ChangeRefused, NotFound
from app.store import audit
from app.store.accounts import utcnow
from app.store.integration_keys import issue_key
from app.store.models import IntegrationKey

router = APIRouter(
    prefix="/v1/organizations/{org_id}/workflow_topics/{topic}/integration_keys", tags=["workflow topics"]
)

PERMISSION = "organization.workflow_topic.integration_key"
PUBLISH = "organization.workflow_topic:publish"


class IntegrationKeyIn(In):
    name: str = Field(default="", max_length=200, description="what sends with it (for people reading the list)")


class IntegrationKeyOut(Out):
    id: str
    name: str
    topic_id: str
    created_at: Timestamp


class IntegrationKeyCreatedOut(IntegrationKeyOut):
    routing_key: str = Field(description="the Events v2 routing_key; returned only here, stored hashed")


def key_out(key: IntegrationKey) -> dict[str, Any]:
    return {"id": key.id, "name": key.name, "topic_id": key.topic_id, "created_at": key.created_at.isoformat()}


@router.post(
    "",
    status_code=201,
    response_model=IntegrationKeyCreatedOut,
    openapi_extra=permission_extra(f"{PERMISSION}:create"),
)
async def create_integration_key(
    org_id: str,
    topic: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access(f"{PERMISSION}:create"))],
    body: Annotated[IntegrationKeyIn | None, Body()] = None,
) -> dict[str, Any]:
    """Every field is optional (``{name?}``): no body at all is ``{}``."""
    body = body or IntegrationKeyIn()
    row, principal = access.topic, access.principal
    if not any(principal.can(PUBLISH, name) for name in topic_names(org_id, row.id, row.key)):
        raise ChangeRefused(
            "an integration key publishes to its topic: creating one needs the topic's publish permission too",
            details={"permission": PUBLISH},
        )
    key, plain = await issue_key(session, row, name=body.name)
    audit.record(session, principal, "create", "integration_key", key.id, {"topic_id": row.id, "name": body.name})
    await session.commit()
    return {**key_out(key), "routing_key": plain}


@router.get(
    "",
    response_model=Page[IntegrationKeyOut],
    openapi_extra=permission_extra(f"{PERMISSION}:list"),
)
async def list_integration_keys(
    org_id: str,
    topic: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access(f"{PERMISSION}:list"))],
    params: PageDep,
) -> Page[Any]:
    query = select(IntegrationKey).where(
        IntegrationKey.topic_id == access.topic.id, IntegrationKey.revoked_at.is_(None)
    )
    rows, nxt = await paginate(session, query, params, IntegrationKey.id)
    return page([key_out(k) for k in rows], nxt)


@router.delete(
    "/{key_id}",
    status_code=204,
    openapi_extra=permission_extra(f"{PERMISSION}:delete"),
)
async def revoke_integration_key(
    org_id: str,
    topic: str,
    key_id: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access(f"{PERMISSION}:delete"))],
) -> None:
    row = access.topic
    key = await session.get(IntegrationKey, key_id)
    if key is None or key.topic_id != row.id or key.revoked_at is not None:
        raise NotFound("integration key not found")
    key.revoked_at = utcnow()  # refused from the next event on: /v2/enqueue reads keys uncached
    audit.record(session, access.principal, "revoke", "integration_key", key.id, {"topic_id": row.id})
    await session.commit()
