"""Token exchange rate limits and log (spec: Authentication 5, "token exchange needs no
authentication and is rate limited"; issue 30, item 1): a stranger who knows a credential id
(they are public in CI files) must not lock its owner out, nor fill the owner's exchange log.

In-process: the exchange of app/identity/federation.py on a migrated SQLite database, with an
in-memory JWKS; the forged tokens carry the credential's issuer, audience and key id, signed by
another key."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import RateLimited
from app.identity import federation as federation_module
from app.identity.exchange import GRANT_TYPE, SUBJECT_TOKEN_TYPE, CredentialConfig, ExchangeFailure
from app.identity.federation import Federation
from app.identity.jwks import JwksCache
from app.identity.signing_keys import SigningKeys, generate_key
from app.settings import Settings
from app.settings.exchange import ExchangeLimits
from app.store.db import create_engine, migrate, sessionmaker
from app.store.models import ExchangeAttempt
from tests.support.oidc_issuer import compact

ISSUER = "https://issuer.test/ci"
AUDIENCE = "https://tocsin.test"
OWNER_SUBJECT = "repo:owner/app:ref:refs/heads/main"
ISSUER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
STRANGER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(ISSUER_KEY.public_key())), "kid": "k1", "use": "sig"}
CREDENTIAL = CredentialConfig(
    id="cred_owner",
    organization_id="org_owner",
    service_account_id="sa_owner",
    issuer_url=ISSUER,
    audience=AUDIENCE,
    subject_filter="repo:owner/app:*",
    jwks_uri="https://issuer.test/jwks",
    condition=None,
    active=True,
)


def _token(key: Any = ISSUER_KEY, subject: str = OWNER_SUBJECT, **header: Any) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 600}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1", **header})


def _form(token: str) -> dict[str, str]:
    return {"grant_type": GRANT_TYPE, "subject_token_type": SUBJECT_TOKEN_TYPE, "subject_token": token}


@pytest.fixture
def database(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'tocsin.db'}"
    migrate(url)
    return url


_engines: list[AsyncEngine] = []


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    while _engines:
        loop.run_until_complete(_engines.pop().dispose())
    loop.close()


def _federation(database: str, **limits: Any) -> Federation:
    """The exchange with the default limits but those given, the owner's credential known."""
    settings = Settings(database_url=database, exchange=ExchangeLimits(**limits))
    _engines.append(engine := create_engine(database))
    federation = Federation(settings, sessionmaker(engine), SigningKeys(generate_key().encode()))

    async def jwks_document(_url: str) -> dict[str, Any]:
        return {"keys": [JWK]}

    federation.jwks = JwksCache(jwks_document)
    federation.credentials.put(CREDENTIAL.id, CREDENTIAL.organization_id, CREDENTIAL)
    return federation


def _attempt(loop: asyncio.AbstractEventLoop, federation: Federation, token: str, client: str) -> int:
    """The exchange's answer as the route gives it: 200, the refusal's status, or 429."""
    try:
        loop.run_until_complete(federation.exchange(CREDENTIAL.id, _form(token), client))
    except ExchangeFailure as failure:
        return failure.status
    except RateLimited:
        return 429
    return 200


def _log(loop: asyncio.AbstractEventLoop, federation: Federation) -> list[ExchangeAttempt]:
    async def read() -> list[ExchangeAttempt]:
        await federation.flush_attempts()
        async with federation.sessions() as session:
            return list((await session.scalars(select(ExchangeAttempt))).all())

    return loop.run_until_complete(read())


def test_forged_tokens_from_many_addresses_do_not_lock_the_owner_out(
    database: str, loop: asyncio.AbstractEventLoop
) -> None:
    """The review's attack: a stranger's tokens with the credential's issuer, audience and kid, signed
    by another key, from 32 addresses until each is refused; the owner's exchange from another
    address is still issued. Before, each forged token took a token of the per-credential bucket
    before its signature was checked: the owner got 429."""
    federation = _federation(database, rate_per_credential=0.01, rate_per_client=0.01, burst=5)
    forged = _token(STRANGER_KEY)
    answers = [_attempt(loop, federation, forged, f"127.0.0.{n}") for n in range(2, 34) for _ in range(25)]
    assert answers.count(401) == 32 * 5, "each address: its burst refused, then 429"
    assert _attempt(loop, federation, _token(), "127.0.1.1") == 200


def test_forged_tokens_from_one_address_are_limited_for_that_address_only(
    database: str, loop: asyncio.AbstractEventLoop
) -> None:
    federation = _federation(database, failure_burst=5, failure_rate_per_client=0.01)
    forged = _token(STRANGER_KEY)
    assert [_attempt(loop, federation, forged, "192.0.2.7") for _ in range(7)] == [401] * 5 + [429] * 2
    assert _attempt(loop, federation, _token(), "192.0.2.7") == 429, "the address is limited, whatever it sends"
    assert _attempt(loop, federation, _token(), "192.0.2.8") == 200


def test_tokens_of_the_issuer_for_another_subject_do_not_lock_the_owner_out(
    database: str, loop: asyncio.AbstractEventLoop
) -> None:
    """A public CI issuer signs tokens for anyone's repository with the audience they ask for: a
    token the issuer signed proves nothing about the credential until its subject matches."""
    federation = _federation(database, rate_per_credential=0.01, rate_per_client=0.01, burst=5)
    strangers = _token(subject="repo:stranger/x:ref:refs/heads/main")
    answers = [_attempt(loop, federation, strangers, f"127.0.0.{n}") for n in range(2, 10) for _ in range(25)]
    assert set(answers) == {403, 429}
    assert _attempt(loop, federation, _token(), "127.0.1.1") == 200


def test_ipv6_addresses_of_one_64_share_the_failure_limit(database: str, loop: asyncio.AbstractEventLoop) -> None:
    """An IPv6 client is given a /64 (RFC 6177) at least: its addresses are one source."""
    federation = _federation(database, failure_burst=5, failure_rate_per_client=0.01)
    forged = _token(STRANGER_KEY)
    answers = [_attempt(loop, federation, forged, f"2001:db8:1:2::{n:x}") for n in range(1, 8)]
    assert answers == [401] * 5 + [429] * 2, answers
    assert _attempt(loop, federation, forged, "2001:db8:1:2:ffff:ffff:ffff:ffff") == 429
    assert _attempt(loop, federation, forged, "2001:db8:1:3::1") == 401, "the next /64 is another source"
    assert _attempt(loop, federation, _token(), "2001:db8:1:3::2") == 200


def test_rate_limit_keys() -> None:
    from app.domain.shared.client_address import rate_limit_key

    assert rate_limit_key("192.0.2.7") == "192.0.2.7"
    assert rate_limit_key("2001:db8:1:2:3:4:5:6") == rate_limit_key("2001:db8:1:2::9") == "2001:db8:1:2::/64"
    assert rate_limit_key("::ffff:192.0.2.7") == "192.0.2.7", "an IPv4 client through a dual-stack socket"
    assert rate_limit_key("?") == "?"  # no peer address (an ASGI server without one)


def test_strangers_cannot_grow_the_exchange_log_without_bound(
    database: str, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failures are counted per credential, source and check per window, at most
    MAX_COUNTED_SOURCES keys; past it, one row per credential. Before, a failing check the token
    names (its algorithm) made a row of its own past the bound, and signed tokens refused by a later
    check were one row each, whatever their number."""
    monkeypatch.setattr(federation_module, "MAX_COUNTED_SOURCES", 50, raising=False)
    federation = _federation(database, rate_per_credential=1e6, burst=10**6)
    for n in range(150):  # as many /64s as a stranger likes, a check of their choosing each
        source = f"2001:db8:{n:x}::1"
        assert _attempt(loop, federation, compact({"alg": f"X{n}", "kid": "k1"}, {"sub": "x"}, b"s"), source) in (
            401,
            429,
        )
        assert _attempt(loop, federation, _token(subject=f"repo:stranger/{n}:x"), source) == 403
    assert _attempt(loop, federation, _token(), "192.0.2.1") == 200
    rows = _log(loop, federation)
    assert len(rows) <= 50 + 1 + 1, len(rows)
    assert sum(row.count for row in rows if row.outcome == "refused") == 300, "every failure is counted"
    assert [row.subject for row in rows if row.outcome == "issued"] == [OWNER_SUBJECT]
