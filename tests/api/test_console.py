"""The console over HTTP, as a browser without JavaScript sees it (issue 34): sign-in by form, the
incident list (open first, filtered by mode, exercises marked), an incident's page and its forms,
English and Japanese from Accept-Language; and what it refuses: no session, a missing or wrong
CSRF token, a viewer acting, another organization's incident, a sign-in form sent from elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pyotp
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from api.console import signin_pages
from app.domain.shared.ids import new_id
from app.store.models import Incident
from devstack.kafka import LocalKafka
from devstack.ports import free_port
from devstack.smtp_sink import SmtpSink
from tests.support.console import PASSWORD, console, csrf_of, person, signed_in
from tests.support.db import in_db
from tests.support.stack import Stack, wait_for

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def mail_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    directory = tmp_path_factory.mktemp("mail")
    port = free_port()
    sink = SmtpSink(directory, "127.0.0.1", port)
    sink.start()
    yield directory, port
    sink.stop()


@pytest.fixture(scope="module")
def stack(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, mail_dir: tuple[Path, int]) -> Iterator[Stack]:
    """One API for the module (the console reads the database; no worker is needed here)."""
    s = Stack(tmp_path_factory.mktemp("console"), kafka.bootstrap, extra_env={"TOCSIN_SMTP_PORT": str(mail_dir[1])})
    s.bootstrap()
    s.start_api()
    yield s
    s.stop()


def incident(stack: Stack, org: str | None = None, **fields: object) -> str:
    """An incident as the worker stores it."""

    async def make(session: AsyncSession) -> str:
        row = Incident(
            id=new_id("inc"),
            organization_id=org or stack.org,
            title=str(fields.get("title", "arranged")),
            status=str(fields.get("status", "OPEN")),
            operation_book_id="obk_x",
            workflow_id="wfl_x",
            topic_id="wtp_x",
            partition_key="station-1",
            event_id=None,
            server_event_id="evt_x",
            mode=str(fields.get("mode", "ACTUAL")),
            member_user_ids=list(fields.get("members", [])),  # type: ignore[call-overload]
            member_group_ids=[],
            created_at=datetime.now(UTC) - timedelta(seconds=int(str(fields.get("age", 0)))),
            resolved_at=None,
        )
        session.add(row)
        return row.id

    return in_db(stack, make)


@pytest.fixture(scope="module")
def owner(stack: Stack) -> Iterator[httpx.Client]:
    with closing(signed_in(stack, person(stack, "owner"))) as client:
        yield client


def test_without_a_session_every_page_leads_to_the_signin(stack: Stack) -> None:
    with console(stack) as c:
        for path in ("/incidents", "/incidents/inc_x", "/events/evt_x", "/topics", "/account"):
            r = c.get(path)
            assert r.status_code == 303 and r.headers["location"].startswith("/console/signin?next="), path
        assert c.get(f"{stack.base_url}/console").headers["location"] == "/console/incidents"
        page = c.get("/signin")
        # one organization on this installation: its sign-in form is offered at once
        assert page.status_code == 200 and f'value="{stack.org}"' in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]


def test_wrong_password_shows_the_apis_refusal(stack: Stack) -> None:
    email = person(stack, "viewer").email
    with console(stack) as c:
        r = c.post("/signin/password", data={"organization_id": stack.org, "email": email, "password": "wrong one"})
        assert r.status_code == 401 and "wrong e-mail or password" in r.text
        assert "tocsin_session" not in r.headers.get("set-cookie", "")


def test_signin_cookie_is_httponly_secure_strict(stack: Stack) -> None:
    email = person(stack, "viewer").email
    with console(stack) as c:
        r = c.post("/signin/password", data={"organization_id": stack.org, "email": email, "password": PASSWORD})
        cookie = next(h for h in r.headers.get_list("set-cookie") if h.startswith("tocsin_session="))
        assert all(flag in cookie.lower() for flag in ("httponly", "secure", "samesite=strict"))


EVIL_NEXT = "/console/../..//evil.example"


def test_next_leaves_the_console_never(stack: Stack) -> None:
    """``next=/console/../..//evil.example`` was echoed into the form and the 303's Location (outside
    attacker): its dot segments are resolved first, and what leaves /console/ is the home page."""
    email = person(stack, "viewer").email
    with console(stack) as c:
        form = c.get("/signin", params={"next": EVIL_NEXT})
        assert form.status_code == 200 and "evil" not in form.text
        data = {"organization_id": stack.org, "email": email, "password": PASSWORD, "next": EVIL_NEXT}
        r = c.post("/signin/password", data=data)
        assert r.status_code == 303 and r.headers["location"] == "/console/incidents"
        data["next"] = "/console/./topics/../incidents?mode=DRILL"
        r = c.post("/signin/password", data=data)
        assert r.status_code == 303 and r.headers["location"] == "/console/incidents?mode=DRILL"


@pytest.mark.parametrize(
    "given",
    [EVIL_NEXT, "//evil.example/console/", "/console/%2e%2e/%2e%2e//evil.example", "/console/\\evil", "/console"],
)
def test_next_outside_the_console_is_the_home_page(given: str) -> None:
    assert signin_pages._next(given) == "/console/incidents"


def test_list_shows_open_first_and_marks_exercises_and_filters_by_mode(stack: Stack, owner: httpx.Client) -> None:
    resolved = incident(stack, title="old resolved", status="RESOLVED", age=0)
    drill = incident(stack, title="drill open", mode="DRILL", age=50)
    actual = incident(stack, title="actual open", age=100)
    page = owner.get("/incidents").text
    assert drill in page and actual in page and resolved in page, page
    assert page.index(drill) < page.index(actual) < page.index(resolved)
    assert "Exercise · DRILL" in page
    only_drill = owner.get("/incidents", params={"mode": "DRILL"}).text
    assert drill in only_drill and actual not in only_drill
    rows = owner.get("/incidents/rows", params={"mode": "ACTUAL"}).text
    assert actual in rows and drill not in rows and "<html" not in rows


def test_japanese_from_accept_language(stack: Stack, owner: httpx.Client) -> None:
    incident(stack, title="ja check", mode="DRILL")
    page = owner.get("/incidents", headers={"Accept-Language": "fr;q=0.9, ja;q=0.8, en;q=0.5"}).text
    assert '<html lang="ja">' in page and "インシデント" in page and "訓練 · DRILL" in page
    english = owner.get("/incidents", headers={"Accept-Language": "en-GB,ja;q=0.9"}).text
    assert '<html lang="en">' in english and "Incidents" in english


def test_acknowledge_and_resolve_by_form_with_the_csrf_token(stack: Stack, owner: httpx.Client) -> None:
    inc = incident(stack, title="to act on")
    page = owner.get(f"/incidents/{inc}")
    assert page.status_code == 200 and "to act on" in page.text
    token = csrf_of(page.text)
    for sent in ({"status": "ACKNOWLEDGED"}, {"status": "ACKNOWLEDGED", "csrf_token": "forged"}):
        refused = owner.post(f"/incidents/{inc}/status", data=sent)
        assert refused.status_code == 403 and "CSRF" in refused.text
    with stack.client() as api:
        assert api.get(f"/incidents/{inc}").json()["status"] == "OPEN"
        for status in ("ACKNOWLEDGED", "RESOLVED"):
            done = owner.post(f"/incidents/{inc}/status", data={"status": status, "csrf_token": token})
            assert done.status_code == 303 and done.headers["location"] == f"/console/incidents/{inc}"
            assert api.get(f"/incidents/{inc}").json()["status"] == status
        kinds = [e["kind"] for e in api.get(f"/incidents/{inc}/events").json()["items"]]
    assert kinds == ["ACKNOWLEDGED", "RESOLVED"]
    assert "RESOLVED" in owner.get(f"/incidents/{inc}").text


def test_a_viewer_reads_but_cannot_act(stack: Stack) -> None:
    who = person(stack, "viewer")
    inc = incident(stack, title="viewer reads", members=[who.id])
    with closing(signed_in(stack, who)) as viewer:
        page = viewer.get(f"/incidents/{inc}")
        assert page.status_code == 200 and "viewer reads" in page.text
        assert "You can read this incident but not change it." in page.text
        assert f'action="/console/incidents/{inc}/status"' not in page.text
        refused = viewer.post(f"/incidents/{inc}/status", data={"status": "RESOLVED", "csrf_token": csrf_of(page.text)})
        assert refused.status_code == 403 and "organization.incident:update" in refused.text
    with stack.client() as api:
        assert api.get(f"/incidents/{inc}").json()["status"] == "OPEN"


def test_a_person_without_incident_permissions_sees_none(stack: Stack) -> None:
    incident(stack, title="hidden from nobody")
    with closing(signed_in(stack, person(stack, None))) as nobody:
        r = nobody.get("/incidents")
        assert r.status_code == 403 and "hidden from nobody" not in r.text


def test_another_organizations_incident_is_not_found(stack: Stack, owner: httpx.Client) -> None:
    other = stack.new_organization("Other org")["organization_id"]
    theirs = incident(stack, org=other, title="their secret")
    page = owner.get(f"/incidents/{theirs}")
    assert page.status_code == 404 and "their secret" not in page.text
    token = csrf_of(owner.get("/incidents").text)
    acted = owner.post(f"/incidents/{theirs}/status", data={"status": "RESOLVED", "csrf_token": token})
    assert acted.status_code == 404
    assert theirs not in owner.get("/incidents").text


def test_topic_control_state_page_and_names_by_language(stack: Stack, owner: httpx.Client) -> None:
    with stack.client() as api:
        topic = {"key": "quake-console", "name_en": "Earthquake", "name_ja": "地震"}
        assert api.post("/workflow_topics", json=topic).status_code == 201
    listed = owner.get("/topics", headers={"Accept-Language": "ja"}).text
    assert "地震" in listed
    page = owner.get("/topics/quake-console", params={"partition_key": "station-9", "status": "DRILL"})
    assert page.status_code == 200 and "Earthquake" in page.text and "station-9" in page.text
    assert "Episode open" in page.text
    assert owner.get("/topics/no-such-topic").status_code == 404


def test_a_signin_form_sent_from_another_site_is_refused(stack: Stack) -> None:
    email = person(stack, "viewer").email
    with console(stack, Origin="https://evil.example") as c:
        data = {"organization_id": stack.org, "email": email, "password": PASSWORD}
        r = c.post("/signin/password", data=data)
        assert r.status_code == 403 and "another site" in r.text


def test_signout_ends_the_session(stack: Stack) -> None:
    with closing(signed_in(stack, person(stack, "viewer"))) as c:
        token = csrf_of(c.get("/incidents").text)
        assert c.post("/signout", data={"csrf_token": "forged"}).status_code == 403
        assert c.post("/signout", data={"csrf_token": token}).status_code == 303
        assert c.get("/incidents").status_code == 303


def _field(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no {name} in the page"
    return found.group(1)


def _secret(html: str) -> str:
    found = re.search(r"<code data-totp-secret>([A-Z2-7]+)</code>", html)
    assert found, "no TOTP secret in the page"
    return found.group(1)


def test_a_newcomer_signs_in_with_the_bootstraps_link(stack: Stack) -> None:
    """``tocsin bootstrap``'s owner_signin_link: choose a password, then sign in as the owner."""
    link = urlsplit(stack.credentials["owner_signin_link"])
    assert link.path == "/console/invitation"
    with console(stack) as c:
        page = c.get(f"{stack.base_url}{link.path}?{link.query}")
        assert page.status_code == 200 and "Choose a password" in page.text
        token = _field(page.text, "token")
        short = c.post("/invitation", data={"token": token, "new_password": "short"})
        assert short.status_code == 422
        done = c.post("/invitation", data={"token": token, "new_password": PASSWORD})
        assert done.status_code == 200 and "The password is saved" in done.text
        assert f'value="{stack.org}"' in done.text
        again = c.post("/invitation", data={"token": token, "new_password": PASSWORD})
        assert again.status_code == 401  # the link works once
        owner_email = stack.credentials["owner_email"]
        r = c.post("/signin/password", data={"organization_id": stack.org, "email": owner_email, "password": PASSWORD})
        assert r.status_code == 303 and r.headers["location"] == "/console/incidents"


def test_the_account_page_sets_up_totp_with_the_csrf_token(stack: Stack) -> None:
    with closing(signed_in(stack, person(stack, "viewer"))) as c:
        account = c.get("/account").text
        token = csrf_of(account)
        assert c.post("/account/totp", data={"csrf_token": ""}).status_code == 403
        start = c.post("/account/totp", data={"csrf_token": token})
        assert start.status_code == 200 and "<svg" in start.text
        code = pyotp.TOTP(_secret(start.text)).now()
        done = c.post("/account/totp/confirm", data={"csrf_token": token, "code": code})
        assert done.status_code == 200 and len(re.findall(r"<li><code>", done.text)) == 10
        assert "An authenticator app is set up." in c.get("/account").text


def _mailed_link(directory: Path, to: str, path: str) -> str | None:
    for eml in sorted(directory.glob("*.eml")):
        message = message_from_bytes(eml.read_bytes())
        if to in message["To"]:
            body = message.get_payload(decode=True).decode()  # type: ignore[union-attr]
            return next((w for w in body.split() if path in w), None)
    return None


def test_password_reset_by_the_consoles_forms(stack: Stack, mail_dir: tuple[Path, int]) -> None:
    who = person(stack, "viewer")
    with stack.client() as api:
        assert api.put("/iam/authentication_policy", json={"password_self_reset_enabled": True}).status_code == 200
    try:
        with console(stack) as c:
            assert "Forgot the password?" in c.get("/signin", params={"org": stack.org}).text
            sent = c.post("/signin/password_reset", data={"organization_id": stack.org, "email": who.email})
            assert sent.status_code == 200 and "an e-mail is on its way" in sent.text
            link = wait_for(lambda: _mailed_link(mail_dir[0], who.email, "/console/password_reset?token="), 30, "mail")
            page = c.get(link)
            assert page.status_code == 200 and "Choose a password" in page.text
            new = "a brand new passphrase here"
            done = c.post("/password_reset", data={"token": _field(page.text, "token"), "new_password": new})
            assert done.status_code == 200 and "The password is saved" in done.text
            signin = {"organization_id": stack.org, "email": who.email}
            assert c.post("/signin/password", data={**signin, "password": PASSWORD}).status_code == 401
            assert c.post("/signin/password", data={**signin, "password": new}).status_code == 303
    finally:
        with stack.client() as api:
            api.put("/iam/authentication_policy", json={})


def test_enforce_mfa_leads_through_the_totp_enrolment_page(stack: Stack) -> None:
    """Last in the module: enforce_mfa ends the module's password-only sessions."""
    who = person(stack, "viewer")
    with stack.client() as api:
        assert api.put("/iam/authentication_policy", json={"enforce_mfa": True}).status_code == 200
    try:
        with console(stack) as c:
            data = {"organization_id": stack.org, "email": who.email, "password": PASSWORD}
            enrol = c.post("/signin/password", data=data)
            assert enrol.status_code == 200 and "Set up a second factor" in enrol.text
            assert "tocsin_session" not in enrol.headers.get("set-cookie", "")
            assert 'data-webauthn="enrol"' in enrol.text  # the key, offered to the script
            challenge, secret = _field(enrol.text, "challenge"), _secret(enrol.text)
            wrong = c.post("/signin/enrol_totp", data={"challenge": challenge, "code": "000000"})
            assert wrong.status_code == 401
            code = pyotp.TOTP(secret).now()
            done = c.post("/signin/enrol_totp", data={"challenge": challenge, "code": code, "next": "/console/topics"})
            assert done.status_code == 200 and "Recovery codes" in done.text and 'href="/console/topics"' in done.text
            assert any(h.startswith("tocsin_session=") for h in done.headers.get_list("set-cookie"))
    finally:
        with stack.client() as api:
            api.put("/iam/authentication_policy", json={})
