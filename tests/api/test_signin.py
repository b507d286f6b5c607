"""People's sign-in against a real API process (issue 34): every authentication-policy field's
effect, TOTP (enrolment, replay, recovery codes), magic links and password resets read from a real
SMTP sink, sessions (cookie, CSRF, listing, revocation, policy changes), no user enumeration
(answer and time), throttling that spares the real user's device, and the audit log."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pyotp
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.auth_policy import MAX_RESET_SECONDS, MIN_RESET_SECONDS
from app.identity.session_tokens import secret_hash
from app.store.models import SignInToken
from devstack.kafka import LocalKafka
from devstack.ports import free_port
from devstack.smtp_sink import SmtpSink
from tests.support.db import in_db
from tests.support.stack import Stack, wait_for

pytestmark = pytest.mark.kafka

PASSWORD = "correct horse battery staple"
_addresses = itertools.count(1)


def new_address() -> str:
    """A client address of its own (the API believes 127.0.0.1's X-Forwarded-For here), so that one
    test's failures never throttle another's."""
    n = next(_addresses)
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


class Mail:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def messages(self) -> list[Message]:
        return [message_from_bytes(p.read_bytes()) for p in sorted(self.directory.glob("*.eml"))]

    def link_to(self, to: str, path: str, after: int) -> str:
        """The token of the first link to ``path`` mailed to ``to`` among messages after the first ``after``."""

        def find() -> str | None:
            for msg in self.messages()[after:]:
                if to in msg["To"]:
                    body = msg.get_payload(decode=True).decode()  # type: ignore[union-attr]
                    for word in body.split():
                        if path in word:
                            return parse_qs(urlparse(word).query)["token"][0]
            return None

        return wait_for(find, 15, f"a mail to {to} with a link to {path}")


@pytest.fixture(scope="module")
def mail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mail, int]]:
    directory = tmp_path_factory.mktemp("mail")
    port = free_port()
    sink = SmtpSink(directory, "127.0.0.1", port)
    sink.start()
    yield Mail(directory), port
    sink.stop()


@pytest.fixture(scope="module")
def api(
    kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None, mail: tuple[Mail, int]
) -> Iterator[Stack]:
    env = {"TOCSIN_SMTP_PORT": str(mail[1]), "TOCSIN_TRUSTED_PROXIES": "127.0.0.1/32"}
    stack = Stack(tmp_path_factory.mktemp("signin"), kafka.bootstrap, database_url=database, extra_env=env)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def owner(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as client:
        yield client


@pytest.fixture
def anon(api: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{api.base_url}/v1", timeout=30) as client:
        yield client


@pytest.fixture(autouse=True)
def default_policy(owner: httpx.Client) -> Iterator[None]:
    assert owner.put("/iam/authentication_policy", json={}).status_code == 200
    yield
    owner.put("/iam/authentication_policy", json={})


def set_policy(owner: httpx.Client, **fields: Any) -> None:
    r = owner.put("/iam/authentication_policy", json=fields)
    assert r.status_code == 200, r.text


_users = itertools.count(1)


def new_user(api: Stack, owner: httpx.Client, role: str | None = "viewer", password: str | None = PASSWORD) -> str:
    """A user (its e-mail returned) with ``role`` on the organization and, by invitation, a password."""
    email = f"person{next(_users)}-{time.monotonic_ns()}@example.com"
    r = owner.post("/users", json={"email": email, "display_name": "Person"})
    assert r.status_code == 201, r.text
    user_id = r.json()["id"]
    if role:
        binding = {"resource": f"crn:tocsin:organizations:{api.org}", "role_id": role}
        assert owner.put(f"/users/{user_id}/iam", json={"bindings": [binding]}).status_code == 200
    if password:
        invitation = owner.post(f"/users/{user_id}/signin_invitation")
        assert invitation.status_code == 201, invitation.text
        assert invitation.json()["url"].startswith(f"{api.base_url}/console/invitation?token=")
        accept = httpx.post(
            f"{api.base_url}/v1/signin/invitation:accept",
            json={"token": invitation.json()["token"], "new_password": password},
        )
        assert accept.status_code == 204, accept.text
    return email


def post(api: Stack, path: str, body: dict[str, Any], address: str | None = None, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{api.base_url}/v1{path}",
        json=body,
        headers={"X-Forwarded-For": address or new_address(), **headers},
        timeout=30,
    )


def password_signin(api: Stack, email: str, password: str = PASSWORD, **extra: Any) -> httpx.Response:
    address = extra.pop("address", None)
    body = {"organization_id": api.org, "email": email, "password": password, **extra}
    return post(api, "/signin/password", body, address)


def signed_in(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert body["status"] == "signed_in", body
    session: dict[str, Any] = body["session"]
    return session


def bearer(api: Stack, token: str) -> httpx.Client:
    return httpx.Client(base_url=f"{api.base_url}/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30)


def enrol_totp(api: Stack, challenge: str | None = None, token: str | None = None) -> tuple[str, list[str], Any]:
    """Enrol TOTP (by an enrolment step's challenge or a session): its secret, the recovery codes, the sign-in."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"challenge": challenge} if challenge else {}
    start = post(api, "/signin/totp_enrolment", body, **headers)
    assert start.status_code == 200, start.text
    secret = start.json()["secret"]
    assert start.json()["otpauth_uri"].startswith("otpauth://totp/Tocsin:")
    assert f"secret={secret}" in start.json()["otpauth_uri"]
    assert start.json()["qr_svg"].lstrip().startswith("<?xml") and "<svg" in start.json()["qr_svg"]
    code = pyotp.TOTP(secret).now()
    done = post(api, "/signin/totp_enrolment:confirm", {**body, "code": code}, **headers)
    assert done.status_code == 200, done.text
    codes = done.json()["recovery_codes"]
    assert len(codes) == 10 and len(set(codes)) == 10
    return secret, codes, done.json()["signin"]


def audit(owner: httpx.Client, action: str) -> list[dict[str, Any]]:
    return [e for e in owner.get("/audit_log", params={"limit": 500}).json()["items"] if e["action"] == action]


# ---------------------------------------------------------------- password and the policy


def test_password_signin_gives_a_working_short_lived_session(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    r = password_signin(api, email)
    session = signed_in(r)
    assert session["methods"] == ["password"] and session["token_type"] == "Bearer"
    assert session["expires_in"] == 900
    # the cookie: HttpOnly, Secure, SameSite=Strict
    cookies = r.headers.get_list("set-cookie")
    main = next(c for c in cookies if c.startswith("tocsin_session="))
    assert all(flag in main.lower() for flag in ("httponly", "secure", "samesite=strict", "path=/"))
    # the access token works on the API with the user's permissions (viewer: reads, cannot create)
    with bearer(api, session["access_token"]) as me:
        assert me.get(f"/organizations/{api.org}/workflow_topics").status_code == 200
        assert me.post(f"/organizations/{api.org}/service_accounts", json={"name": "x"}).status_code == 403
        assert me.get("/me").json()["methods"] == ["password"]
    signins = audit(owner, "signin")
    assert any(e["detail"]["method"] == "password" and e["detail"]["session_id"] == session["id"] for e in signins)


def test_password_login_disabled_refuses_clearly(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    set_policy(owner, password_login_enabled=False)
    r = password_signin(api, email)
    assert r.status_code == 403 and r.json()["code"] == "IAM-001"
    assert "password sign-in is turned off" in r.json()["message"]
    assert r.json()["details"] == {"method": "password", "policy": "off"}
    set_policy(owner, password_login_enabled=True)
    signed_in(password_signin(api, email))


def test_wrong_password_and_unknown_user_get_the_same_answer(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    wrong = password_signin(api, email, "not the password at all")
    unknown = password_signin(api, f"nobody-{time.monotonic_ns()}@example.com")
    no_password = password_signin(api, new_user(api, owner, password=None))
    for r in (wrong, unknown, no_password):
        assert r.status_code == 401
        assert r.json() == {"code": "AUT-003", "message": "wrong e-mail or password", "details": {}}
        assert "set-cookie" not in r.headers
    failures = audit(owner, "signin_failure")
    assert any(
        e["detail"] == {"method": "password", "reason": "wrong_credentials", "address": e["detail"]["address"]}
        and e["actor"]["kind"] == "anonymous"
        for e in failures
    )


def test_enumeration_timing(api: Stack, owner: httpx.Client) -> None:
    """A wrong password for a real user and any password for an unknown one take about as long (the
    argon2id check runs against a dummy hash of the same cost): medians within 25 % or 30 ms."""
    emails = [new_user(api, owner) for _ in range(4)]  # 3 failures each: none is throttled
    known: list[float] = []
    unknown: list[float] = []
    for i in range(12):
        for who, into in ((emails[i % 4], known), (f"ghost{i}-{time.monotonic_ns()}@example.com", unknown)):
            started = time.perf_counter()
            r = password_signin(api, who, "wrong password here")
            into.append(time.perf_counter() - started)
            assert r.status_code == 401
    k, u = statistics.median(known[2:]), statistics.median(unknown[2:])
    assert abs(k - u) <= max(0.03, 0.25 * max(k, u)), (known, unknown)


def test_enforce_mfa_leads_a_user_without_second_factor_to_enrol(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    set_policy(owner, enforce_mfa=True)
    r = password_signin(api, email)
    assert r.status_code == 200 and r.json()["status"] == "enrolment_required"
    assert r.json()["session"] is None and "set-cookie" not in r.headers
    assert r.json()["methods"] == ["totp", "webauthn"]
    challenge = r.json()["challenge"]
    # the challenge is no session
    with bearer(api, challenge) as c:
        assert c.get(f"/organizations/{api.org}/workflow_topics").status_code == 401
    secret, _codes, signin = enrol_totp(api, challenge=challenge)
    assert signin["status"] == "signed_in" and signin["session"]["methods"] == ["password", "totp"]
    # the enrolment step is used up
    assert post(api, "/signin/totp_enrolment", {"challenge": challenge}).status_code == 401
    # next time: password, then the code
    r = password_signin(api, email)
    assert r.json()["status"] == "second_factor_required"
    assert set(r.json()["methods"]) == {"totp", "recovery_code"}
    code = pyotp.TOTP(secret).at(time.time() + 30)  # the next step: this one was used by the enrolment
    done = post(api, "/signin/second_factor", {"challenge": r.json()["challenge"], "method": "totp", "code": code})
    assert signed_in(done)["methods"] == ["password", "totp"]


def test_enforce_mfa_without_any_second_factor_allowed_refuses(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    set_policy(owner, enforce_mfa=True, totp_enabled=False, webauthn_enabled=False)
    r = password_signin(api, email)
    assert r.status_code == 403 and r.json()["details"] == {"policy": "enforce_mfa"}


def test_enforce_mfa_off_a_password_alone_signs_in(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    set_policy(owner, enforce_mfa=False)
    assert signed_in(password_signin(api, email))["methods"] == ["password"]


# ---------------------------------------------------------------- TOTP


def totp_user(api: Stack, owner: httpx.Client) -> tuple[str, str, list[str]]:
    email = new_user(api, owner)
    session = signed_in(password_signin(api, email))
    secret, codes, signin = enrol_totp(api, token=session["access_token"])
    assert signin is None
    return email, secret, codes


def second(api: Stack, challenge: str, method: str, code: str) -> httpx.Response:
    return post(api, "/signin/second_factor", {"challenge": challenge, "method": method, "code": code})


def test_totp_code_replay_is_refused(api: Stack, owner: httpx.Client) -> None:
    email, secret, _codes = totp_user(api, owner)
    code = pyotp.TOTP(secret).at(time.time() + 30)
    first = password_signin(api, email).json()
    assert first["status"] == "second_factor_required"
    signed_in(second(api, first["challenge"], "totp", code))
    again = password_signin(api, email).json()
    replay = second(api, again["challenge"], "totp", code)
    assert replay.status_code == 401 and replay.json()["message"] == "wrong or already used code"
    # an older step of the window is a replay too
    older = second(api, again["challenge"], "totp", pyotp.TOTP(secret).now())
    assert older.status_code == 401
    assert any(e["detail"]["reason"] == "wrong_code" for e in audit(owner, "signin_failure"))


def test_totp_window_is_one_step(api: Stack, owner: httpx.Client) -> None:
    email, secret, _codes = totp_user(api, owner)
    challenge = password_signin(api, email).json()["challenge"]
    beyond = pyotp.TOTP(secret).at(time.time() + 95)  # at least 3 steps ahead, out of any one-step window
    assert second(api, challenge, "totp", beyond).status_code == 401
    signed_in(second(api, challenge, "totp", pyotp.TOTP(secret).at(time.time() + 30)))


def test_recovery_codes_work_once_each_and_only_with_totp_allowed(api: Stack, owner: httpx.Client) -> None:
    email, _secret, codes = totp_user(api, owner)
    challenge = password_signin(api, email).json()["challenge"]
    assert signed_in(second(api, challenge, "recovery_code", codes[0]))["methods"] == ["password", "recovery_code"]
    challenge = password_signin(api, email).json()["challenge"]
    assert second(api, challenge, "recovery_code", codes[0]).status_code == 401
    signed_in(second(api, challenge, "recovery_code", codes[1].upper()))


def test_totp_enabled_off(api: Stack, owner: httpx.Client) -> None:
    """totp_enabled false: no enrolment, and a user's TOTP is not asked (the password alone signs in
    while MFA is not enforced); the sessions made with TOTP end."""
    email, secret, _codes = totp_user(api, owner)
    first = password_signin(api, email).json()
    with_totp = signed_in(second(api, first["challenge"], "totp", pyotp.TOTP(secret).at(time.time() + 30)))
    set_policy(owner, totp_enabled=False)
    with bearer(api, with_totp["access_token"]) as c:
        r = wait_for(lambda: (x := c.get("/me")).status_code == 401 and x, 10, "the TOTP session to end")
        assert "no longer satisfies" in r.json()["message"]
    assert signed_in(password_signin(api, email))["methods"] == ["password"]
    fresh = signed_in(password_signin(api, new_user(api, owner)))
    r = post(api, "/signin/totp_enrolment", {}, Authorization=f"Bearer {fresh['access_token']}")
    assert r.status_code == 403 and r.json()["details"]["method"] == "totp"


# ---------------------------------------------------------------- sessions, CSRF, policy changes


def cookie_of(r: httpx.Response, name: str = "tocsin_session") -> str:
    for header in r.headers.get_list("set-cookie"):
        if header.startswith(f"{name}="):
            return header.split(";", 1)[0].split("=", 1)[1]
    raise AssertionError(f"no {name} cookie")


def test_cookie_session_needs_the_csrf_token_to_change_anything(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    r = password_signin(api, email)
    session = signed_in(r)
    cookie = {"Cookie": f"tocsin_session={cookie_of(r)}"}
    me = httpx.get(f"{api.base_url}/v1/me", headers=cookie)
    assert me.status_code == 200 and me.json()["csrf_token"] == session["csrf_token"]
    for headers in (cookie, {**cookie, "X-CSRF-Token": "forged"}):
        refused = httpx.post(f"{api.base_url}/v1/signout", headers=headers)
        assert refused.status_code == 403 and refused.json()["details"] == {"csrf": "refused"}
    assert httpx.get(f"{api.base_url}/v1/me", headers=cookie).status_code == 200  # still signed in
    out = httpx.post(f"{api.base_url}/v1/signout", headers={**cookie, "X-CSRF-Token": session["csrf_token"]})
    assert out.status_code == 204
    assert httpx.get(f"{api.base_url}/v1/me", headers=cookie).status_code == 401
    with bearer(api, session["access_token"]) as c:
        wait_for(lambda: c.get("/me").status_code == 401, 10, "the signed-out session's token to stop")


def test_sessions_are_listed_and_revocable(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    a = signed_in(password_signin(api, email))
    b = signed_in(password_signin(api, email))
    with bearer(api, a["access_token"]) as c:
        listed = c.get("/sessions").json()["items"]
        assert {s["id"] for s in listed} == {a["id"], b["id"]}
        assert [s["current"] for s in listed if s["id"] == a["id"]] == [True]
        assert c.delete(f"/sessions/{b['id']}").status_code == 204
        assert c.delete(f"/sessions/{b['id']}").status_code == 404
        assert [s["id"] for s in c.get("/sessions").json()["items"]] == [a["id"]]
    with bearer(api, b["access_token"]) as c:
        wait_for(lambda: c.get(f"/organizations/{api.org}/workflow_topics").status_code == 401, 10, "revocation")
    # another user's session cannot be ended by id
    other = signed_in(password_signin(api, new_user(api, owner)))
    with bearer(api, other["access_token"]) as c:
        assert c.delete(f"/sessions/{a['id']}").status_code == 404
    assert any(e["detail"]["reason"] == "revoked" for e in audit(owner, "session_end"))


def test_policy_change_ends_sessions_that_no_longer_satisfy_it(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    password_only = signed_in(password_signin(api, email))
    set_policy(owner, enforce_mfa=True)
    with bearer(api, password_only["access_token"]) as c:
        wait_for(lambda: c.get(f"/organizations/{api.org}/workflow_topics").status_code == 401, 10, "policy end")
    assert any(e["detail"]["reason"] == "policy" for e in audit(owner, "session_end"))
    # and the next sign-in applies the new policy
    assert password_signin(api, email).json()["status"] == "enrolment_required"


def test_refresh_gives_a_new_access_token(api: Stack, owner: httpx.Client) -> None:
    r = password_signin(api, new_user(api, owner))
    session = signed_in(r)
    headers = {"Cookie": f"tocsin_session={cookie_of(r)}"}
    assert httpx.post(f"{api.base_url}/v1/sessions/current:refresh", headers=headers).status_code == 403
    fresh = httpx.post(
        f"{api.base_url}/v1/sessions/current:refresh", headers={**headers, "X-CSRF-Token": session["csrf_token"]}
    )
    assert fresh.status_code == 200
    with bearer(api, fresh.json()["access_token"]) as c:
        assert c.get("/me").status_code == 200
    with bearer(api, session["access_token"]) as c:
        wait_for(lambda: c.get("/me").status_code == 401, 10, "the old access token to stop")


# ---------------------------------------------------------------- magic link


def test_magic_link_off_refused_on_single_use(api: Stack, owner: httpx.Client, mail: tuple[Mail, int]) -> None:
    box, _port = mail
    email = new_user(api, owner, password=None)
    ask = {"organization_id": api.org, "email": email}
    r = post(api, "/signin/magic_link", ask)
    assert r.status_code == 403 and r.json()["details"]["method"] == "magic_link"  # the default: off
    set_policy(owner, magic_link_enabled=True)
    seen = len(box.messages())
    assert post(api, "/signin/magic_link", ask).json() == {"status": "accepted"}
    unknown = post(api, "/signin/magic_link", {**ask, "email": f"ghost-{time.monotonic_ns()}@example.com"})
    assert unknown.status_code == 202 and unknown.json() == {"status": "accepted"}
    token = box.link_to(email, "/console/signin/link", seen)
    session = signed_in(post(api, "/signin/magic_link:verify", {"token": token}))
    assert session["methods"] == ["magic_link"]
    reuse = post(api, "/signin/magic_link:verify", {"token": token})
    assert reuse.status_code == 401 and reuse.json()["code"] == "AUT-003"
    # an expired link
    seen = len(box.messages())
    post(api, "/signin/magic_link", ask)
    token = box.link_to(email, "/console/signin/link", seen)
    expire(api, token)
    assert post(api, "/signin/magic_link:verify", {"token": token}).json()["code"] == "AUT-004"
    # turned off again: its sessions end
    set_policy(owner, magic_link_enabled=False)
    with bearer(api, session["access_token"]) as c:
        wait_for(lambda: c.get("/me").status_code == 401, 10, "the magic-link session to end")


def expire(api: Stack, token: str) -> None:
    async def work(session: AsyncSession) -> None:
        row = (await session.scalars(select(SignInToken).where(SignInToken.token_hash == secret_hash(token)))).one()
        row.expires_at = row.created_at - timedelta(seconds=1)

    in_db(api, work)


def token_row(api: Stack, token: str) -> SignInToken:
    async def work(session: AsyncSession) -> SignInToken:
        row = (await session.scalars(select(SignInToken).where(SignInToken.token_hash == secret_hash(token)))).one()
        session.expunge(row)
        return row

    return in_db(api, work)


def test_magic_link_with_enrolled_totp_asks_the_code(api: Stack, owner: httpx.Client, mail: tuple[Mail, int]) -> None:
    box, _port = mail
    email, secret, _codes = totp_user(api, owner)
    set_policy(owner, magic_link_enabled=True)
    seen = len(box.messages())
    post(api, "/signin/magic_link", {"organization_id": api.org, "email": email})
    r = post(api, "/signin/magic_link:verify", {"token": box.link_to(email, "/console/signin/link", seen)})
    assert r.json()["status"] == "second_factor_required"
    code = pyotp.TOTP(secret).at(time.time() + 30)
    assert signed_in(second(api, r.json()["challenge"], "totp", code))["methods"] == ["magic_link", "totp"]


# ---------------------------------------------------------------- password reset


@pytest.mark.parametrize("seconds", [MIN_RESET_SECONDS, MAX_RESET_SECONDS])
def test_password_reset_lifetime_single_use_and_sessions_end(
    api: Stack, owner: httpx.Client, mail: tuple[Mail, int], seconds: int
) -> None:
    box, _port = mail
    email = new_user(api, owner)
    ask = {"organization_id": api.org, "email": email}
    assert post(api, "/signin/password_reset", ask).status_code == 403  # the default: off
    set_policy(owner, password_self_reset_enabled=True, password_reset_token_expires_in_seconds=seconds)
    before = signed_in(password_signin(api, email))
    seen = len(box.messages())
    assert post(api, "/signin/password_reset", ask).status_code == 202
    token = box.link_to(email, "/console/password_reset", seen)
    row = token_row(api, token)
    assert (row.expires_at - row.created_at).total_seconds() == seconds  # exactly the policy's lifetime
    new = "another long enough password"
    assert post(api, "/signin/password_reset:confirm", {"token": token, "new_password": "short"}).status_code == 422
    assert post(api, "/signin/password_reset:confirm", {"token": token, "new_password": new}).status_code == 204
    again = post(api, "/signin/password_reset:confirm", {"token": token, "new_password": new + "!"})
    assert again.status_code == 401 and again.json()["code"] == "AUT-003"
    with bearer(api, before["access_token"]) as c:
        wait_for(lambda: c.get("/me").status_code == 401, 10, "every session to end on reset")
    assert password_signin(api, email).status_code == 401
    signed_in(password_signin(api, email, new))
    assert audit(owner, "password_reset")[0]["detail"]["sessions_ended"] >= 1


def test_password_reset_token_refused_once_expired_or_policy_off(
    api: Stack, owner: httpx.Client, mail: tuple[Mail, int]
) -> None:
    box, _port = mail
    email = new_user(api, owner)
    set_policy(owner, password_self_reset_enabled=True, password_reset_token_expires_in_seconds=MIN_RESET_SECONDS)
    ask = {"organization_id": api.org, "email": email}
    seen = len(box.messages())
    post(api, "/signin/password_reset", ask)
    token = box.link_to(email, "/console/password_reset", seen)
    expire(api, token)
    r = post(api, "/signin/password_reset:confirm", {"token": token, "new_password": "a new long password"})
    assert r.status_code == 401 and r.json()["code"] == "AUT-004"
    seen = len(box.messages())
    post(api, "/signin/password_reset", ask)
    token = box.link_to(email, "/console/password_reset", seen)
    set_policy(owner, password_self_reset_enabled=False)
    r = post(api, "/signin/password_reset:confirm", {"token": token, "new_password": "a new long password"})
    assert r.status_code == 403
    signed_in(password_signin(api, email))  # the password is unchanged


# ---------------------------------------------------------------- throttling


def test_throttling_slows_a_stranger_not_the_real_users_device(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    device = signed_in_device(api, email)
    # a stranger tries passwords from many addresses: 5 failures are answered, then the next waits 5 s
    answers = [password_signin(api, email, f"guess {i}").status_code for i in range(8)]
    assert answers[:5] == [401] * 5 and answers[5:] == [429, 429, 429]
    slowed = password_signin(api, email)  # even the right password, from another device, waits
    assert slowed.status_code == 429 and int(slowed.headers["Retry-After"]) >= 1
    # the same for an address nobody has (no enumeration through the throttle)
    ghost = f"ghost-{time.monotonic_ns()}@example.com"
    ghost_answers = [password_signin(api, ghost, "x").status_code for _ in range(6)]
    assert ghost_answers == [401] * 5 + [429]
    # the real user's device is not slowed
    signed_in(password_signin(api, email, device_token=device))
    assert any(e["detail"]["reason"] == "throttled" for e in audit(owner, "signin_failure"))


def test_throttling_counts_the_account_however_its_address_is_typed(
    api: Stack, owner: httpx.Client, mail: tuple[Mail, int]
) -> None:
    """Accounts match case-insensitively and without surrounding spaces, so the throttle must count
    them so too (outside attacker: ``Viewer@Example.com`` and ``"viewer@example.com "`` had fresh
    buckets after ``viewer@example.com`` reached 429, and the right password then signed in)."""
    email = new_user(api, owner)
    variants = [email.upper(), f"{email} ", f"\t{email.title()}\u00a0"]
    answers = [password_signin(api, email, f"guess {i}").status_code for i in range(6)]
    assert answers[:5] == [401] * 5 and answers[5] == 429
    for variant in variants:
        r = password_signin(api, variant)
        assert r.status_code == 429, (variant, r.text)
    # the sign-in e-mails likewise (3 sent, then a wait), however the address is typed
    set_policy(owner, magic_link_enabled=True)
    try:
        ask = {"organization_id": api.org}
        typed = [email, *variants, f" {email.upper()}"]
        codes = [post(api, "/signin/magic_link", {**ask, "email": e}).status_code for e in typed]
        assert codes == [202, 202, 202, 429, 429], codes
    finally:
        set_policy(owner)


def signed_in_device(api: Stack, email: str) -> str:
    body = password_signin(api, email).json()
    token: str = body["device_token"]
    assert token.startswith("tsd_")
    return token


def test_throttling_per_address(api: Stack, owner: httpx.Client) -> None:
    """One address trying many accounts is slowed after 20 failures (the 21st attempt waits), on every account."""
    email = new_user(api, owner)
    address = new_address()
    codes = [
        password_signin(api, f"spray{i}-{time.monotonic_ns()}@example.com", "x", address=address).status_code
        for i in range(21)
    ]
    assert codes[:20] == [401] * 20 and codes[20] == 429
    assert password_signin(api, email, address=address).status_code == 429
    signed_in(password_signin(api, email))  # from another address


def test_signin_methods_shows_the_policy(api: Stack, owner: httpx.Client, anon: httpx.Client) -> None:
    set_policy(owner, magic_link_enabled=True, password_login_enabled=False)
    assert anon.get(f"/organizations/{api.org}/signin_methods").json() == {
        "password": False,
        "magic_link": True,
        "password_reset": False,
        "totp": True,
        "webauthn": True,
        "enforce_mfa": False,
    }


def test_audit_entries_never_hold_a_secret(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    password_signin(api, email, "a wrong password typed")
    session = signed_in(password_signin(api, email))
    text = str(owner.get("/audit_log", params={"limit": 500}).json())
    for secret in (PASSWORD, "a wrong password typed", session["access_token"], session["csrf_token"]):
        assert secret not in text


def test_invitation_needs_the_permission_and_works_once(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner, password=None)
    user_id = next(u["id"] for u in owner.get("/users", params={"limit": 500}).json()["items"] if u["email"] == email)
    viewer = signed_in(password_signin(api, new_user(api, owner)))
    with bearer(api, viewer["access_token"]) as c:
        assert c.post(f"/organizations/{api.org}/users/{user_id}/signin_invitation").status_code == 403
    token = owner.post(f"/users/{user_id}/signin_invitation").json()["token"]
    assert post(api, "/signin/invitation:accept", {"token": token, "new_password": PASSWORD}).status_code == 204
    assert post(api, "/signin/invitation:accept", {"token": token, "new_password": PASSWORD}).status_code == 401
    signed_in(password_signin(api, email))


def test_bootstrap_owner_can_sign_in(api: Stack) -> None:
    link = api.credentials["owner_signin_link"]
    token = parse_qs(urlparse(link).query)["token"][0]
    assert post(api, "/signin/invitation:accept", {"token": token, "new_password": PASSWORD}).status_code == 204
    session = signed_in(password_signin(api, api.credentials["owner_email"]))
    with bearer(api, session["access_token"]) as c:
        assert c.post(f"/organizations/{api.org}/service_accounts", json={"name": "by-owner"}).status_code == 201
