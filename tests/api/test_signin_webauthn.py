"""WebAuthn as a second factor against a real API process (issue 34): registration and
authentication ceremonies with a software authenticator (EC P-256, attestation ``none``), several
authenticators per user, the sign counter (a regressed one refused), the policy's
``webauthn_enabled``, the enrolment that ``enforce_mfa`` asks for, CSRF with the cookie."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.identity.webauthn_ceremony import RelyingParty
from devstack.kafka import LocalKafka
from tests.api import test_signin as _signin
from tests.api.test_signin import (
    audit,
    bearer,
    cookie_of,
    new_user,
    password_signin,
    post,
    set_policy,
    signed_in,
)
from tests.support.soft_authenticator import SoftAuthenticator, SoftCredential
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

# test_signin.py's fixtures (its SMTP sink, the owner's client, the policy reset per test), with an
# API of this module's own on SQLite only: the store work WebAuthn adds (one row, one conditional
# UPDATE of the counter) is the kind test_signin.py already runs on both databases, and the suite's
# time is counted
mail, owner, default_policy = _signin.mail, _signin.owner, _signin.default_policy


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, mail: tuple[Any, int]) -> Iterator[Stack]:
    env = {"TOCSIN_SMTP_PORT": str(mail[1]), "TOCSIN_TRUSTED_PROXIES": "127.0.0.1/32"}
    stack = Stack(tmp_path_factory.mktemp("webauthn"), kafka.bootstrap, extra_env=env)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


def authenticator(api: Stack) -> SoftAuthenticator:
    rp = RelyingParty.of(api.base_url)
    return SoftAuthenticator(rp.id, rp.origin)


def register(
    api: Stack, device: SoftAuthenticator, *, token: str | None = None, challenge: str | None = None, name: str = ""
) -> tuple[httpx.Response, SoftCredential]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    enrol = {"challenge": challenge} if challenge else {}
    start = post(api, "/signin/webauthn/registration:options", enrol, **headers)
    assert start.status_code == 200, start.text
    options = start.json()["public_key"]
    assert options["rp"]["id"] == device.rp_id and options["attestation"] == "none"
    answer, cred = device.create(options)
    body = {**enrol, "ceremony": start.json()["ceremony"], "credential": answer, "name": name}
    return post(api, "/signin/webauthn/registration:verify", body, **headers), cred


def webauthn_user(api: Stack, owner: httpx.Client, count: int = 1) -> tuple[str, SoftAuthenticator, str]:
    """A user with ``count`` authenticators: e-mail, the device, a password session's access token."""
    email = new_user(api, owner)
    token = signed_in(password_signin(api, email))["access_token"]
    device = authenticator(api)
    for i in range(count):
        done, _cred = register(api, device, token=token, name=f"key {i}")
        assert done.status_code == 201, done.text
        assert done.json()["signin"] is None
    return email, device, token


def assertion_step(api: Stack, email: str) -> tuple[str, dict[str, Any]]:
    first = password_signin(api, email).json()
    assert first["status"] == "second_factor_required" and "webauthn" in first["methods"], first
    options = post(api, "/signin/webauthn/authentication:options", {"challenge": first["challenge"]})
    assert options.status_code == 200, options.text
    return first["challenge"], options.json()["public_key"]


def verify(api: Stack, challenge: str, credential: dict[str, Any]) -> httpx.Response:
    return post(api, "/signin/webauthn/authentication:verify", {"challenge": challenge, "credential": credential})


def test_several_authenticators_each_sign_in_as_a_second_factor(api: Stack, owner: httpx.Client) -> None:
    email, device, token = webauthn_user(api, owner, count=2)
    with bearer(api, token) as c:
        listed = c.get("/webauthn_credentials").json()["items"]
    assert [a["name"] for a in listed] == ["key 0", "key 1"]
    for cred in device.credentials:
        challenge, options = assertion_step(api, email)
        assert len(options["allowCredentials"]) == 2 and options["rpId"] == device.rp_id
        session = signed_in(verify(api, challenge, device.get(options, cred)))
        assert session["methods"] == ["password", "webauthn"]
    assert any(e["detail"]["method"] == "password+webauthn" for e in audit(owner, "signin"))
    assert len(audit(owner, "webauthn_enrol")) >= 2


def test_sign_counter_regression_is_refused(api: Stack, owner: httpx.Client) -> None:
    email, device, _token = webauthn_user(api, owner)
    cred = device.credentials[0]
    challenge, options = assertion_step(api, email)
    signed_in(verify(api, challenge, device.get(options, cred, sign_count=5)))
    # a clone of the key that signs with a counter not above 5 is refused: equal, then lower
    for clone_count in (5, 3):
        challenge, options = assertion_step(api, email)
        r = verify(api, challenge, device.get(options, cred, sign_count=clone_count))
        assert r.status_code == 401 and r.json()["message"] == "the authenticator's answer was refused"
        assert "set-cookie" not in r.headers
    reasons = [e["detail"]["reason"] for e in audit(owner, "signin_failure") if e["detail"]["method"] == "webauthn"]
    assert reasons.count("sign_count_regression") >= 2
    challenge, options = assertion_step(api, email)
    signed_in(verify(api, challenge, device.get(options, cred, sign_count=6)))


def test_an_assertion_is_used_once_and_only_for_its_challenge(api: Stack, owner: httpx.Client) -> None:
    email, device, _token = webauthn_user(api, owner)
    challenge, options = assertion_step(api, email)
    answer = device.get(options)
    signed_in(verify(api, challenge, answer))
    # replayed into a new step (whose options were asked for: another challenge)
    challenge, _options = assertion_step(api, email)
    assert verify(api, challenge, answer).status_code == 401
    # an answer for another origin
    challenge, options = assertion_step(api, email)
    elsewhere = SoftAuthenticator(device.rp_id, "https://evil.example", device.credentials)
    assert verify(api, challenge, elsewhere.get(options)).status_code == 401
    # another user's authenticator does not answer for this one
    other_email, other_device, _ = webauthn_user(api, owner)
    challenge, options = assertion_step(api, email)
    foreign = other_device.get({**options, "allowCredentials": []}, other_device.credentials[0])
    assert verify(api, challenge, foreign).status_code == 401
    assert other_email != email


def test_enforce_mfa_enrolment_by_webauthn_completes_the_signin(api: Stack, owner: httpx.Client) -> None:
    email = new_user(api, owner)
    set_policy(owner, enforce_mfa=True)
    first = password_signin(api, email).json()
    assert first["status"] == "enrolment_required" and "webauthn" in first["methods"]
    device = authenticator(api)
    done, cred = register(api, device, challenge=first["challenge"], name="laptop")
    assert done.status_code == 201, done.text
    signin = done.json()["signin"]
    assert signin["status"] == "signed_in" and signin["session"]["methods"] == ["password", "webauthn"]
    assert "tocsin_session=" in done.headers.get("set-cookie", "")
    # the enrolment step is used up; next time the key is asked for
    assert post(api, "/signin/webauthn/registration:options", {"challenge": first["challenge"]}).status_code == 401
    challenge, options = assertion_step(api, email)
    assert signed_in(verify(api, challenge, device.get(options, cred)))["methods"] == ["password", "webauthn"]


def test_webauthn_enabled_off(api: Stack, owner: httpx.Client) -> None:
    """webauthn_enabled false: no registration, the key is not asked (the password alone signs in
    while MFA is not enforced), its ceremonies refused with the policy field named."""
    email, _device, token = webauthn_user(api, owner)
    set_policy(owner, webauthn_enabled=False)
    assert signed_in(password_signin(api, email))["methods"] == ["password"]
    fresh = signed_in(password_signin(api, email))["access_token"]
    r = post(api, "/signin/webauthn/registration:options", {}, Authorization=f"Bearer {fresh}")
    assert r.status_code == 403 and r.json()["details"] == {"method": "webauthn", "policy": "off"}
    assert token


def test_registration_with_the_cookie_needs_the_csrf_token(api: Stack, owner: httpx.Client) -> None:
    r = password_signin(api, new_user(api, owner))
    session = signed_in(r)
    cookie = {"Cookie": f"tocsin_session={cookie_of(r)}"}
    refused = httpx.post(f"{api.base_url}/v1/signin/webauthn/registration:options", json={}, headers=cookie)
    assert refused.status_code == 403 and refused.json()["details"] == {"csrf": "refused"}
    ok = httpx.post(
        f"{api.base_url}/v1/signin/webauthn/registration:options",
        json={},
        headers={**cookie, "X-CSRF-Token": session["csrf_token"]},
    )
    assert ok.status_code == 200, ok.text


def test_authenticators_are_removable_by_their_owner_only(api: Stack, owner: httpx.Client) -> None:
    email, _device, token = webauthn_user(api, owner, count=2)
    _other, _dev, other_token = webauthn_user(api, owner)
    with bearer(api, token) as c:
        first = c.get("/webauthn_credentials").json()["items"][0]["id"]
    with bearer(api, other_token) as c:
        assert c.delete(f"/webauthn_credentials/{first}").status_code == 404
    with bearer(api, token) as c:
        assert c.delete(f"/webauthn_credentials/{first}").status_code == 204
        assert len(c.get("/webauthn_credentials").json()["items"]) == 1
    assert password_signin(api, email).json()["status"] == "second_factor_required"
