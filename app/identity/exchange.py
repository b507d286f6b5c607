"""RFC 8693 token exchange: check an external OIDC JWT against a federated credential.

The caller only ever learns the spec's generic error; ``ExchangeFailure.check`` names the
failing check for the credential's exchange log (issuer, audience, subject filter, the
condition clause, signature, expiry…).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jwt
from jwt import exceptions as jwt_errors

from app.domain.federation import Condition, subject_matches
from app.identity.jwks import JwksCache

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
SUBJECT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
ISSUED_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
ALLOWED_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MAX_SUBJECT_TOKEN_BYTES = 16 * 1024
LEEWAY_SECONDS = 30


class ExchangeFailure(Exception):
    """An exchange refused with the spec's status and error; ``check`` is for admins only."""

    def __init__(self, status: int, error: str, description: str, check: str) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.check = check


def invalid_request(description: str, check: str = "request") -> ExchangeFailure:
    return ExchangeFailure(400, "invalid_request", description, check)


def invalid_token(check: str) -> ExchangeFailure:
    return ExchangeFailure(401, "invalid_token", "the subject token is not valid for this credential", check)


def access_denied(check: str) -> ExchangeFailure:
    return ExchangeFailure(403, "access_denied", "the subject token is not allowed by this credential", check)


@dataclass(frozen=True)
class CredentialConfig:
    """What the exchange needs of a federated credential (cached per credential)."""

    id: str
    organization_id: str
    service_account_id: str
    issuer_url: str
    audience: str
    subject_filter: str
    jwks_uri: str
    condition: Condition | None
    active: bool


_DECODE_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (jwt_errors.ExpiredSignatureError, "expiry"),
    (jwt_errors.ImmatureSignatureError, "not yet valid"),
    (jwt_errors.InvalidIssuerError, "issuer"),
    (jwt_errors.InvalidAudienceError, "audience"),
    (jwt_errors.MissingRequiredClaimError, "missing claim"),
    (jwt_errors.InvalidSignatureError, "signature"),
    (jwt_errors.InvalidAlgorithmError, "algorithm"),
)


async def verify_subject_token(token: str, cred: CredentialConfig, jwks: JwksCache) -> dict[str, Any]:
    """The token's claims when every check of the credential passes; else ExchangeFailure."""
    if len(token) > MAX_SUBJECT_TOKEN_BYTES:
        raise invalid_token("malformed: oversize")
    try:
        header = jwt.get_unverified_header(token)
    except jwt_errors.InvalidTokenError as exc:
        raise invalid_token("malformed") from exc
    alg = header.get("alg")
    if alg not in ALLOWED_ALGORITHMS:
        raise invalid_token(f"algorithm {str(alg)[:20]!r} not allowed")
    if "crit" in header:
        raise invalid_token("crit header")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise invalid_token("malformed: kid")
    key = await jwks.key(cred.jwks_uri, kid)
    if key is None:
        raise invalid_token("signature: unknown key")
    if key.algorithm_name != alg and not (key.key_type == "RSA" and alg.startswith(("RS", "PS"))):
        raise invalid_token("algorithm does not match the key")
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key.key,
            algorithms=[alg],
            audience=cred.audience,
            issuer=cred.issuer_url,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
    except jwt_errors.InvalidTokenError as exc:
        check = next((name for kind, name in _DECODE_ERRORS if isinstance(exc, kind)), "malformed")
        raise invalid_token(check) from exc
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject_matches(cred.subject_filter, subject):
        raise access_denied("subject filter")
    if cred.condition is not None and not cred.condition.evaluate(claims):
        raise access_denied(f"condition: {cred.condition.failing_clause(claims)}")
    return claims
