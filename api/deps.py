"""Dependencies: the store session, the authenticated principal, permission checks."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.routing import BaseRoute

from api.people_auth import load_session_principal
from api.state import ApiState
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import coverable, organization_name, resource_name, topic_names
from app.domain.iam.tokens import is_well_formed, token_hash
from app.errors import AuthenticationError, NotFound, PermissionDenied
from app.identity import federated_tokens
from app.identity.session_tokens import SESSION_PREFIX
from app.store.accounts import load_principal, lookup_token
from app.store.models import Account, FederatedCredential


def get_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.tocsin
    return state


StateDep = Annotated[ApiState, Depends(get_state)]


async def get_session(state: StateDep) -> AsyncIterator[AsyncSession]:
    # A database that cannot be reached is answered 503 SYS-001 by api/errors.py (one classification for every route).
    async with state.sessions() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]


async def authenticate(state: ApiState, authorization: str | None) -> Principal:
    """Resolve ``Authorization: Bearer <token>`` to a principal (cached for a second)."""
    if not authorization:
        raise AuthenticationError("AUT-002", "missing Authorization header")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise AuthenticationError("AUT-002", "Authorization must be 'Bearer <token>'")
    # keyed by the raw token, held in this process's memory only (never logged): a hit skips checksum and hash
    principal = state.principals.get(token)
    if principal is None and token.startswith(federated_tokens.PREFIX):
        principal = await state.principals.get_or_load(token, lambda: _load_federated(state, token))
        return principal
    if token.startswith(SESSION_PREFIX):  # a person's session (api/people_auth.py), checked against the policy
        if principal is None:
            principal = await state.principals.get_or_load(token, lambda: load_session_principal(state, token))
        return principal
    if principal is None:
        if not is_well_formed(token):
            raise AuthenticationError("AUT-002", "malformed access token")
        principal = await state.principals.get_or_load(token, lambda: _load_principal(state, token))
    if not principal.token_id.startswith("fed:"):
        state.used_tokens.add(principal.token_id)
    return principal


async def _load_principal(state: ApiState, token: str) -> tuple[str, Principal]:
    async with state.sessions() as session:
        found = await lookup_token(session, token_hash(token), datetime.now(UTC))
    if found.expired:
        raise AuthenticationError("AUT-004", "access token expired")
    if found.principal is None:
        raise AuthenticationError("AUT-003", "unknown or revoked access token")
    return found.principal.organization_id, found.principal


async def _load_federated(state: ApiState, token: str) -> tuple[str, Principal]:
    """A token from the exchange: valid while its account and its credential are ACTIVE."""
    if "." not in token:
        raise AuthenticationError("AUT-002", "malformed access token")
    claims = federated_tokens.verify(state.federation.keys.verifying, token)
    if claims is None:
        raise AuthenticationError("AUT-003", "unknown access token")
    if claims.expires_at <= time.time():
        raise AuthenticationError("AUT-004", "access token expired")
    async with state.sessions() as session:
        account = await session.get(Account, claims.service_account_id)
        credential = await session.get(FederatedCredential, claims.credential_id)
        if (
            account is None
            or credential is None
            or account.status != "ACTIVE"
            or credential.status != "ACTIVE"
            or credential.service_account_id != account.id
        ):
            raise AuthenticationError("AUT-003", "the token's account or credential is inactive or deleted")
        principal = await load_principal(session, account, token_id=f"fed:{credential.id}")
    return principal.organization_id, principal


async def current_principal(request: Request, state: StateDep) -> Principal:
    return await authenticate(state, request.headers.get("authorization"))


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def authorize(principal: Principal, org_id: str, permission: str, resource: str) -> None:
    """403 without the permission; 404 for another organization (never reveal it exists)."""
    authorize_any(principal, org_id, permission, (resource,))


def authorize_any(principal: Principal, org_id: str, permission: str, names: Sequence[str]) -> None:
    """Like :func:`authorize` for a resource with several names: the permission on any of them suffices."""
    if principal.organization_id != org_id:
        raise NotFound("not found")
    if not any(principal.can(permission, name) for name in names):
        raise PermissionDenied(f"missing permission {permission}", details={"permission": permission})


def authorize_topic(
    principal: Principal, org_id: str, permission: str, spelled: str, found: tuple[str, str] | None
) -> None:
    """The permission on a workflow topic, whichever way the path spelled it.

    ``found`` is the topic's ``(id, key)`` once the path's id-or-key resolved to it: a binding on
    either canonical name grants. A topic that does not exist is checked under the path's
    spelling, so a caller without the permission gets the same 403 whether or not it exists; the
    caller answers 404 for it afterwards (after validating the request, as for every resource).
    """
    if not coverable(resource_name(org_id, "workflow_topics", spelled)):  # no topic has such a key (5000 x's)
        raise NotFound("workflow topic not found")
    names = topic_names(org_id, *found) if found else (resource_name(org_id, "workflow_topics", spelled),)
    authorize_any(principal, org_id, permission, names)


def require(permission: str, resource: str | None = None) -> Callable[..., Coroutine[Any, Any, Principal]]:
    """A dependency that authenticates and checks ``permission`` on a resource name.

    ``resource`` is a template inside the organization filled from the path, e.g.
    ``"workflow_topics/{topic}"``; without it (list, create) the organization's own name.
    """

    async def dependency(request: Request, state: StateDep) -> Principal:
        principal = await authenticate(state, request.headers.get("authorization"))
        org_id = request.path_params.get("org_id", "")
        name = organization_name(org_id)
        if resource is not None:
            name = f"{name}:{resource.format(**request.path_params)}"
            if not coverable(name):  # no resource has such an id (too long, a newline): 404, not the 403 of
                raise NotFound("not found")  # a name no binding, not even the owner's, can cover
        authorize(principal, org_id, permission, name)
        return principal

    _REQUIRED[dependency] = permission
    return dependency


# The permission each dependency :func:`require` made checks: the OpenAPI document shows it.
_REQUIRED: dict[Callable[..., Any], str] = {}


def permission_extra(permission: str) -> dict[str, Any]:
    """OpenAPI extension that documents a route's permission (where no :func:`require` checks it)."""
    return {"x-permission": permission}


def document_permissions(routes: Sequence[BaseRoute]) -> None:
    """Give each route whose permission a :func:`require` dependency checks its ``x-permission``,
    so the documented permission is the checked one and a route spells it once."""
    for route in routes:
        if not isinstance(route, APIRoute) or "x-permission" in (route.openapi_extra or {}):
            continue
        checked = [_REQUIRED[d.call] for d in route.dependant.dependencies if d.call in _REQUIRED]
        if checked:
            route.openapi_extra = {**(route.openapi_extra or {}), **permission_extra(checked[0])}
