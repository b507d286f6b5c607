"""The one-hour access tokens issued by the token exchange.

``tcf_<payload>.<signature>``: the payload (base64url JSON) names the service account, the
credential, the organization and the expiry; the signature is HMAC-SHA256 with the
service's signing key (app/identity/signing_keys.py), and verifying also accepts the previous
keys. Nothing is stored per token: every use still checks that the account and the credential
are ``ACTIVE`` (through the one-second principal cache), so deactivating either stops the token
within a second.
"""

from __future__ import annotations

import base64
import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

PREFIX = "tcf_"
LIFETIME_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class FederatedClaims:
    service_account_id: str
    credential_id: str
    organization_id: str
    expires_at: int
    token_id: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint(key: bytes, *, service_account_id: str, credential_id: str, organization_id: str, now: int) -> str:
    token_id = _b64(os.urandom(12))
    payload = _b64(
        orjson.dumps(
            {
                "sa": service_account_id,
                "cred": credential_id,
                "org": organization_id,
                "exp": now + LIFETIME_SECONDS,
                "jti": token_id,
            }
        )
    )
    signature = _b64(hmac.digest(key, payload.encode(), "sha256"))
    return f"{PREFIX}{payload}.{signature}"


def verify(keys: Sequence[bytes], token: str) -> FederatedClaims | None:
    """The claims of a token signed with one of ``keys`` (current first), or None (malformed or forged)."""
    if not token.startswith(PREFIX) or len(token) > 1024:
        return None
    payload, _, signature = token[len(PREFIX) :].partition(".")
    if not signature or not signature.isascii():
        return None
    signed = payload.encode()
    if not any(hmac.compare_digest(signature, _b64(hmac.digest(key, signed, "sha256"))) for key in keys):
        return None
    try:
        data = orjson.loads(_unb64(payload))
        return FederatedClaims(str(data["sa"]), str(data["cred"]), str(data["org"]), int(data["exp"]), str(data["jti"]))
    except (ValueError, KeyError, TypeError):
        return None
