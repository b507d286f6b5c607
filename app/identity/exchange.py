"""RFC 8693 token exchange: check an external OIDC JWT against a federated credential.

The caller only ever learns the spec's generic error; ``ExchangeFailure.check`` names the
failing check for the credential's exchange log (issuer, audience, subject filter, the
condition clause, signature, expiry…).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import jwt
import orjson
from jwt import PyJWK
from jwt.exceptions import InvalidSubjectError
from jwt.utils import base64url_decode, base64url_encode

from app.domain.iam.conditions import Condition
from app.domain.iam.subject_filter import subject_matches
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


class ExchangeFailure(TocsinError):
    """An exchange refused with an RFC 6749 §5.2 status and error; ``check`` is for admins only."""

    def __init__(self, status: int, error: str, description: str, check: str, authenticated: bool = True) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.check = check
        # False until the token's signature verified with the credential's issuer's key: the
        # caller may be anyone. (Every refusal is counted per source, app/identity/federation.py:
        # a public issuer signs anyone's tokens, so a verified signature proves nobody either.)
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


# One spelling of each segment (RFC 7515 §2: base64url, no padding): PyJWT also accepts `=`
# padding, so one signed token would have several accepted forms.
_COMPACT_JWS = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
# An RSA key verifies every RS and PS algorithm: a JWKS entry without "alg" is PyJWT's "RS256".
_RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_TIME_CLAIMS = ("exp", "nbf", "iat")


class _SubjectTokenJWT(jwt.PyJWT):
    """PyJWT's decode, the payload read as the exchange always read it (``_decode_payload`` is
    PyJWT's hook for this): strict JSON (orjson: no NaN, no infinities), and time claims that are
    JSON numbers. PyJWT's ``int()`` would take ``"1700000000"`` and ``true`` as times and name a
    malformed ``exp`` with the same DecodeError as a malformed payload."""

    def _decode_payload(self, decoded: dict[str, Any]) -> dict[str, Any]:
        try:
            claims = orjson.loads(decoded["payload"])
        except orjson.JSONDecodeError as exc:
            raise invalid_token("malformed") from exc
        if not isinstance(claims, dict):
            raise invalid_token("malformed")
        for name in _TIME_CLAIMS:
            value = claims.get(name)
            if value is None:
                if name != "exp":
                    claims.pop(name, None)  # a null nbf or iat is no claim (PyJWT refuses it)
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise invalid_token(f"malformed claim: {name}")
        return claims


# aud is checked after decoding (see verify_subject_token); jti is not the exchange's business.
_DECODER = _SubjectTokenJWT({"require": ["exp", "sub"], "verify_aud": False, "verify_jti": False})


def _header(token: str) -> dict[str, Any]:
    """The JOSE header, read to find the key, and refused as before: an algorithm outside
    ALLOWED_ALGORITHMS, any ``crit``, a ``kid`` that is not a string.

    Only the header segment is read here, in its one spelling since the JWKS lookup acts on it;
    PyJWT reads all three segments as strictly when it verifies. ``jwt.get_unverified_header``
    would parse the whole token a second time: 24 µs here, as much as the rest of the exchange.
    """
    if len(token) > MAX_SUBJECT_TOKEN_BYTES:
        raise unauthenticated("malformed: oversize")
    if not _COMPACT_JWS.fullmatch(token):
        raise unauthenticated("malformed")
    segment = token.partition(".")[0].encode()
    try:
        raw = base64url_decode(segment)
        header = orjson.loads(raw)
    except ValueError as exc:  # binascii.Error and orjson.JSONDecodeError are ValueErrors
        raise unauthenticated("malformed") from exc
    if base64url_encode(raw) != segment:  # stray bits in the last character: another spelling
        raise unauthenticated("malformed")
    if not isinstance(header, dict):
        raise unauthenticated("malformed")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in ALLOWED_ALGORITHMS:
        raise unauthenticated(f"algorithm {str(alg)[:20]!r} not allowed")
    if "crit" in header:
        raise unauthenticated("crit header")
    if "kid" in header and not isinstance(header["kid"], str):
        raise unauthenticated("malformed: kid")
    return header


def _algorithms_of(key: PyJWK) -> tuple[str, ...]:
    """The algorithms ``key`` verifies: never the token's say."""
    return _RSA_ALGORITHMS if key.key_type == "RSA" else (key.algorithm_name,)


def _decode(token: str, key: PyJWK, algorithms: tuple[str, ...], cred: CredentialConfig) -> dict[str, Any]:
    """PyJWT's verification (signature, ``exp``/``nbf``/``iat`` with leeway, ``iss``, ``sub``), its
    exceptions named as the exchange log names them. Everything before the signature verified
    is ``unauthenticated``."""
    try:
        decoded = _DECODER.decode_complete(
            token, key.key, algorithms=algorithms, issuer=cred.issuer_url, leeway=LEEWAY_SECONDS
        )
    except jwt.InvalidAlgorithmError as exc:
        raise unauthenticated("algorithm does not match the key") from exc
    except jwt.InvalidSignatureError as exc:
        raise unauthenticated("signature") from exc
    except jwt.DecodeError as exc:  # a segment PyJWT reads more strictly than the header was read
        raise unauthenticated("malformed") from exc
    except jwt.ExpiredSignatureError as exc:
        raise invalid_token("expiry") from exc
    except jwt.ImmatureSignatureError as exc:
        raise invalid_token("not yet valid") from exc
    except jwt.MissingRequiredClaimError as exc:
        raise invalid_token("issuer" if exc.claim == "iss" else f"missing claim: {exc.claim}") from exc
    except jwt.InvalidIssuerError as exc:
        raise invalid_token("issuer") from exc
    except InvalidSubjectError as exc:
        raise invalid_token("missing claim: sub") from exc
    except jwt.InvalidTokenError as exc:  # PyJWT's own header checks: _header refused all they refuse
        raise unauthenticated("malformed") from exc
    except jwt.InvalidKeyError as exc:  # e.g. a JWKS "ES256" key on another curve: it verifies nothing
        raise unauthenticated("signature") from exc
    except (ValueError, TypeError) as exc:  # a signature the key's algorithm cannot even read
        raise unauthenticated("signature") from exc
    claims: dict[str, Any] = decoded["payload"]
    return claims


def _audience_matches(audience: object, expected: str) -> bool:
    """``aud`` equal, or a list containing it (PyJWT refuses a list with any non-string member)."""
    if isinstance(audience, str):
        return audience == expected
    return isinstance(audience, list) and expected in audience


async def verify_subject_token(
    token: str, cred: CredentialConfig, jwks: JwksCache, max_lifetime: float = MAX_LIFETIME_SECONDS
) -> dict[str, Any]:
    """The token's claims when every check of the credential passes; else ExchangeFailure.

    PyJWT verifies, with the algorithms of the key the JWKS holds for the token's ``kid``;
    ``exp`` and ``sub`` are required, ``nbf``/``iat`` checked with LEEWAY_SECONDS, ``iss`` exact.
    Then the spec's checks PyJWT has no word for: a lifetime (``exp - iat``, and ``exp - now``)
    of at most ``max_lifetime`` seconds, ``aud``, the subject filter and the condition.
    A token failing several claim checks is logged with the first in that order (PyJWT's:
    ``exp``/``sub`` present, ``iat``, ``nbf``, ``exp``, ``iss``, ``sub`` a string).
    """
    header = _header(token)
    key = await jwks.key(cred.jwks_uri, header.get("kid"))
    if key is None:
        raise unauthenticated("signature: unknown key")
    algorithms = _algorithms_of(key)
    if header["alg"] not in algorithms:
        raise unauthenticated("algorithm does not match the key")
    claims = _decode(token, key, algorithms, cred)
    now = time.time()
    exp, issued = claims["exp"], claims.get("iat")
    if exp - now > max_lifetime + LEEWAY_SECONDS or (issued is not None and exp - issued > max_lifetime):
        raise invalid_token(f"lifetime: more than {int(max_lifetime)} s")
    if not _audience_matches(claims.get("aud"), cred.audience):
        raise invalid_token("audience")
    subject = claims["sub"]
    if not subject_matches(cred.subject_filter, subject):
        raise access_denied("subject filter")
    if cred.condition is not None and not cred.condition.evaluate(claims):
        raise access_denied(f"condition: {cred.condition.failing_clause(claims)}")
    return claims
