"""Workload-identity federation inside one API replica: OIDC discovery at credential
creation, the cached credential and JWKS lookups, the exchange itself, rate limits,
and the exchange log admins read."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.caches import TTLCache
from app.domain.iam.conditions import compile_condition
from app.domain.shared.client_address import rate_limit_key
from app.domain.shared.ids import new_id
from app.domain.shared.milliseconds import to_ms
from app.domain.shared.rate_limit import RateLimiter
from app.errors import InvalidInput, RateLimited
from app.identity import federated_tokens
from app.identity.exchange import (
    GRANT_TYPE,
    ISSUED_TOKEN_TYPE,
    SUBJECT_TOKEN_TYPE,
    CredentialConfig,
    ExchangeFailure,
    invalid_request,
    unauthenticated,
    verify_subject_token,
)
from app.identity.jwks import JwksCache, parse_jwks
from app.identity.signing_keys import SigningKeys
from app.net.client import HttpClient
from app.net.errors import FetchRefused
from app.settings import Settings
from app.store.models import Account, ExchangeAttempt, FederatedCredential

log = logging.getLogger(__name__)
# Failures kept per window as one row per credential, source and check; past this many keys, one
# row per credential (OVERFLOW_CHECK): memory and rows stay bounded whatever strangers send.
MAX_COUNTED_SOURCES = 10_000
OVERFLOW_CHECK = "various (more sources and checks than the log keeps apart)"
DISCOVERY_PATH = "/.well-known/openid-configuration"


def discovery_url(issuer_url: str) -> str:
    """One trailing ``/`` is stripped before the well-known path (the tenant v1.0 form ends in ``/``)."""
    return issuer_url.removesuffix("/") + DISCOVERY_PATH


def _discovery_failed(why: str) -> InvalidInput:
    return InvalidInput(
        f"OIDC discovery failed for issuer_url: {why}",
        details={"fields": [{"field": "issuer_url", "message": "OIDC discovery failed"}]},
    )


def config_of(row: FederatedCredential, account_active: bool) -> CredentialConfig:
    return CredentialConfig(
        id=row.id,
        organization_id=row.organization_id,
        service_account_id=row.service_account_id,
        issuer_url=row.issuer_url,
        audience=row.audience,
        subject_filter=row.subject_filter,
        jwks_uri=row.jwks_uri,
        condition=compile_condition(row.attribute_condition) if row.attribute_condition else None,
        active=row.status == "ACTIVE" and account_active,
    )


class Federation:
    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession], keys: SigningKeys) -> None:
        self.settings = settings
        self.sessions = sessions
        self.fetcher = HttpClient(
            allow_private_networks=settings.outbound.allow_private_networks,
            ca_file=settings.outbound.oidc_ca_file,
            proxy=settings.outbound.http_proxy,
        )
        self.jwks = JwksCache(
            self.fetcher.get_json,
            ttl=settings.jwks_cache_seconds,
            unknown_kid_interval=settings.jwks_unknown_kid_refetch_seconds,
        )
        self.credentials: TTLCache[str, CredentialConfig] = TTLCache(settings.config_cache_seconds)
        self.per_credential = RateLimiter(settings.exchange.rate_per_credential, settings.exchange.burst)
        self.per_client = RateLimiter(settings.exchange.rate_per_client, settings.exchange.burst)
        self.keys = keys
        self.failures_per_client = RateLimiter(
            settings.exchange.failure_rate_per_client, settings.exchange.failure_burst
        )
        self._attempts: list[tuple[str, str, float, str, str | None, str | None, str]] = []
        # (credential, organization, source, check) -> [count, last at]: refused exchanges, written
        # as one row each per window (TOCSIN_EXCHANGE_FAILURE_WINDOW_SECONDS)
        self._failures: dict[tuple[str, str, str, str], list[float]] = {}
        self._window_started = time.monotonic()

    async def discover(self, issuer_url: str) -> str:
        """Validate the issuer by OIDC discovery; the ``jwks_uri`` to use. 422 on any failure."""
        try:
            parts = urlsplit(issuer_url)
            hostname = parts.hostname
        except ValueError as exc:
            raise _discovery_failed("issuer_url is not a valid URL") from exc
        if parts.scheme != "https" or not hostname:
            raise _discovery_failed("issuer_url must be an https URL")
        try:
            document = await self.fetcher.get_json(discovery_url(issuer_url))
            if document.get("issuer") != issuer_url:
                raise _discovery_failed("the discovery document's issuer is not exactly issuer_url")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str) or urlsplit(jwks_uri).scheme != "https":
                raise _discovery_failed("jwks_uri must be an https URL")
            if not parse_jwks(await self.fetcher.get_json(jwks_uri)):
                raise _discovery_failed("the JWKS has no usable signing key")
        except FetchRefused as exc:
            log.info("discovery of %s refused: %s", issuer_url, exc.reason)
            raise _discovery_failed("the issuer could not be fetched safely") from exc
        except ValueError as exc:  # a malformed jwks_uri in the discovery document
            raise _discovery_failed("jwks_uri must be an https URL") from exc
        return jwks_uri

    async def credential(self, credential_id: str) -> CredentialConfig | None:
        async def load() -> tuple[str, CredentialConfig]:
            async with self.sessions() as session:
                row = await session.get(FederatedCredential, credential_id)
                if row is None:
                    raise LookupError(credential_id)
                account = await session.get(Account, row.service_account_id)
                return row.organization_id, config_of(row, account is not None and account.status == "ACTIVE")

        if len(credential_id) > 40:
            return None
        cached = self.credentials.get(credential_id)
        if cached is not None:
            return cached
        try:
            return await self.credentials.get_or_load(credential_id, load)
        except LookupError:
            return None

    async def exchange(self, credential_id: str, form: dict[str, str], client: str) -> dict[str, Any]:
        """The spec's token response, or ExchangeFailure / RateLimited.

        A token takes from the credential's bucket only once it passed every check of the
        credential: a stranger knows the credential's id, issuer and audience (they are in CI
        files), and a public issuer signs tokens of anyone's subject, so no earlier refusal may
        spend the owner's exchanges. Every refusal counts against its source instead (the client
        address, an IPv6 one's /64): a source that failed too often is refused whatever it sends."""
        source = rate_limit_key(client)
        wait = self.per_client.take(source) or self.failures_per_client.peek(source)
        if wait:
            raise RateLimited("too many token exchanges; retry later", retry_after=wait)
        if form.get("grant_type") != GRANT_TYPE:
            raise invalid_request("grant_type must be " + GRANT_TYPE)
        if form.get("subject_token_type") != SUBJECT_TOKEN_TYPE:
            raise invalid_request("subject_token_type must be " + SUBJECT_TOKEN_TYPE)
        token = form.get("subject_token", "").strip()
        if not token:
            raise invalid_request("subject_token is required")
        cred = await self.credential(credential_id)
        if cred is None or not cred.active:
            # answered like a token that proves nothing: a stranger cannot tell which ids exist
            self.failures_per_client.take(source)
            if cred is not None:
                self._count_failure(cred, "credential inactive", source)
            raise unauthenticated("credential")
        try:
            claims = await verify_subject_token(
                token, cred, self.jwks, self.settings.max_subject_token_lifetime_seconds
            )
        except ExchangeFailure as failure:
            self.failures_per_client.take(source)
            self._count_failure(cred, failure.check, source)
            raise
        wait = self.per_credential.take(cred.id)
        if wait:
            raise RateLimited("too many token exchanges; retry later", retry_after=wait)
        self._record(cred, "issued", None, str(claims.get("sub")), client)
        access_token = federated_tokens.mint(
            self.keys.current,
            service_account_id=cred.service_account_id,
            credential_id=cred.id,
            organization_id=cred.organization_id,
            now=int(time.time()),
        )
        return {
            "access_token": access_token,
            "issued_token_type": ISSUED_TOKEN_TYPE,
            "token_type": "Bearer",
            "expires_in": federated_tokens.LIFETIME_SECONDS,
        }

    def _record(
        self, cred: CredentialConfig, outcome: str, check: str | None, subject: str | None, client: str
    ) -> None:
        # Plain tuples on the hot path; rows (ids, datetimes, ORM objects) are built when flushed.
        # Only issued tokens come here: at most the credential's rate of them.
        if len(self._attempts) < 10_000:
            self._attempts.append((cred.id, cred.organization_id, time.time(), outcome, check, subject, client))

    def _count_failure(self, cred: CredentialConfig, check: str, source: str) -> None:
        """One more failure of ``source`` at ``check`` on ``cred`` in the current window. Anyone can
        fail, from as many sources and with as many checks as they like (the failing check may name
        the token's algorithm): past MAX_COUNTED_SOURCES keys in a window, a credential's further
        failures share one row (source ``*``, check OVERFLOW_CHECK)."""
        key = (cred.id, cred.organization_id, source, check)
        if key not in self._failures and len(self._failures) >= MAX_COUNTED_SOURCES:
            key = (cred.id, cred.organization_id, "*", OVERFLOW_CHECK)
        entry = self._failures.setdefault(key, [0.0, 0.0])
        entry[0] += 1
        entry[1] = time.time()

    async def flush_attempts(self, *, whole_window: bool = True) -> None:
        """Write the attempts kept in memory. The counted failures go out when their window is
        over, or whenever ``whole_window`` (a reader of the log, shutdown) asks for everything."""
        counted: list[tuple[str, str, float, str, str | None, str | None, str, int]] = []
        window = self.settings.exchange.failure_window_seconds
        if self._failures and (whole_window or time.monotonic() - self._window_started >= window):
            failures, self._failures = self._failures, {}
            self._window_started = time.monotonic()
            counted = [
                (cred_id, org_id, at, "refused", check, None, client, int(count))
                for (cred_id, org_id, client, check), (count, at) in failures.items()
            ]
        if not self._attempts and not counted:
            return
        batch, self._attempts = self._attempts, []
        rows = [
            ExchangeAttempt(
                id=new_id("exa", now_ms=to_ms(at)),
                credential_id=cred_id,
                organization_id=org_id,
                at=datetime.fromtimestamp(at, UTC),
                outcome=outcome,
                failed_check=check,
                subject=subject,
                client_address=client,
                count=count,
            )
            for cred_id, org_id, at, outcome, check, subject, client, count in [*((*a, 1) for a in batch), *counted]
        ]
        try:
            async with self.sessions.begin() as session:
                session.add_all(rows)
        except SQLAlchemyError as exc:
            log.warning("could not store %d exchange attempts: %s", len(rows), exc)

    async def run_flusher(self, every: float = 1.0) -> None:
        while True:
            await asyncio.sleep(every)
            await self.flush_attempts(whole_window=False)
