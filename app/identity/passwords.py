"""Password hashes: argon2id (argon2-cffi's RFC 9106 low-memory profile), checked off the event loop.

An unknown user, or one without a password, is checked against a dummy hash of the same cost, so
the answer takes as long as for a wrong password (no user enumeration by timing).
"""

from __future__ import annotations

import asyncio
import secrets

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_LENGTH = 12
MAX_LENGTH = 1024

_hasher = PasswordHasher(type=Type.ID)
_DUMMY = _hasher.hash(secrets.token_urlsafe(24))


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def _verify(stored: str | None, password: str) -> bool:
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored`` (None: compared with the dummy, always False)."""
    return await asyncio.to_thread(_verify, stored, password)


async def hash_password_async(password: str) -> str:
    return await asyncio.to_thread(hash_password, password)


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None (length only: NIST SP 800-63B, no composition rules)."""
    if len(password) < MIN_LENGTH:
        return f"at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"at most {MAX_LENGTH} characters"
    return None
