"""RFC 8693 token exchange: check an external OIDC JWT against a federated credential.

The caller only ever learns the spec's generic error; ``ExchangeFailure.check`` names the
failing check for the credential's exchange log (issuer, audience, subject filter, the
condition clause, signature, expiry…).
"""

from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass
from typing import Any

import jwt
import orjson

from app.domain.conditions import Condition
from app.domain.subject_filter import subject_matches
from app.errors import TocsinError
from app.identity.jwks import JwksCache

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
SUBJECT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
ISSUED_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
ALLOWED_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MAX_SUBJECT_TOKEN_BYTES = 16 * 1024
LEEWAY_SECONDS = 30
# Longest subject-token lifetime accepted (TOCSIN_MAX_SUBJECT_TOKEN_LIFETIME_SECONDS): GCP refuses over 48 h.
MAX_LIFETIME_SECONDS = 24 * 3600


_ALGORITHMS = {name: jwt.get_algorithm_by_name(name) for name in ALLOWED_ALGORITHMS}


class ExchangeFailure(TocsinError):
    """An exchange refused with the spec's status and error; ``check`` is for admins only."""

    def __init__(self, status: int, error: str, description: str, check: str, authenticated: bool = True) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.check = check
        # False until the token's signature verified with the credential's issuer's key: the
        # caller may be anyone (their failures are counted per source, not logged one by one).
        self.authenticated = authenticated


def invalid_request(description: str, check: str = "request") -> ExchangeFailure:
    return ExchangeFailure(400, "invalid_request", description, check)


def invalid_token(check: str, *, authenticated: bool = True) -> ExchangeFailure:
    return ExchangeFailure(
        401, "invalid_token", "the subject token is not valid for this credential", check, authenticated
    )


def unauthenticated(check: str) -> ExchangeFailure:
    """A refusal before the token proved anything: the same answer for every such failure, and
    for a credential that does not exist or is inactive (a stranger learns nothing of the ids)."""
    return invalid_token(check, authenticated=False)


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


_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def _segment(text: str) -> bytes:
    """One JWS segment, strictly (RFC 7515 §2): base64url characters only, no padding, and the one
    spelling of its bytes (a last character with stray low bits is another spelling). A lenient
    decoder skips other characters, so one token had many accepted forms."""
    if not _BASE64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != text:
        raise ValueError("not the canonical base64url of its bytes")
    return raw


def _json_object(raw: bytes) -> dict[str, Any]:
    value = orjson.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _number(claims: dict[str, Any], name: str, *, required: bool) -> float | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise invalid_token(f"missing claim: {name}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid_token(f"malformed claim: {name}")
    return float(value)


def check_claims(
    claims: dict[str, Any], cred: CredentialConfig, now: float, max_lifetime: float = MAX_LIFETIME_SECONDS
) -> None:
    """``exp`` required, ``nbf``/``iat`` with leeway, ``iss`` exact, ``aud`` equal or contained;
    a lifetime (``exp - iat``, and ``exp - now``) of at most ``max_lifetime`` seconds."""
    exp = _number(claims, "exp", required=True)
    assert exp is not None
    if exp <= now - LEEWAY_SECONDS:
        raise invalid_token("expiry")
    issued = None
    for name in ("nbf", "iat"):
        value = _number(claims, name, required=False)
        if value is not None and value > now + LEEWAY_SECONDS:
            raise invalid_token("not yet valid")
        if name == "iat":
            issued = value
    if exp - now > max_lifetime + LEEWAY_SECONDS or (issued is not None and exp - issued > max_lifetime):
        raise invalid_token(f"lifetime: more than {int(max_lifetime)} s")
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or issuer != cred.issuer_url:
        raise invalid_token("issuer")
    audience = claims.get("aud")
    if isinstance(audience, str):
        audience_ok = audience == cred.audience
    else:
        audience_ok = isinstance(audience, list) and cred.audience in audience
    if not audience_ok:
        raise invalid_token("audience")
    if not isinstance(claims.get("sub"), str):
        raise invalid_token("missing claim: sub")


async def verify_subject_token(
    token: str, cred: CredentialConfig, jwks: JwksCache, max_lifetime: float = MAX_LIFETIME_SECONDS
) -> dict[str, Any]:
    """The token's claims when every check of the credential passes; else ExchangeFailure.

    The JWS is parsed here (one base64/JSON pass) and its signature checked with PyJWT's
    algorithm objects; the claim checks are the spec's. PyJWT's ``decode`` did the same work
    at three times the cost of the signature check itself.
    """
    if len(token) > MAX_SUBJECT_TOKEN_BYTES:
        raise unauthenticated("malformed: oversize")
    parts = token.split(".")
    if len(parts) != 3:
        raise unauthenticated("malformed")
    try:
        header = _json_object(_segment(parts[0]))
        payload = _segment(parts[1])
        signature = _segment(parts[2])
    except ValueError as exc:
        raise unauthenticated("malformed") from exc
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in ALLOWED_ALGORITHMS:
        raise unauthenticated(f"algorithm {str(alg)[:20]!r} not allowed")
    if "crit" in header:
        raise unauthenticated("crit header")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise unauthenticated("malformed: kid")
    key = await jwks.key(cred.jwks_uri, kid)
    if key is None:
        raise unauthenticated("signature: unknown key")
    if key.algorithm_name != alg and not (key.key_type == "RSA" and alg.startswith(("RS", "PS"))):
        raise unauthenticated("algorithm does not match the key")
    algorithm = _ALGORITHMS[alg]
    try:
        valid = algorithm.verify(f"{parts[0]}.{parts[1]}".encode(), key.key, signature)
    except (ValueError, TypeError) as exc:
        raise unauthenticated("signature") from exc
    if not valid:
        raise unauthenticated("signature")
    try:
        claims = _json_object(payload)
    except ValueError as exc:
        raise invalid_token("malformed") from exc
    check_claims(claims, cred, time.time(), max_lifetime)
    subject = claims["sub"]
    if not subject_matches(cred.subject_filter, subject):
        raise access_denied("subject filter")
    if cred.condition is not None and not cred.condition.evaluate(claims):
        raise access_denied(f"condition: {cred.condition.failing_clause(claims)}")
    return claims
