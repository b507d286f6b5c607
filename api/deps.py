"""Dependencies: the store session, the authenticated principal, permission checks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from api.state import ApiState
from app.domain import iam
from app.domain.tokens import is_well_formed, token_hash
from app.errors import AuthenticationError, NotFound, PermissionDenied, Unavailable
from app.store.accounts import Principal, lookup_token


def get_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.tocsin
    return state


StateDep = Annotated[ApiState, Depends(get_state)]


async def get_session(state: StateDep) -> AsyncIterator[AsyncSession]:
    try:
        async with state.sessions() as session:
            yield session
    except OperationalError as exc:
        raise Unavailable("the database is unavailable; retry later") from exc


SessionDep = Annotated[AsyncSession, Depends(get_session)]


async def authenticate(state: ApiState, authorization: str | None) -> Principal:
    """Resolve ``Authorization: Bearer <token>`` to a principal (cached for a second)."""
    if not authorization:
        raise AuthenticationError("AUT-002", "missing Authorization header")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise AuthenticationError("AUT-002", "Authorization must be 'Bearer <token>'")
    if not is_well_formed(token):
        raise AuthenticationError("AUT-002", "malformed access token")
    hashed = token_hash(token)
    principal = state.principals.get(hashed)
    if principal is not None:
        return principal
    try:
        async with state.sessions() as session:
            found = await lookup_token(session, hashed, datetime.now(UTC))
    except OperationalError as exc:
        raise Unavailable("the database is unavailable; retry later") from exc
    if found.expired:
        raise AuthenticationError("AUT-004", "access token expired")
    if found.principal is None:
        raise AuthenticationError("AUT-003", "unknown or revoked access token")
    state.principals.put(hashed, found.principal.organization_id, found.principal)
    return found.principal


async def current_principal(request: Request, state: StateDep) -> Principal:
    return await authenticate(state, request.headers.get("authorization"))


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def authorize(principal: Principal, org_id: str, permission: str, resource: str) -> None:
    """403 without the permission; 404 for another organization (never reveal it exists)."""
    if principal.organization_id != org_id:
        raise NotFound("not found")
    if iam.evaluate(principal.bindings, iam.SYSTEM_ROLES, permission, resource) is None:
        raise PermissionDenied(f"missing permission {permission}", details={"permission": permission})


def require(
    permission: str, resource_type: str | None = None, id_param: str | None = None
) -> Callable[..., Coroutine[Any, Any, Principal]]:
    """A dependency that authenticates and checks ``permission`` on the path's resource name.

    List and create check the organization's name (or the collection); reads and changes
    check ``crn:…:<resource_type>/<id>``.
    """

    async def dependency(request: Request, state: StateDep) -> Principal:
        principal = await authenticate(state, request.headers.get("authorization"))
        org_id = request.path_params.get("org_id", "")
        res_id = request.path_params.get(id_param) if id_param else None
        resource = iam.resource_name(org_id, resource_type, res_id) if resource_type else iam.organization_name(org_id)
        authorize(principal, org_id, permission, resource)
        return principal

    dependency.__tocsin_permission__ = permission  # type: ignore[attr-defined]  # read by the OpenAPI check
    return dependency


def permission_extra(permission: str) -> dict[str, Any]:
    """OpenAPI extension that documents a route's permission."""
    return {"x-permission": permission}
