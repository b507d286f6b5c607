"""The console's pages for a signed-in person: incidents (open first, filtered by mode, refreshed by
a small script), an incident with its timeline and the acknowledge / resolve forms, an event's
trace, topics and their control state per partition key, the account's second factors.

Each page checks what the matching API route checks, with the same function (render.allowed is
api/deps.py ``authorize``; topics use ``authorize_topic``), then calls the route's own function,
so the console shows a person exactly what the API would give their session's access token.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, Response
from sqlalchemy import select

from api.console.i18n import display_name
from api.console.render import HERE, allowed, can, form, guarded, lang_of, page, redirect, signed_in, with_csrf
from api.deps import SessionDep, authorize_topic
from api.pages import PageParams
from api.routes import events, incidents, topics
from api.routes.sessions import end_one
from api.routes.signin import totp_confirm, totp_enrolment
from api.schemas.signin import TotpConfirmIn
from app.domain.iam.principal import Principal
from app.errors import InvalidInput
from app.store import people
from app.store.models import WorkflowTopic
from app.store.workflows import find_topic

router = APIRouter(prefix="/console", include_in_schema=False)

MODES = ("ACTUAL", "DRILL", "TEST")
STATUS_ORDER = {"OPEN": 0, "ACKNOWLEDGED": 1, "RESOLVED": 2}
LIST_LIMIT = 500  # the newest incidents a list shows (the API's largest page)
STATIC = {"console.js": "text/javascript", "console.css": "text/css"}
ModeQuery = Annotated[Literal["ACTUAL", "DRILL", "TEST"] | None, Query()]


@router.get("")
@router.get("/")
async def console_home() -> Response:
    return redirect("/console/incidents")


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        return Response(status_code=404)
    return FileResponse(HERE / "static" / name, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})


async def _topic_names(session: SessionDep, org_id: str, lang: str) -> dict[str, str]:
    rows = await session.scalars(select(WorkflowTopic).where(WorkflowTopic.organization_id == org_id))
    return {t.id: display_name(t.spec, lang, t.key) for t in rows.all()}


async def _incident_rows(
    request: Request, session: SessionDep, principal: Principal, mode: incidents.Mode | None
) -> list[Any]:
    allowed(principal, "organization.incident:list", "incidents")
    # the API's list, newest first and filtered by mode before the page is cut: the newest 500 of that mode
    listed = await incidents.list_incidents(
        principal.organization_id, session, principal, PageParams(LIST_LIMIT, None), mode=mode
    )
    rows = list(listed.items)
    rows.sort(key=lambda i: STATUS_ORDER.get(i["status"], 3))  # stable: newest first within a status
    return rows


@router.get("/incidents")
@guarded
async def incident_list(request: Request, session: SessionDep, mode: ModeQuery = None) -> Response:
    current = await signed_in(request, session)
    rows = await _incident_rows(request, session, current.principal, mode)
    names = await _topic_names(session, current.principal.organization_id, lang_of(request))
    return page(request, "incidents.html", me=current, rows=rows, names=names, mode=mode, modes=MODES)


@router.get("/incidents/rows")
@guarded
async def incident_rows(request: Request, session: SessionDep, mode: ModeQuery = None) -> Response:
    """The list's rows alone: what the page's script fetches to refresh itself."""
    current = await signed_in(request, session)
    rows = await _incident_rows(request, session, current.principal, mode)
    names = await _topic_names(session, current.principal.organization_id, lang_of(request))
    return page(request, "_incident_rows.html", rows=rows, names=names)


@router.get("/incidents/{incident_id}")
@guarded
async def incident_page(incident_id: str, request: Request, session: SessionDep) -> Response:
    current = await signed_in(request, session)
    principal, org = current.principal, current.principal.organization_id
    allowed(principal, "organization.incident:get", f"incidents/{incident_id}")
    inc = await incidents.get_incident(org, incident_id, session, principal)
    allowed(principal, "organization.incident:get", f"incidents/{incident_id}/events")
    timeline = await incidents.get_timeline(org, incident_id, session, principal, PageParams(LIST_LIMIT, None))
    names = await _topic_names(session, org, lang_of(request))
    return page(
        request,
        "incident.html",
        me=current,
        inc=inc,
        timeline=timeline.items,
        topic_name=names.get(inc["topic_id"], inc["topic_id"]),
        may_act=can(principal, "organization.incident:update", f"incidents/{incident_id}"),
    )


@router.post("/incidents/{incident_id}/status")
@guarded
async def incident_status(incident_id: str, request: Request, session: SessionDep) -> Response:
    """Acknowledge, resolve or reopen (a form with the session's CSRF token)."""
    fields = await form(request)
    current = await signed_in(request, session, csrf=fields.get("csrf_token", ""))
    status = fields.get("status", "")
    if status not in STATUS_ORDER:
        raise InvalidInput("unknown status", details={"fields": [{"field": "status", "message": "unknown"}]})
    allowed(current.principal, "organization.incident:update", f"incidents/{incident_id}")
    await incidents.update_incident(
        current.principal.organization_id,
        incident_id,
        incidents.IncidentPatch(status=status),  # type: ignore[arg-type]  # checked against STATUS_ORDER above
        session,
        current.principal,
    )
    return redirect(f"/console/incidents/{incident_id}")


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


@router.get("/events/{event_id}")
@guarded
async def event_trace(event_id: str, request: Request, session: SessionDep) -> Response:
    current = await signed_in(request, session)
    # the route's own check: event:get on the event, or on its topic (api/routes/events.py)
    trace = await events.get_event_trace(current.principal.organization_id, event_id, session, current.principal)
    steps = [
        {"step": s.get("step", ""), "fields": [(k, _shown(v)) for k, v in s.items() if k != "step"]}
        for s in trace["steps"]
    ]
    return page(request, "trace.html", me=current, trace=trace, steps=steps)


@router.get("/topics")
@guarded
async def topic_list(request: Request, session: SessionDep) -> Response:
    current = await signed_in(request, session)
    allowed(current.principal, "organization.workflow_topic:list")
    listed = await topics.list_topics(
        current.principal.organization_id, session, current.principal, PageParams(500, None)
    )
    lang = lang_of(request)
    rows = [{**t, "display": display_name(t, lang, t["key"])} for t in listed.items]
    return page(request, "topics.html", me=current, rows=rows)


@router.get("/topics/{topic}")
@guarded
async def topic_page(
    topic: str,
    request: Request,
    session: SessionDep,
    partition_key: Annotated[str, Query(max_length=256)] = "",
    status: Literal["ACTUAL", "DRILL", "TEST"] = "ACTUAL",
) -> Response:
    """A topic and, for the partition key asked for, its control state (the API's control_state)."""
    current = await signed_in(request, session)
    principal, org = current.principal, current.principal.organization_id
    row = await find_topic(session, org, topic) if "\n" not in topic else None
    authorize_topic(principal, org, "organization.workflow_topic:get", topic, (row.id, row.key) if row else None)
    access = topics.TopicAccess(principal, row)
    state = None
    if partition_key:
        state = await topics.control_state(org, topic, session, access, partition_key, status)
    spec = access.topic.spec
    return page(
        request,
        "topic.html",
        me=current,
        topic=access.topic,
        name=display_name(spec, lang_of(request), access.topic.key),
        state=state,
        partition_key=partition_key,
        mode=status,
        modes=MODES,
    )


@router.get("/account")
@guarded
async def account(request: Request, session: SessionDep) -> Response:
    current = await signed_in(request, session)
    enrolled, _codes = await people.enrolled_factors(session, current.account.id)
    keys = await people.webauthn_credentials(session, current.account.id)
    policy = await people.policy_of(session, current.account.organization_id)
    return page(request, "account.html", me=current, totp="totp" in enrolled, keys=keys, policy=policy)


@router.post("/account/totp")
@guarded
async def account_totp(request: Request, session: SessionDep) -> Response:
    """Start a TOTP enrolment for the signed-in person: the QR code and the confirmation form."""
    fields = await form(request)
    current = await signed_in(request, session, csrf=fields.get("csrf_token", ""))
    enrolment = await totp_enrolment(with_csrf(request, current), session, None)
    return page(
        request, "totp.html", me=current, enrolment=enrolment, challenge="", action="/console/account/totp/confirm"
    )


@router.post("/account/totp/confirm")
@guarded
async def account_totp_confirm(request: Request, session: SessionDep) -> Response:
    fields = await form(request)
    current = await signed_in(request, session, csrf=fields.get("csrf_token", ""))
    body = TotpConfirmIn(code=fields.get("code", ""))
    done = await totp_confirm(with_csrf(request, current), Response(), session, body)
    return page(request, "recovery.html", me=current, codes=done["recovery_codes"], next="/console/account")


@router.post("/signout")
@guarded
async def signout(request: Request, session: SessionDep) -> Response:
    fields = await form(request)
    current = await signed_in(request, session, csrf=fields.get("csrf_token", ""))
    await end_one(request, session, current, current.row, "signout")
    out = redirect("/console/signin")
    out.delete_cookie("tocsin_session", path="/", secure=True, httponly=True, samesite="strict")
    return out
