"""Federated credentials of service accounts, their exchange log, and the RFC 8693 token
exchange (the one route answering in the RFC 6749 §5.2 error form)."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field
from sqlalchemy import select

from api.deps import SessionDep, StateDep, require
from api.errors import RFC6749_ERRORS, OAuthErrorOut
from api.guard import ensure_can_act_as
from api.models import In, Out, Timestamp, omittable
from api.pages import Page, PageDep, page, paginate
from api.responses import json_response
from api.rows import account_in_org, row_in_org
from app.domain.iam.conditions import compile_condition
from app.domain.iam.principal import Principal
from app.domain.iam.subject_filter import validate_subject_filter
from app.domain.shared.ids import new_id
from app.domain.shared.rate_limit import retry_after_header
from app.errors import InvalidCredential, InvalidInput, RateLimited, Unavailable
from app.identity.exchange import GRANT_TYPE, SUBJECT_TOKEN_TYPE, ExchangeFailure, invalid_request
from app.observability import metrics
from app.settings import Settings
from app.store import audit
from app.store.accounts import load_principal, utcnow
from app.store.models import Account, ExchangeAttempt, FederatedCredential

PERM = "organization.service_account.federated_credential"
BASE = "/v1/organizations/{org_id}/service_accounts/{account_id}/federated_credentials"
ONE = "service_accounts/{account_id}/federated_credentials/{credential_id}"
router = APIRouter(prefix=BASE, tags=["federated credentials"])
IMMUTABLE = ("issuer_url", "subject_filter", "audience")
MAX_FORM_BYTES = 64 * 1024


class CredentialIn(In):
    display_name: str = Field(min_length=1, max_length=200)
    issuer_url: str = Field(min_length=1, max_length=1000)
    subject_filter: str = Field(min_length=1, max_length=1024)
    audience: str | None = Field(default=None, min_length=1, max_length=1000)
    attribute_condition: str | None = Field(default=None, max_length=4096)
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"


class CredentialPatch(In):
    display_name: str = omittable(min_length=1, max_length=200)
    attribute_condition: str | None = Field(default=None, max_length=4096)
    status: Literal["ACTIVE", "INACTIVE"] = omittable()
    issuer_url: Any = None
    subject_filter: Any = None
    audience: Any = None


class CredentialOut(Out):
    id: str
    service_account_id: str
    organization_id: str
    display_name: str
    issuer_url: str
    subject_filter: str
    audience: str
    attribute_condition: str | None
    status: Literal["ACTIVE", "INACTIVE"]
    created_at: Timestamp


class ExchangeAttemptOut(Out):
    id: str
    at: Timestamp
    outcome: str
    failed_check: str | None
    subject: str | None
    client_address: str | None
    count: int = Field(
        description="attempts this entry stands for: 1 for an issued token; for refusals, the failures of one "
        "source (a client address, an IPv6 address's /64) and check in a window "
        "(TOCSIN_EXCHANGE_FAILURE_WINDOW_SECONDS)"
    )


class TokenExchangeOut(Out):
    """RFC 8693 §2.2.1."""

    access_token: str
    issued_token_type: str
    token_type: Literal["Bearer"]
    expires_in: int


def credential_out(row: FederatedCredential) -> dict[str, Any]:
    return {
        "id": row.id,
        "service_account_id": row.service_account_id,
        "organization_id": row.organization_id,
        "display_name": row.display_name,
        "issuer_url": row.issuer_url,
        "subject_filter": row.subject_filter,
        "audience": row.audience,
        "attribute_condition": row.attribute_condition,
        "status": row.status,
        "created_at": row.created_at.isoformat(),
    }


def _invalid(exc: InvalidCredential) -> InvalidInput:
    detail: dict[str, Any] = {"field": exc.field, "message": str(exc)}
    if exc.position is not None:
        detail["position"] = exc.position
    return InvalidInput(str(exc), details={"fields": [detail]})


def widens_credential(row: FederatedCredential, changes: dict[str, Any]) -> bool:
    """Whether a PATCH could let more tokens become the account: reactivating the credential, or
    any change of its attribute_condition (removing it included; a new expression is not checked
    for being narrower, so every change counts)."""
    reactivates = changes.get("status") == "ACTIVE" and row.status != "ACTIVE"
    return reactivates or (
        "attribute_condition" in changes and changes["attribute_condition"] != row.attribute_condition
    )


def _default_audience(settings: Settings) -> str:
    audience = settings.effective_default_audience
    if audience is None:  # the API does not start without TOCSIN_PUBLIC_URL (cli/main.py)
        raise Unavailable("this installation has no public URL (TOCSIN_PUBLIC_URL): name the credential's audience")
    return audience


async def _service_account(session: SessionDep, org_id: str, account_id: str) -> Account:
    return await account_in_org(session, org_id, account_id, "service_account")


async def _credential(session: SessionDep, org_id: str, account_id: str, credential_id: str) -> FederatedCredential:
    return await row_in_org(
        session,
        FederatedCredential,
        org_id,
        credential_id,
        "federated credential",
        belongs=lambda row: row.service_account_id == account_id,
    )


@router.post("", status_code=201, response_model=CredentialOut)
async def create_credential(
    org_id: str,
    account_id: str,
    body: CredentialIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:create", "service_accounts/{account_id}"))],
) -> dict[str, Any]:
    account = await _service_account(session, org_id, account_id)
    ensure_can_act_as(principal, await load_principal(session, account, token_id=""))
    try:
        validate_subject_filter(body.subject_filter)
        if body.attribute_condition is not None:
            compile_condition(body.attribute_condition)
    except InvalidCredential as exc:
        raise _invalid(exc) from exc
    jwks_uri = await state.federation.discover(body.issuer_url)
    row = FederatedCredential(
        id=new_id("cred"),
        organization_id=org_id,
        service_account_id=account.id,
        display_name=body.display_name,
        issuer_url=body.issuer_url,
        subject_filter=body.subject_filter,
        audience=body.audience or _default_audience(state.settings),
        attribute_condition=body.attribute_condition,
        jwks_uri=jwks_uri,
        status=body.status,
        created_at=utcnow(),
    )
    session.add(row)
    audit.record(
        session,
        principal,
        "create",
        "federated_credential",
        row.id,
        {"service_account_id": account.id, "issuer_url": row.issuer_url, "subject_filter": row.subject_filter},
    )
    await session.commit()
    await state.config_changed(org_id, "federated_credential")
    return credential_out(row)


@router.get("", response_model=Page[CredentialOut])
async def list_credentials(
    org_id: str,
    account_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:list", "service_accounts/{account_id}"))],
    params: PageDep,
) -> Page[Any]:
    await _service_account(session, org_id, account_id)
    query = select(FederatedCredential).where(FederatedCredential.service_account_id == account_id)
    rows, nxt = await paginate(session, query, params, FederatedCredential.id)
    return page([credential_out(r) for r in rows], nxt)


@router.get("/{credential_id}", response_model=CredentialOut)
async def get_credential(
    org_id: str,
    account_id: str,
    credential_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get", ONE))],
) -> dict[str, Any]:
    return credential_out(await _credential(session, org_id, account_id, credential_id))


@router.patch("/{credential_id}", response_model=CredentialOut)
async def update_credential(
    org_id: str,
    account_id: str,
    credential_id: str,
    body: CredentialPatch,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:update", ONE))],
) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)
    if immutable := [f for f in IMMUTABLE if f in changes]:
        raise InvalidInput(
            f"{', '.join(immutable)} cannot change: delete the credential and create a new one",
            details={"fields": [{"field": f, "message": "immutable; delete and recreate"} for f in immutable]},
        )
    row = await _credential(session, org_id, account_id, credential_id)
    if widens_credential(row, changes):
        # who may become the account grows: the same act-as guard as attaching a credential
        account = await _service_account(session, org_id, account_id)
        ensure_can_act_as(principal, await load_principal(session, account, token_id=""))
    if changes.get("attribute_condition") is not None:
        try:
            compile_condition(changes["attribute_condition"])
        except InvalidCredential as exc:
            raise _invalid(exc) from exc
    for field, value in changes.items():
        if field == "display_name" and value is None:
            continue
        setattr(row, field, value)
    audit.record(session, principal, "update", "federated_credential", row.id, changes)
    await session.commit()
    await state.config_changed(org_id, "federated_credential")
    return credential_out(row)


@router.delete("/{credential_id}", status_code=204)
async def delete_credential(
    org_id: str,
    account_id: str,
    credential_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:delete", ONE))],
) -> None:
    row = await _credential(session, org_id, account_id, credential_id)
    await session.delete(row)
    audit.record(session, principal, "delete", "federated_credential", row.id, {"service_account_id": account_id})
    await session.commit()
    await state.config_changed(org_id, "federated_credential")


@router.get("/{credential_id}/exchanges", response_model=Page[ExchangeAttemptOut])
async def list_exchanges(
    org_id: str,
    account_id: str,
    credential_id: str,
    session: SessionDep,
    state: StateDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get", ONE))],
    params: PageDep,
) -> Page[Any]:
    """Exchange attempts, newest first: when, outcome, the failing check, the client address."""
    await _credential(session, org_id, account_id, credential_id)
    await state.federation.flush_attempts()
    query = select(ExchangeAttempt).where(ExchangeAttempt.credential_id == credential_id)
    rows, nxt = await paginate(session, query, params, ExchangeAttempt.id, newest_first=True)
    return page(
        [
            {
                "id": a.id,
                "at": a.at.isoformat(),
                "outcome": a.outcome,
                "failed_check": a.failed_check,
                "subject": a.subject,
                "client_address": a.client_address,
                "count": a.count,
            }
            for a in rows
        ],
        nxt,
    )


def _oauth_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": error, "error_description": description}, status, headers=headers)


exchange_router = APIRouter(tags=["token exchange"])


_EXCHANGE_FORM = {
    "type": "object",
    "required": ["grant_type", "subject_token", "subject_token_type"],
    "properties": {
        "grant_type": {"type": "string", "enum": [GRANT_TYPE]},
        "subject_token": {"type": "string", "description": "the external OIDC JWT"},
        "subject_token_type": {"type": "string", "enum": [SUBJECT_TOKEN_TYPE]},
        "audience": {"type": "string"},
        "scope": {"type": "string"},
        "requested_token_type": {"type": "string"},
        "resource": {"type": "string"},
    },
}


def _oauth(description: str) -> dict[str, Any]:
    return {"model": OAuthErrorOut, "description": description}


@exchange_router.post(
    "/workload-identity/{credential_id}/token",
    response_model=TokenExchangeOut,
    responses={
        400: _oauth("invalid_request: a missing or wrong field, a body that is not a form"),
        401: _oauth(
            "invalid_token: the subject token is malformed, badly signed, expired or for another iss/aud; "
            "an unknown or inactive credential is answered the same"
        ),
        403: _oauth("access_denied: sub outside subject_filter, or a false attribute_condition"),
        429: _oauth(
            "temporarily_unavailable: too many tokens issued for this credential, too many exchanges from this "
            "address, or too many refused from it (an IPv6 address's /64); Retry-After says when to retry"
        ),
    },
    openapi_extra={
        "x-permission": "none (RFC 8693)",
        RFC6749_ERRORS: True,
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": _EXCHANGE_FORM}},
        },
    },
)
async def token_exchange(credential_id: str, request: Request, state: StateDep) -> Response:
    """RFC 8693 token exchange of an external OIDC JWT for a one-hour access token."""
    try:
        form = await _read_form(request)
        result = await state.federation.exchange(credential_id, form, request.client.host if request.client else "?")
    except ExchangeFailure as failure:
        metrics.EXCHANGES.labels(failure.error).inc()
        return _oauth_error(failure.status, failure.error, failure.description)
    except RateLimited as limited:
        metrics.EXCHANGES.labels("temporarily_unavailable").inc()
        return _oauth_error(
            429,
            "temporarily_unavailable",
            "too many token exchanges; retry later",
            {"Retry-After": retry_after_header(limited.retry_after)},
        )
    metrics.EXCHANGES.labels("issued").inc()
    return json_response(result, 200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


async def _read_form(request: Request) -> dict[str, str]:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        raise invalid_request("the body must be application/x-www-form-urlencoded")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise invalid_request("the body is too large")
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=20)
    except (ValueError, UnicodeDecodeError) as exc:
        raise invalid_request("the body is not a valid form") from exc
    if any(len(values) > 1 for values in parsed.values()):
        raise invalid_request("repeated form parameters")
    return {name: values[0] for name, values in parsed.items()}
