"""Static access token format: recognisable prefix, random body, checksum.

``tcs_<32 base62 body><6 base62 crc32>``; a PagerDuty integration key (the Events v2
``routing_key``, app/domain/formats/pagerduty.py) is the same with ``tpk_``. The checksum lets the API reject a mistyped
or truncated token (AUT-002) without a store lookup, and lets secret scanners spot
leaked tokens by prefix. Only the SHA-256 of a token is ever stored.
"""

from __future__ import annotations

import hashlib
import secrets
import zlib

PREFIX = "tcs_"
INTEGRATION_KEY_PREFIX = "tpk_"
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BODY_LEN = 32
_CHECK_LEN = 6
TOKEN_LEN = len(PREFIX) + _BODY_LEN + _CHECK_LEN


def _b62(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, rem = divmod(value, 62)
        out.append(_ALPHABET[rem])
    return "".join(reversed(out))


def _checksum(body: str) -> str:
    return _b62(zlib.crc32(body.encode()), _CHECK_LEN)


def generate_token(prefix: str = PREFIX) -> str:
    """A new static token (shown to its owner once); ``prefix`` tells its kind."""
    body = "".join(secrets.choice(_ALPHABET) for _ in range(_BODY_LEN))
    return f"{prefix}{body}{_checksum(body)}"


def is_well_formed(token: str, prefix: str = PREFIX) -> bool:
    """Prefix, length, alphabet and checksum are right (says nothing about validity)."""
    if len(token) != TOKEN_LEN or not token.startswith(prefix):
        return False
    body = token[len(prefix) : len(prefix) + _BODY_LEN]
    check = token[len(prefix) + _BODY_LEN :]
    if any(c not in _ALPHABET for c in body):
        return False
    return check.isascii() and secrets.compare_digest(check, _checksum(body))


def token_hash(token: str) -> str:
    """The only form in which a token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()
