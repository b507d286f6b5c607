"""What several commands share: the progress lines and the token signing keys."""

from __future__ import annotations

import logging

from app.identity.signing_keys import SigningKeys, load_signing_keys
from app.settings import Settings

log = logging.getLogger("tocsin")


def say(message: str) -> None:
    """One INFO line of a command's progress, in the process's log format (app/observability/logs.py)."""
    log.info(message)


def signing_keys(settings: Settings) -> SigningKeys:
    """The token signing keys, creating the key file on first start (app/identity/signing_keys.py)."""
    keys = load_signing_keys(settings)
    if keys.created:
        say(f"created a random token signing key in {keys.source} (mode 0600; keep it secret, back it up)")
    return keys
