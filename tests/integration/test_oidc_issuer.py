"""Self-test of the local HTTPS OIDC issuer, fetched through the SSRF-safe client like the API does."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from base64 import urlsafe_b64decode
from collections.abc import AsyncIterator, Iterator
from typing import Any

import jwt
import pytest

from app.net.client import HttpClient
from app.net.errors import FetchRefused
from tests.support.oidc_issuer import (
    OidcIssuer,
    cloud_service_account_claims,
    corrupt_segment,
    key_confusion_token,
    managed_identity_claims,
    padded,
    repository_workflow_claims,
    role_arn_claims,
    unsigned_token,
)

AUDIENCE = "https://tocsin.test/workload-identity"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OidcIssuer]:
    with OidcIssuer(tmp_path_factory.mktemp("idp")) as issuer:
        yield issuer


@pytest.fixture
def name(idp: OidcIssuer) -> str:
    """A fresh issuer per test, so knobs and counters never leak between tests."""
    return idp.add_issuer(f"iss-{uuid.uuid4().hex[:8]}")


@pytest.fixture
async def fetcher(idp: OidcIssuer) -> AsyncIterator[HttpClient]:
    async with HttpClient(allow_private_networks=True, ca_file=idp.ca_file) as client:
        yield client


async def _verify(fetcher: HttpClient, idp: OidcIssuer, name: str, token: str) -> dict[str, Any]:
    """Discovery -> JWKS -> PyJWK -> verified claims, the way the exchange endpoint will do it."""
    discovery = await fetcher.get_json(idp.discovery_url(name))
    jwks = await fetcher.get_json(discovery["jwks_uri"])
    kid = jwt.get_unverified_header(token)["kid"]
    jwk = next(jwt.PyJWK(k) for k in jwks["keys"] if k["kid"] == kid)
    claims: dict[str, Any] = jwt.decode(
        token, jwk, algorithms=["RS256", "ES256"], audience=AUDIENCE, issuer=discovery["issuer"]
    )
    return claims


def _segment(token: str, index: int) -> dict[str, Any]:
    part = token.split(".")[index]
    decoded: dict[str, Any] = json.loads(urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decoded


async def test_discovery_issuer_equals_issuer_url_and_jwks_uri_is_https_on_same_server(
    idp: OidcIssuer, name: str, fetcher: HttpClient
) -> None:
    doc = await fetcher.get_json(idp.discovery_url(name))
    assert doc["issuer"] == idp.issuer_url(name) == f"https://localhost:{idp.port}/{name}"
    assert doc["jwks_uri"].startswith(f"https://localhost:{idp.port}/")
    jwks = await fetcher.get_json(doc["jwks_uri"])
    assert {k["kid"] for k in jwks["keys"]} == {idp.current_kid(name, "RS256"), idp.current_kid(name, "ES256")}


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
async def test_minted_token_verifies_against_fetched_jwks(
    idp: OidcIssuer, name: str, fetcher: HttpClient, alg: str
) -> None:
    token = idp.mint(name, {"sub": "s", "aud": AUDIENCE}, alg=alg)
    claims = await _verify(fetcher, idp, name, token)
    assert claims["iss"] == idp.issuer_url(name)
    assert claims["exp"] - claims["iat"] == 300
    assert _segment(token, 0)["kid"] == idp.current_kid(name, alg)


async def test_tenant_forms_v2_and_trailing_slash_v1_serve_their_exact_issuer(
    idp: OidcIssuer, fetcher: HttpClient
) -> None:
    tenant = str(uuid.uuid4())
    v2, v1 = idp.add_managed_identity_tenant(tenant)
    assert idp.issuer_url(v2) == f"https://localhost:{idp.port}/{tenant}/v2.0"
    assert idp.issuer_url(v1) == f"https://localhost:{idp.port}/{tenant}/"
    # discovery strips the one trailing "/" before appending the well-known path, `issuer` keeps it
    v1_doc = await fetcher.get_json(idp.issuer_url(v1).rstrip("/") + "/.well-known/openid-configuration")
    assert v1_doc["issuer"] == idp.issuer_url(v1)
    for form in (v1, v2):
        token = idp.mint(form, {**managed_identity_claims(tenant_id=tenant), "aud": AUDIENCE})
        claims = await _verify(fetcher, idp, form, token)
        assert claims["iss"] == idp.issuer_url(form)
        assert claims["tid"] == tenant


async def test_rotation_publishes_a_new_kid_and_drops_the_old_unless_kept(
    idp: OidcIssuer, name: str, fetcher: HttpClient
) -> None:
    old = idp.current_kid(name)
    kept = idp.rotate(name, keep_old=True)
    assert kept["RSA"] != old
    kids = {k["kid"] for k in (await fetcher.get_json(idp.jwks_url(name)))["keys"]}
    assert {old, kept["RSA"]} <= kids
    fresh = idp.rotate(name)
    kids = {k["kid"] for k in (await fetcher.get_json(idp.jwks_url(name)))["keys"]}
    assert kids == {fresh["RSA"], fresh["EC"]}
    token = idp.mint(name, {"sub": "s", "aud": AUDIENCE})
    assert (await _verify(fetcher, idp, name, token))["sub"] == "s"


async def test_jwks_fetch_counter_counts_each_fetch(idp: OidcIssuer, name: str, fetcher: HttpClient) -> None:
    assert idp.jwks_fetches(name) == 0
    for _ in range(3):
        await fetcher.get_json(idp.jwks_url(name))
    assert idp.jwks_fetches(name) == 3
    await fetcher.get_json(idp.discovery_url(name))
    assert idp.discovery_fetches(name) == 1


async def test_jwks_down_answers_5xx_and_recovers(idp: OidcIssuer, name: str, fetcher: HttpClient) -> None:
    idp.set_jwks_down(name)
    with pytest.raises(FetchRefused) as refused:
        await fetcher.get_json(idp.jwks_url(name))
    assert refused.value.reason == "HTTP status 503"
    assert idp.jwks_fetches(name) == 1
    idp.set_jwks_down(name, False)
    assert (await fetcher.get_json(idp.jwks_url(name)))["keys"]


async def test_discovery_overrides_serve_wrong_issuer_and_http_jwks_uri(
    idp: OidcIssuer, name: str, fetcher: HttpClient
) -> None:
    idp.set_discovery(name, issuer=idp.issuer_url(name) + "x", jwks_uri=f"http://localhost:{idp.port}/k")
    doc = await fetcher.get_json(idp.discovery_url(name))
    assert doc["issuer"] == idp.issuer_url(name) + "x"
    assert doc["jwks_uri"].startswith("http://")
    idp.set_discovery(name)
    assert (await fetcher.get_json(idp.discovery_url(name)))["issuer"] == idp.issuer_url(name)


def test_mint_defaults_claims_and_lets_headers_and_omit_shape_the_token(idp: OidcIssuer, name: str) -> None:
    token = idp.mint(name, {"sub": "s"}, omit=("exp", "nbf"), headers={"crit": ["exp"], "kid": None}, now=1000)
    header, payload = _segment(token, 0), _segment(token, 1)
    assert header == {"alg": "RS256", "typ": "JWT", "crit": ["exp"]}
    assert payload == {"iss": idp.issuer_url(name), "iat": 1000, "sub": "s"}
    assert len(idp.mint(name, padded({"sub": "s"}, 20_000))) > 20_000


def test_malformed_builders_produce_the_attack_shapes(idp: OidcIssuer, name: str) -> None:
    claims = {"sub": "s", "aud": AUDIENCE, "iss": idp.issuer_url(name)}
    none_token = unsigned_token(claims)
    assert _segment(none_token, 0)["alg"] == "none" and none_token.endswith(".")
    pem = idp.public_pem(name)
    confused = key_confusion_token(pem, claims, kid=idp.current_kid(name))
    signing_input, _, signature = confused.rpartition(".")
    expected = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
    assert urlsafe_b64decode(signature + "=" * (-len(signature) % 4)) == expected
    assert _segment(confused, 0) == {"alg": "HS256", "typ": "JWT", "kid": idp.current_kid(name)}
    with pytest.raises(jwt.DecodeError):
        jwt.get_unverified_header(corrupt_segment(idp.mint(name, claims), 0))


def test_provider_shapes_carry_the_spec_subjects() -> None:
    assert repository_workflow_claims()["sub"] == "repo:o/r:ref:refs/heads/main"
    assert repository_workflow_claims(ref="refs/tags/v1.2.3")["sub"] == "repo:o/r:ref:refs/tags/v1.2.3"
    prod = repository_workflow_claims(environment="prod")
    assert (prod["sub"], prod["environment"], prod["repository_owner"]) == ("repo:o/r:environment:prod", "prod", "o")
    assert repository_workflow_claims(pull_request=True)["sub"] == "repo:o/r:pull_request"
    account = cloud_service_account_claims()
    assert account["sub"].isdigit() and len(account["sub"]) == 21 and "email" not in account
    assert cloud_service_account_claims(email="ci@p.iam.example")["email"] == "ci@p.iam.example"
    identity = managed_identity_claims()
    assert identity["sub"] == identity["oid"] and identity["tid"]
    assert role_arn_claims()["sub"] == "arn:aws:iam::123456789012:role/deploy"
