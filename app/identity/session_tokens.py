"""The secrets of a person's sign-in: session access tokens, console cookies, CSRF tokens, one-time
tokens (magic link, password reset, invitation, pending step) and device tokens. Only their
SHA-256 is stored (the CSRF token, not a credential on its own, is stored as is)."""

from __future__ import annotations

import hashlib
import secrets

SESSION_PREFIX = "tss_"  # a session's API access token (api/deps.py tells it from static tokens by it)
ONE_TIME_PREFIX = "tso_"
DEVICE_PREFIX = "tsd_"

ACCESS_TOKEN_SECONDS = 900  # the API access token of a session
SESSION_SECONDS = 12 * 3600  # the console cookie; the session ends then whatever is done
PENDING_SECONDS = 300  # between the first and the second factor (or the enrolment)
MAGIC_LINK_SECONDS = 600
INVITATION_SECONDS = 7 * 86400  # the bootstrap's and an administrator's set-a-password link
DEVICE_SECONDS = 90 * 86400


def new_secret(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def secret_hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_csrf_token() -> str:
    return secrets.token_urlsafe(32)
