"""Workload-identity federation against a real local HTTPS OIDC issuer and a real API process:
credentials, the RFC 8693 exchange, every bad subject token, JWKS caching, rate limits."""

from __future__ import annotations

import base64
import hmac
import json
import secrets
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.shared.ids import new_id
from app.store.models import FederatedCredential
from devstack.kafka import LocalKafka
from tests.support import oidc_issuer as idp
from tests.support.db import in_db
from tests.support.stack import Stack, wait_for

pytestmark = pytest.mark.kafka

AUDIENCE = "https://tocsin.test"
GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
ISSUERS = ("ci", "cloud", "roles", "other")


@dataclass
class Fed:
    stack: Stack
    issuer: idp.OidcIssuer
    owner: httpx.Client
    publisher_sa: str
    tenants: tuple[str, str]

    def credential(self, issuer: str, subject_filter: str, *, sa: str | None = None, **extra: Any) -> str:
        body = {
            "display_name": f"cred {uuid.uuid4().hex[:6]}",
            "issuer_url": self.issuer.issuer_url(issuer),
            "subject_filter": subject_filter,
            "audience": AUDIENCE,
            **extra,
        }
        r = self.owner.post(f"/service_accounts/{sa or self.publisher_sa}/federated_credentials", json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def exchange(self, credential: str, token: str, **form: str) -> httpx.Response:
        data = {"grant_type": GRANT, "subject_token_type": JWT_TYPE, "subject_token": token, **form}
        return httpx.post(f"{self.stack.base_url}/auth/workload-identity/{credential}/token", data=data, timeout=10)

    def publish(self, token: str) -> int:
        with self.stack.client(token) as c:
            return c.post("/workflow_topics/fed/publish", json={"status": "ACTUAL", "data": {}}).status_code


@pytest.fixture(scope="module")
def fed(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fed]:
    issuer = idp.OidcIssuer(tmp_path_factory.mktemp("oidc"), issuers=ISSUERS).start()
    tenants = issuer.add_managed_identity_tenant("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")
    stack = Stack(
        tmp_path_factory.mktemp("fed"),
        kafka.bootstrap,
        extra_env={
            "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
            "TOCSIN_OIDC_CA_FILE": issuer.ca_file,
            "TOCSIN_EXCHANGE_RATE_PER_CLIENT": "100000",
            "TOCSIN_EXCHANGE_RATE_PER_CREDENTIAL": "100000",
            "TOCSIN_EXCHANGE_BURST": "100000",
            "TOCSIN_EXCHANGE_FAILURE_RATE_PER_CLIENT": "100000",
            "TOCSIN_EXCHANGE_FAILURE_BURST": "100000",
        },
    )
    stack.bootstrap()
    stack.start_api()
    owner = stack.client()
    assert owner.post("/workflow_topics", json={"key": "fed"}).status_code == 201
    sa = owner.post("/service_accounts", json={"name": "ci-publisher"}).json()["id"]
    org = f"crn:tocsin:organizations:{stack.org}"
    owner.put(f"/service_accounts/{sa}/iam", json={"bindings": [{"resource": org, "role_id": "workflow_publisher"}]})
    try:
        yield Fed(stack, issuer, owner, sa, tenants)
    finally:
        owner.close()
        stack.stop()
        issuer.stop()


PROVIDERS: list[tuple[str, str, str, Callable[[], dict[str, Any]], str | None]] = [
    ("branch", "ci", "repo:o/r:ref:refs/heads/main", lambda: idp.repository_workflow_claims(), None),
    (
        "environment",
        "ci",
        "repo:o/r:environment:prod",
        lambda: idp.repository_workflow_claims(environment="prod"),
        'environment == "prod" && repository_owner == "o"',
    ),
    ("pull request", "ci", "repo:o/r:pull_request", lambda: idp.repository_workflow_claims(pull_request=True), None),
    (
        "tags",
        "ci",
        "repo:o/r:ref:refs/tags/*",
        lambda: idp.repository_workflow_claims(ref="refs/tags/v1.2.3"),
        'ref.startsWith("refs/tags/v")',
    ),
    (
        "cloud sa with email",
        "cloud",
        "104857392019283746501",
        lambda: idp.cloud_service_account_claims(email="deploy@proj.iam.example"),
        'email.endsWith("@proj.iam.example")',
    ),
    ("cloud sa without email", "cloud", "104857392019283746501", lambda: idp.cloud_service_account_claims(), None),
    ("role arn", "roles", "arn:aws:iam::123456789012:role/deploy", lambda: idp.role_arn_claims(), None),
    (
        "role arn wildcard",
        "roles",
        "arn:aws:iam::123456789012:role/*",
        lambda: idp.role_arn_claims(role="build", tags={"team": "sre"}),
        '["https://aws.amazon.com/tags"]["principal_tags"]["team"] in ["sre", "ops"]',
    ),
]


@pytest.mark.parametrize(
    ("name", "issuer", "subject_filter", "claims", "condition"), PROVIDERS, ids=[p[0] for p in PROVIDERS]
)
def test_provider_tokens_exchange_for_a_one_hour_token_that_publishes(
    fed: Fed, name: str, issuer: str, subject_filter: str, claims: Callable[[], dict[str, Any]], condition: str | None
) -> None:
    extra = {"attribute_condition": condition} if condition else {}
    cred = fed.credential(issuer, subject_filter, **extra)
    token = fed.issuer.mint(issuer, {**claims(), "aud": AUDIENCE})
    r = fed.exchange(cred, f"  {token}\n", audience="ignored", scope="ignored")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"access_token", "issued_token_type", "token_type", "expires_in"}
    assert (body["issued_token_type"], body["token_type"], body["expires_in"]) == (
        "urn:ietf:params:oauth:token-type:access_token",
        "Bearer",
        3600,
    )
    assert fed.publish(body["access_token"]) == 202


@pytest.mark.parametrize("form", ["v2.0", "v1.0"])
def test_managed_identity_with_both_tenant_issuer_forms(fed: Fed, form: str) -> None:
    name = fed.tenants[0] if form == "v2.0" else fed.tenants[1]
    assert fed.issuer.issuer_url(name).endswith("/v2.0" if form == "v2.0" else "/")
    claims = idp.managed_identity_claims()
    cred = fed.credential(name, claims["sub"], attribute_condition=f'tid == "{claims["tid"]}"')
    r = fed.exchange(cred, fed.issuer.mint(name, {**claims, "aud": AUDIENCE}))
    assert r.status_code == 200, r.text


def test_cloud_token_without_email_fails_an_email_condition(fed: Fed) -> None:
    cred = fed.credential("cloud", "104857392019283746501", attribute_condition='email == "a@b.c"')
    r = fed.exchange(cred, fed.issuer.mint("cloud", {**idp.cloud_service_account_claims(), "aud": AUDIENCE}))
    assert (r.status_code, r.json()["error"]) == (403, "access_denied")


def _bad_tokens(fed: Fed) -> list[tuple[str, str, int, str]]:
    """(case, token, status, error) — at least 40 variants."""
    iss = fed.issuer
    good = {**idp.repository_workflow_claims(), "aud": AUDIENCE}
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    kid = iss.current_kid("ci")
    url = iss.issuer_url("ci")
    now = int(time.time())
    bad: list[tuple[str, str, int, str]] = [
        ("alg none", idp.unsigned_token({**good, "iss": url, "exp": now + 300}), 401, "invalid_token"),
        (
            "alg none with kid",
            idp.unsigned_token({**good, "iss": url, "exp": now + 300}, headers={"kid": kid}),
            401,
            "invalid_token",
        ),
        (
            "HS256 key confusion",
            idp.key_confusion_token(iss.public_pem("ci"), {**good, "iss": url, "exp": now + 300}, kid=kid),
            401,
            "invalid_token",
        ),
        (
            "HS384 key confusion",
            idp.key_confusion_token(iss.public_pem("ci"), {**good, "iss": url, "exp": now + 300}, kid=kid, alg="HS384"),
            401,
            "invalid_token",
        ),
        (
            "HS512 key confusion",
            idp.key_confusion_token(iss.public_pem("ci"), {**good, "iss": url, "exp": now + 300}, kid=kid, alg="HS512"),
            401,
            "invalid_token",
        ),
        ("foreign RSA key, issuer kid", iss.mint("ci", good, key=rsa_key, kid=kid), 401, "invalid_token"),
        (
            "foreign EC key, issuer kid",
            iss.mint("ci", good, alg="ES256", key=ec_key, kid=iss.current_kid("ci", "ES256")),
            401,
            "invalid_token",
        ),
        (
            "RS256 header on the EC key",
            iss.mint("ci", good, alg="ES256", headers={"alg": "RS256"}),
            401,
            "invalid_token",
        ),
        ("ES256 header on the RSA key", iss.mint("ci", good, headers={"alg": "ES256"}), 401, "invalid_token"),
        ("unknown kid", iss.mint("ci", good, kid="nope"), 401, "invalid_token"),
        ("kid is a number", iss.mint("ci", good, headers={"kid": 7}), 401, "invalid_token"),
        ("no kid with two keys", iss.mint("ci", good, headers={"kid": None}), 401, "invalid_token"),
        ("another issuer's key", iss.mint("other", {**good, "iss": url}), 401, "invalid_token"),
        ("expired", iss.mint("ci", good, now=now - 3600), 401, "invalid_token"),
        ("expired beyond leeway", iss.mint("ci", good, lifetime=-60), 401, "invalid_token"),
        ("missing exp", iss.mint("ci", good, omit=("exp",)), 401, "invalid_token"),
        ("exp not a number", iss.mint("ci", {**good, "exp": "tomorrow"}), 401, "invalid_token"),
        ("future nbf", iss.mint("ci", {**good, "nbf": now + 600}), 401, "invalid_token"),
        ("future iat", iss.mint("ci", {**good, "iat": now + 600}), 401, "invalid_token"),
        ("missing iss", iss.mint("ci", good, omit=("iss",)), 401, "invalid_token"),
        ("issuer trailing slash", iss.mint("ci", {**good, "iss": url + "/"}), 401, "invalid_token"),
        ("issuer http", iss.mint("ci", {**good, "iss": url.replace("https", "http")}), 401, "invalid_token"),
        ("issuer case", iss.mint("ci", {**good, "iss": url.upper()}), 401, "invalid_token"),
        ("issuer prefix", iss.mint("ci", {**good, "iss": url[:-1]}), 401, "invalid_token"),
        ("issuer suffix", iss.mint("ci", {**good, "iss": url + "x"}), 401, "invalid_token"),
        ("issuer as list", iss.mint("ci", {**good, "iss": [url]}), 401, "invalid_token"),
        ("another issuer", iss.mint("ci", {**good, "iss": iss.issuer_url("other")}), 401, "invalid_token"),
        ("wrong audience", iss.mint("ci", {**good, "aud": "https://elsewhere"}), 401, "invalid_token"),
        ("audience case", iss.mint("ci", {**good, "aud": AUDIENCE.upper()}), 401, "invalid_token"),
        ("audience list without ours", iss.mint("ci", {**good, "aud": ["a", "b"]}), 401, "invalid_token"),
        ("missing audience", iss.mint("ci", good, omit=("aud",)), 401, "invalid_token"),
        ("crit header", iss.mint("ci", good, headers={"crit": ["exp"]}), 401, "invalid_token"),
        ("bad base64 header", idp.corrupt_segment(iss.mint("ci", good), 0), 401, "invalid_token"),
        ("bad base64 payload", idp.corrupt_segment(iss.mint("ci", good), 1), 401, "invalid_token"),
        ("bad base64 signature", idp.corrupt_segment(iss.mint("ci", good), 2), 401, "invalid_token"),
        ("tampered payload", _tamper(iss.mint("ci", good)), 401, "invalid_token"),
        ("two segments", ".".join(iss.mint("ci", good).split(".")[:2]), 401, "invalid_token"),
        ("not a JWT", "hello", 401, "invalid_token"),
        ("JSON header not object", idp.compact(b"[1]", good), 401, "invalid_token"),
        ("oversize", iss.mint("ci", idp.padded(good, 20_000)), 401, "invalid_token"),
        (
            "subject outside filter",
            iss.mint("ci", {**good, "sub": "repo:o/other:ref:refs/heads/main"}),
            403,
            "access_denied",
        ),
        ("subject prefix only", iss.mint("ci", {**good, "sub": "repo:o/r:ref:refs/heads/mai"}), 403, "access_denied"),
        ("subject not a string", iss.mint("ci", {**good, "sub": 42}), 401, "invalid_token"),
        ("missing subject", iss.mint("ci", good, omit=("sub",)), 401, "invalid_token"),
    ]
    return bad


def _tamper(token: str) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "repo:o/r:ref:refs/heads/main"
    claims["repository_owner"] = "attacker"
    return ".".join([header, idp.b64url(json.dumps(claims).encode()), signature])


def test_at_least_forty_bad_subject_tokens_are_each_refused_with_the_spec_error(fed: Fed) -> None:
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main", attribute_condition='repository_owner == "o"')
    cases = _bad_tokens(fed)
    assert len(cases) >= 40
    wrong = []
    for case, token, status, error in cases:
        r = fed.exchange(cred, token)
        if (r.status_code, r.json().get("error")) != (status, error) or "access_token" in r.text:
            wrong.append(f"{case}: {r.status_code} {r.text[:120]}")
    assert wrong == []
    failed = fed.owner.get(f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}/exchanges").json()
    checks = {a["failed_check"] for a in failed["items"]}
    assert {"subject filter", "expiry", "issuer", "audience", "signature: unknown key"} <= checks
    counted = [a for a in failed["items"] if a["failed_check"] == "malformed"]
    assert len(counted) == 1 and counted[0]["count"] > 1, "failures before the signature: one row, a count"


def _respellings(token: str) -> list[tuple[str, str]]:
    """Other spellings of the same bytes a lenient base64 decoder accepts: characters outside
    base64url skipped, padding added, stray low bits in the last character."""
    out = []
    parts = token.split(".")
    for index, name in enumerate(("header", "payload", "signature")):
        segment = parts[index]
        for label, respelled in [
            ("'!' inserted", segment[:5] + "!" + segment[5:]),
            ("'~' appended", segment + "~"),
            ("space inserted", segment[:3] + " " + segment[3:]),
            ("'=' padding", segment + "=" * (-len(segment) % 4 or 4)),
            ("'+' for '-'", segment.replace("-", "+") if "-" in segment else segment[:-1] + "+"),
        ]:
            out.append((f"{name}: {label}", ".".join([*parts[:index], respelled, *parts[index + 1 :]])))
        last = segment[-1]
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        if len(segment) % 4:  # the last character carries unused low bits: flip one of them
            other = alphabet[alphabet.index(last) ^ 1]
            out.append(
                (
                    f"{name}: non-canonical last character",
                    ".".join([*parts[:index], segment[:-1] + other, *parts[index + 1 :]]),
                )
            )
    return out


def test_subject_tokens_have_one_spelling(fed: Fed) -> None:
    """Issue 16, item 9: the JWS segments are decoded strictly; only the token as signed passes."""
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main")
    token = fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE})
    accepted = [case for case, respelled in _respellings(token) if fed.exchange(cred, respelled).status_code != 401]
    assert accepted == []
    assert fed.exchange(cred, token).status_code == 200


def test_subject_token_lifetime_is_capped(fed: Fed) -> None:
    """Issue 16, item 9: exp - iat (or exp - now) over TOCSIN_MAX_SUBJECT_TOKEN_LIFETIME_SECONDS (24 h) is refused."""
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main")
    good = {**idp.repository_workflow_claims(), "aud": AUDIENCE}
    now = int(time.time())
    cases = {
        "exp 10^12": fed.issuer.mint("ci", {**good, "exp": 10**12}),
        "25 h": fed.issuer.mint("ci", good, lifetime=25 * 3600),
        "25 h without iat": fed.issuer.mint("ci", good, lifetime=25 * 3600, omit=("iat",)),
        "issued 2 days ago, 1 h left": fed.issuer.mint("ci", {**good, "iat": now - 2 * 86400, "exp": now + 3600}),
    }
    answers = {case: fed.exchange(cred, token) for case, token in cases.items()}
    assert {case: r.status_code for case, r in answers.items()} == dict.fromkeys(cases, 401)
    assert all(r.json()["error"] == "invalid_token" for r in answers.values())
    assert fed.exchange(cred, fed.issuer.mint("ci", good, lifetime=23 * 3600)).status_code == 200
    path = f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}/exchanges"
    wait_for(
        lambda: any((a["failed_check"] or "").startswith("lifetime") for a in fed.owner.get(path).json()["items"]),
        10,
        "the exchange log to name the lifetime check",
    )


def test_a_false_condition_is_403_and_the_log_names_the_clause(fed: Fed) -> None:
    cred = fed.credential("ci", "repo:o/r:*", attribute_condition='repository_owner == "o" && ref == "refs/heads/prod"')
    r = fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))
    assert (r.status_code, r.json()["error"]) == (403, "access_denied")
    assert "ref" not in r.json()["error_description"]
    log = fed.owner.get(f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}/exchanges").json()
    assert log["items"][0]["failed_check"] == 'condition: ref == "refs/heads/prod"'


@pytest.mark.parametrize(
    ("form", "content_type"),
    [
        ({"grant_type": "client_credentials", "subject_token_type": JWT_TYPE, "subject_token": "x"}, None),
        (
            {
                "grant_type": GRANT,
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "subject_token": "x",
            },
            None,
        ),
        ({"grant_type": GRANT, "subject_token_type": JWT_TYPE}, None),
        ({"grant_type": GRANT, "subject_token_type": JWT_TYPE, "subject_token": "   "}, None),
        ({"grant_type": GRANT, "subject_token_type": JWT_TYPE, "subject_token": "x"}, "application/json"),
    ],
)
def test_bad_exchange_requests_are_400_invalid_request(
    fed: Fed, form: dict[str, str], content_type: str | None
) -> None:
    cred = fed.credential("ci", "repo:o/r:*")
    url = f"{fed.stack.base_url}/auth/workload-identity/{cred}/token"
    r = httpx.post(url, json=form) if content_type else httpx.post(url, data=form)
    assert (r.status_code, r.json()["error"]) == (400, "invalid_request")
    assert set(r.json()) == {"error", "error_description"}


def test_a_body_over_the_api_cap_is_an_rfc6749_invalid_request_too(fed: Fed) -> None:
    """Found from outside: a form over the API's body cap (256 KiB, refused before any route runs)
    was answered 413 in the API's own error shape, where this endpoint answers RFC 6749 §5.2."""
    cred = fed.credential("ci", "repo:o/r:*")
    url = f"{fed.stack.base_url}/auth/workload-identity/{cred}/token"
    form = {"grant_type": GRANT, "subject_token_type": JWT_TYPE, "subject_token": "x" * 300_000}
    r = httpx.post(url, data=form)
    assert (r.status_code, r.json()) == (
        400,
        {"error": "invalid_request", "error_description": "the body is too large"},
    )


def test_unknown_and_inactive_credentials_are_answered_like_a_bad_token(fed: Fed) -> None:
    """Issue 16, item 10: a stranger cannot tell which credential ids exist (before: 400 for an
    unknown or inactive one, 401 for an existing one)."""
    cred = fed.credential("ci", "repo:o/r:*")
    active = fed.credential("ci", "repo:o/r:*")
    path = f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}"
    assert fed.owner.patch(path, json={"status": "INACTIVE"}).status_code == 200
    token = fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE})
    inactive, unknown = fed.exchange(cred, token), fed.exchange("cred_unknown", token)
    garbage = fed.exchange(active, "not.a.token")
    assert inactive.status_code == unknown.status_code == garbage.status_code == 401
    assert inactive.json() == unknown.json() == garbage.json()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("issuer_url", "http://localhost/ci", "OIDC discovery failed"),
        ("issuer_url", "https://[abc/x", "OIDC discovery failed"),
        ("subject_filter", "*", "bare"),
        ("subject_filter", "repo:*:ref:*", "once"),
        ("attribute_condition", 'sub == "a" &&', "syntax error"),
        ("attribute_condition", "x" * 4097, "4096"),
    ],
)
def test_credential_fields_are_validated_at_creation(fed: Fed, field: str, value: str, message: str) -> None:
    body = {
        "display_name": "bad",
        "issuer_url": fed.issuer.issuer_url("ci"),
        "subject_filter": "repo:o/r:*",
        field: value,
    }
    r = fed.owner.post(f"/service_accounts/{fed.publisher_sa}/federated_credentials", json=body)
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert message in r.text


def test_condition_syntax_error_points_at_the_position(fed: Fed) -> None:
    body = {
        "display_name": "bad",
        "issuer_url": fed.issuer.issuer_url("ci"),
        "subject_filter": "repo:o/r:*",
        "attribute_condition": 'sub == "a" && == 1',
    }
    r = fed.owner.post(f"/service_accounts/{fed.publisher_sa}/federated_credentials", json=body)
    assert r.json()["details"]["fields"][0]["position"] > 0


@pytest.mark.parametrize("override", [{"issuer": "https://evil.example/ci"}, {"jwks_uri": "http://localhost/jwks"}])
def test_discovery_must_name_the_issuer_exactly_and_an_https_jwks(fed: Fed, override: dict[str, str]) -> None:
    fed.issuer.set_discovery("other", **override)
    try:
        body = {"display_name": "x", "issuer_url": fed.issuer.issuer_url("other"), "subject_filter": "a"}
        r = fed.owner.post(f"/service_accounts/{fed.publisher_sa}/federated_credentials", json=body)
        assert (r.status_code, r.json()["code"]) == (422, "VAL-001")
    finally:
        fed.issuer.set_discovery("other")


def test_issuer_subject_filter_and_audience_are_immutable(fed: Fed) -> None:
    cred = fed.credential("ci", "repo:o/r:*")
    path = f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}"
    for field in ("issuer_url", "subject_filter", "audience"):
        r = fed.owner.patch(path, json={field: "changed"})
        assert r.status_code == 422 and "delete" in r.json()["message"]
    assert fed.owner.patch(path, json={"display_name": "renamed"}).json()["display_name"] == "renamed"


def test_audience_defaults_to_the_site_address(fed: Fed) -> None:
    """The site address is the installation's own (TOCSIN_PUBLIC_URL, which the test stack sets to
    its API's address): no longer a built-in one every installation shared (issue 30, item 2)."""
    body = {"display_name": "d", "issuer_url": fed.issuer.issuer_url("ci"), "subject_filter": "repo:o/r:*"}
    created = fed.owner.post(f"/service_accounts/{fed.publisher_sa}/federated_credentials", json=body).json()
    assert created["audience"] == fed.stack.base_url != "http://127.0.0.1:8080"


def test_static_and_federated_tokens_work_and_are_revoked_independently(fed: Fed) -> None:
    static = fed.owner.post(f"/service_accounts/{fed.publisher_sa}/access_tokens", json={}).json()
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main")
    federated = fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))
    token = federated.json()["access_token"]
    assert fed.publish(static["access_token"]) == fed.publish(token) == 202
    fed.owner.delete(f"/service_accounts/{fed.publisher_sa}/access_tokens/{static['id']}")
    assert fed.publish(static["access_token"]) == 401
    assert fed.publish(token) == 202
    fed.owner.patch(f"/service_accounts/{fed.publisher_sa}/federated_credentials/{cred}", json={"status": "INACTIVE"})
    started = time.monotonic()
    wait_for(lambda: fed.publish(token) == 401, 5, "the federated token to stop", interval=0.02)
    assert time.monotonic() - started < 1.0


def test_federated_token_stops_when_the_account_is_inactive_or_deleted(fed: Fed) -> None:
    sa = fed.owner.post("/service_accounts", json={"name": "short-lived"}).json()["id"]
    org = f"crn:tocsin:organizations:{fed.stack.org}"
    fed.owner.put(
        f"/service_accounts/{sa}/iam", json={"bindings": [{"resource": org, "role_id": "workflow_publisher"}]}
    )
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main", sa=sa)
    mint = lambda: fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))  # noqa: E731
    token = mint().json()["access_token"]
    assert fed.publish(token) == 202
    fed.owner.patch(f"/service_accounts/{sa}", json={"status": "INACTIVE"})
    assert fed.publish(token) == 401
    assert mint().status_code == 401  # an inactive account's credential: answered like a bad token
    fed.owner.patch(f"/service_accounts/{sa}", json={"status": "ACTIVE"})
    assert fed.publish(token) == 202
    fed.owner.delete(f"/service_accounts/{sa}")
    assert fed.publish(token) == 401
    assert fed.owner.get(f"/service_accounts/{sa}/federated_credentials/{cred}").status_code == 404


def test_federated_token_has_exactly_the_accounts_permissions(fed: Fed) -> None:
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main")
    token = fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))
    with fed.stack.client(token.json()["access_token"]) as c:
        assert c.get("/workflow_topics/fed").status_code == 200
        assert c.get("/incidents").json()["code"] == "IAM-001"
        assert c.post("/workflow_topics", json={"key": "x"}).json()["code"] == "IAM-001"


def test_attaching_a_credential_to_a_more_powerful_account_is_refused(fed: Fed) -> None:
    org = f"crn:tocsin:organizations:{fed.stack.org}"
    role = fed.owner.post(
        "/iam/roles",
        json={
            "name": "cred-admin",
            "policies": [{"permission_id": "organization.service_account.federated_credential:*", "effect": "allow"}],
        },
    ).json()["id"]
    admin = fed.owner.post("/service_accounts", json={"name": "cred-admin"}).json()["id"]
    fed.owner.put(f"/service_accounts/{admin}/iam", json={"bindings": [{"resource": org, "role_id": role}]})
    admin_token = fed.owner.post(f"/service_accounts/{admin}/access_tokens", json={}).json()["access_token"]
    body = {"display_name": "x", "issuer_url": fed.issuer.issuer_url("ci"), "subject_filter": "repo:o/r:*"}
    with fed.stack.client(admin_token) as c:
        r = c.post(f"/service_accounts/{fed.publisher_sa}/federated_credentials", json=body)
    assert (r.status_code, r.json()["code"]) == (403, "IAM-002")


def test_editing_a_credential_to_widen_who_becomes_a_more_powerful_account_is_refused(fed: Fed) -> None:
    """Reactivating a credential, or changing or dropping its condition, passes the act-as guard
    that creation passes; narrowing it and renaming it do not need to."""
    org = f"crn:tocsin:organizations:{fed.stack.org}"
    powerful = fed.owner.post("/service_accounts", json={"name": "powerful-fed"}).json()["id"]
    fed.owner.put(f"/service_accounts/{powerful}/iam", json={"bindings": [{"resource": org, "role_id": "owner"}]})
    cred = fed.credential(
        "ci", "repo:o/r:ref:refs/heads/main", sa=powerful, status="INACTIVE", attribute_condition='ref == "none"'
    )
    role = fed.owner.post(
        "/iam/roles",
        json={
            "name": "cred-editor",
            "policies": [
                {"permission_id": "organization.service_account.federated_credential:update", "effect": "allow"}
            ],
        },
    ).json()["id"]
    editor = fed.owner.post("/service_accounts", json={"name": "cred-editor"}).json()["id"]
    fed.owner.put(f"/service_accounts/{editor}/iam", json={"bindings": [{"resource": org, "role_id": role}]})
    token = fed.owner.post(f"/service_accounts/{editor}/access_tokens", json={}).json()["access_token"]
    path = f"/service_accounts/{powerful}/federated_credentials/{cred}"
    with fed.stack.client(token) as c:
        for widening in (
            {"status": "ACTIVE"},
            {"attribute_condition": None},
            {"attribute_condition": 'ref != "none"'},
            {"display_name": "renamed", "status": "ACTIVE"},
        ):
            r = c.patch(path, json=widening)
            assert (r.status_code, r.json()["code"]) == (403, "IAM-002"), (widening, r.text)
        for harmless in ({"display_name": "renamed"}, {"status": "INACTIVE"}, {"attribute_condition": 'ref == "none"'}):
            r = c.patch(path, json=harmless)
            assert r.status_code == 200, (harmless, r.text)
    stored = fed.owner.get(path).json()
    assert (stored["status"], stored["attribute_condition"]) == ("INACTIVE", 'ref == "none"')
    minted = fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))
    assert minted.status_code == 401  # still INACTIVE: nobody became the owner account
    assert fed.owner.patch(path, json={"status": "ACTIVE", "attribute_condition": None}).status_code == 200


def test_unknown_kids_cause_at_most_one_jwks_fetch_per_minute_and_known_keys_survive_jwks_outage(fed: Fed) -> None:
    cred = fed.credential("roles", "arn:aws:iam::123456789012:role/*")
    good = fed.issuer.mint("roles", {**idp.role_arn_claims(), "aud": AUDIENCE})
    assert fed.exchange(cred, good).status_code == 200
    before = fed.issuer.jwks_fetches("roles")
    claims = {**idp.role_arn_claims(), "aud": AUDIENCE}
    with httpx.Client(timeout=10) as client:
        for _ in range(1000):
            r = client.post(
                f"{fed.stack.base_url}/auth/workload-identity/{cred}/token",
                data={
                    "grant_type": GRANT,
                    "subject_token_type": JWT_TYPE,
                    "subject_token": fed.issuer.mint("roles", claims, kid=uuid.uuid4().hex),
                },
            )
            assert r.status_code == 401
    assert fed.issuer.jwks_fetches("roles") - before <= 1
    fed.issuer.set_jwks_down("roles")
    try:
        assert fed.exchange(cred, fed.issuer.mint("roles", claims)).status_code == 200
    finally:
        fed.issuer.set_jwks_down("roles", False)


def test_exchange_is_rate_limited_with_retry_after(
    kafka: LocalKafka, fed: Fed, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stack = Stack(
        tmp_path_factory.mktemp("ratelimit"),
        kafka.bootstrap,
        extra_env={
            "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
            "TOCSIN_OIDC_CA_FILE": fed.issuer.ca_file,
            "TOCSIN_EXCHANGE_RATE_PER_CLIENT": "0.05",  # no refill during the test, however slow the machine
            "TOCSIN_EXCHANGE_BURST": "5",
        },
    )
    stack.bootstrap()
    stack.start_api()
    try:
        url = f"{stack.base_url}/auth/workload-identity/cred_x/token"
        responses = [httpx.post(url, data={"grant_type": GRANT}) for _ in range(8)]
        codes = [r.status_code for r in responses]
        assert codes[:5] == [400] * 5 and 429 in codes[5:], codes
        limited = next(r for r in responses if r.status_code == 429)
        assert (limited.status_code, limited.json()["error"]) == (429, "temporarily_unavailable")
        assert int(limited.headers["Retry-After"]) >= 1
        # No proxy is trusted (the default): a forwarded address of the caller's choosing is no way out.
        spoofed = [
            httpx.post(url, data={"grant_type": GRANT}, headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i in range(5)
        ]
        assert spoofed == [429] * 5, spoofed
    finally:
        stack.stop()


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_client(
    kafka: LocalKafka, fed: Fed, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stack = Stack(
        tmp_path_factory.mktemp("proxied"),
        kafka.bootstrap,
        extra_env={
            "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
            "TOCSIN_OIDC_CA_FILE": fed.issuer.ca_file,
            "TOCSIN_EXCHANGE_RATE_PER_CLIENT": "0.01",
            "TOCSIN_EXCHANGE_BURST": "3",
            "TOCSIN_TRUSTED_PROXIES": "127.0.0.0/8, ::1",  # the test is the proxy
        },
    )
    stack.bootstrap()
    stack.start_api()
    try:
        with stack.client() as owner:
            sa = owner.post("/service_accounts", json={"name": "proxied"}).json()["id"]
            body = {"display_name": "d", "issuer_url": fed.issuer.issuer_url("ci"), "subject_filter": "repo:o/r:*"}
            cred = owner.post(f"/service_accounts/{sa}/federated_credentials", json=body).json()["id"]
            url = f"{stack.base_url}/auth/workload-identity/{cred}/token"

            def exchange(forwarded_for: str) -> int:
                subject = {**idp.repository_workflow_claims(), "aud": stack.base_url}
                data = {
                    "grant_type": GRANT,
                    "subject_token_type": JWT_TYPE,
                    "subject_token": fed.issuer.mint("ci", subject),
                }
                return httpx.post(url, data=data, headers={"X-Forwarded-For": forwarded_for}).status_code

            assert [exchange("198.51.100.7") for _ in range(4)] == [200, 200, 200, 429]
            assert exchange("198.51.100.8") == 200, "another client behind the proxy has its own bucket"
            # what the client wrote before the proxy's entry changes nothing
            assert exchange("1.2.3.4, 198.51.100.7") == 429
            log = f"/service_accounts/{sa}/federated_credentials/{cred}/exchanges"
            items = wait_for(lambda: (got := owner.get(log).json()["items"]) and len(got) == 4 and got, 10, "the log")
            assert sorted(a["client_address"] for a in items) == ["198.51.100.7"] * 3 + ["198.51.100.8"]
    finally:
        stack.stop()


def test_without_private_networks_a_loopback_issuer_is_refused_and_never_contacted(
    kafka: LocalKafka, fed: Fed, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stack = Stack(
        tmp_path_factory.mktemp("ssrf"), kafka.bootstrap, extra_env={"TOCSIN_OIDC_CA_FILE": fed.issuer.ca_file}
    )
    stack.bootstrap()
    stack.start_api()
    try:
        with stack.client() as owner:
            sa = owner.post("/service_accounts", json={"name": "ssrf"}).json()["id"]
            before = fed.issuer.discovery_fetches("other")
            for issuer_url in (
                fed.issuer.issuer_url("other"),
                fed.issuer.issuer_url("other").replace("localhost", "127.0.0.1"),
                "https://169.254.169.254/latest",
                "https://10.0.0.1/x",
                "https://[::1]/x",
                "https://2130706433/x",
                "http://example.com/",
            ):
                r = owner.post(
                    f"/service_accounts/{sa}/federated_credentials",
                    json={"display_name": "x", "issuer_url": issuer_url, "subject_filter": "a"},
                )
                assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), issuer_url
                assert "10.0.0.1" not in r.json()["message"] and "refused" not in r.json()["message"]
            assert fed.issuer.discovery_fetches("other") == before
    finally:
        stack.stop()


def test_a_rotated_issuer_key_is_fetched_once_and_accepted(fed: Fed) -> None:
    cred = fed.credential("cloud", "104857392019283746501")
    claims = {**idp.cloud_service_account_claims(), "aud": AUDIENCE}
    assert fed.exchange(cred, fed.issuer.mint("cloud", claims)).status_code == 200
    before = fed.issuer.jwks_fetches("cloud")
    fed.issuer.rotate("cloud")
    assert fed.exchange(cred, fed.issuer.mint("cloud", claims)).status_code == 200
    assert fed.issuer.jwks_fetches("cloud") == before + 1


def _forge(key: bytes, sa: str, cred: str, org: str) -> str:
    """A ``tcf_`` token made without the exchange, as anyone who knows ``key`` could: ten years long."""
    claims = {"sa": sa, "cred": cred, "org": org, "exp": int(time.time()) + 10 * 365 * 86400, "jti": "forged"}
    payload = idp.b64url(json.dumps(claims).encode())
    return f"tcf_{payload}.{idp.b64url(hmac.digest(key, payload.encode(), 'sha256'))}"


def test_a_token_forged_with_the_old_placeholder_key_is_refused(fed: Fed) -> None:
    cred = fed.credential("ci", "repo:o/r:ref:refs/heads/main")
    genuine = fed.exchange(cred, fed.issuer.mint("ci", {**idp.repository_workflow_claims(), "aud": AUDIENCE}))
    assert fed.publish(genuine.json()["access_token"]) == 202, "the credential and the account are active"
    forged = _forge(b"dev-only-signing-key-change-me", fed.publisher_sa, cred, fed.stack.org)
    with fed.stack.client(forged) as c:
        r = c.post("/workflow_topics/fed/publish", json={"status": "ACTUAL", "data": {}})
        assert r.status_code == 401, f"the forged token was accepted: {r.status_code} {r.text}"
        assert r.json()["code"] == "AUT-003"
        assert c.get("/workflow_topics/fed").status_code == 401


def test_the_signing_key_is_created_once_kept_across_restarts_and_rotated_without_cutting_off_tokens(
    kafka: LocalKafka, fed: Fed, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stack = Stack(
        tmp_path_factory.mktemp("signing"),
        kafka.bootstrap,
        extra_env={"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true", "TOCSIN_OIDC_CA_FILE": fed.issuer.ca_file},
    )
    stack.bootstrap()
    assert not stack.signing_key_file.exists(), "the bootstrap signs nothing"
    stack.start_api()
    try:
        key = stack.signing_key_file.read_text().strip()
        assert stat.S_IMODE(stack.signing_key_file.stat().st_mode) == 0o600 and len(key) >= 32
        with stack.client() as owner:
            assert owner.post("/workflow_topics", json={"key": "fed"}).status_code == 201
            sa = owner.post("/service_accounts", json={"name": "rotating"}).json()["id"]
            org = f"crn:tocsin:organizations:{stack.org}"
            binding = {"bindings": [{"resource": org, "role_id": "workflow_publisher"}]}
            assert owner.put(f"/service_accounts/{sa}/iam", json=binding).status_code == 200
            body = {"display_name": "d", "issuer_url": fed.issuer.issuer_url("ci"), "subject_filter": "repo:o/r:*"}
            created = owner.post(f"/service_accounts/{sa}/federated_credentials", json=body)
            cred = created.json()["id"]
        subject = {**idp.repository_workflow_claims(), "aud": stack.base_url}

        def exchange() -> str:
            data = {
                "grant_type": GRANT,
                "subject_token_type": JWT_TYPE,
                "subject_token": fed.issuer.mint("ci", subject),
            }
            r = httpx.post(f"{stack.base_url}/auth/workload-identity/{cred}/token", data=data, timeout=10)
            assert r.status_code == 200, r.text
            return str(r.json()["access_token"])

        def publish(token: str) -> int:
            with stack.client(token) as c:
                return c.post("/workflow_topics/fed/publish", json={"status": "ACTUAL", "data": {}}).status_code

        before_restart = exchange()
        assert publish(before_restart) == 202
        assert publish(_forge(key.encode(), sa, cred, stack.org)) == 202, "the file holds the key that signs"

        stack.stop_api()
        stack.start_api()
        assert stack.signing_key_file.read_text().strip() == key, "a restart keeps the key"
        assert publish(before_restart) == 202, "and the tokens it signed"

        # Rotation (README): the new key signs, the old one still verifies until its tokens expired.
        new_key = secrets.token_urlsafe(32)
        stack.stop_api()
        stack._env.update({"TOCSIN_TOKEN_SIGNING_KEY": new_key, "TOCSIN_TOKEN_PREVIOUS_KEYS": key})
        stack.start_api()
        after_rotation = exchange()
        assert publish(after_rotation) == publish(before_restart) == 202
        assert publish(_forge(new_key.encode(), sa, cred, stack.org)) == 202, "signed with the new key"
        assert publish(_forge(key.encode(), sa, cred, stack.org)) == 202, "verified with the previous key"

        stack.stop_api()
        del stack._env["TOCSIN_TOKEN_PREVIOUS_KEYS"]
        stack.start_api()
        assert publish(after_rotation) == 202
        assert publish(before_restart) == 401, "the previous key dropped: its tokens are refused"
    finally:
        stack.stop()


def test_strangers_cannot_flood_the_exchange_log(stack_factory: Callable[..., Stack]) -> None:
    """Issue 16, item 10: failures before the subject token proved anything are rate limited per
    source (429 after the burst) and logged as one row per source and check with a count, so the
    owner's log keeps showing real attempts; unknown and existing credential ids answer alike."""
    stack = stack_factory(
        extra_env={
            "TOCSIN_EXCHANGE_FAILURE_RATE_PER_CLIENT": "0.01",
            "TOCSIN_EXCHANGE_FAILURE_BURST": "6",
            "TOCSIN_EXCHANGE_FAILURE_WINDOW_SECONDS": "3600",
        }
    )
    stack.bootstrap()
    stack.start_api()
    with stack.client() as owner:
        sa = owner.post("/service_accounts", json={"name": "ci"}).json()["id"]

        async def insert(session: AsyncSession) -> str:
            row = FederatedCredential(
                id=new_id("cred"),
                organization_id=stack.org,
                service_account_id=sa,
                display_name="ci",
                issuer_url="https://issuer.example.com",
                subject_filter="repo:o/r:*",
                audience=AUDIENCE,
                attribute_condition=None,
                jwks_uri="https://issuer.example.com/jwks",
                status="ACTIVE",
                created_at=datetime.now(UTC),
            )
            session.add(row)
            return row.id

        cred = in_db(stack, insert)

        def exchange(credential: str, token: str) -> httpx.Response:
            data = {"grant_type": GRANT, "subject_token_type": JWT_TYPE, "subject_token": token}
            return httpx.post(f"{stack.base_url}/auth/workload-identity/{credential}/token", data=data, timeout=10)

        unknown, existing = exchange("cred_doesnotexist", "a.b.c"), exchange(cred, "a.b.c")
        assert (unknown.status_code, unknown.json()) == (existing.status_code, existing.json())
        assert existing.status_code == 401
        answers = [exchange(cred, f"x{i}.y.z").status_code for i in range(10)]
        assert answers[:4] == [401] * 4 and set(answers[4:]) == {429}, answers
        log = owner.get(f"/service_accounts/{sa}/federated_credentials/{cred}/exchanges").json()["items"]
        assert len(log) == 1, log
        assert (log[0]["failed_check"], log[0]["count"], log[0]["client_address"]) == ("malformed", 5, "127.0.0.1")
