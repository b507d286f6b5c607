"""What several commands share: the progress line and the token signing keys."""

from __future__ import annotations

import sys

from app.identity.signing_keys import SigningKeys, load_signing_keys
from app.settings import Settings


def say(message: str) -> None:
    print(f"tocsin: {message}", file=sys.stderr, flush=True)


def signing_keys(settings: Settings) -> SigningKeys:
    """The token signing keys, creating the key file on first start (app/identity/signing_keys.py)."""
    keys = load_signing_keys(settings)
    if keys.created:
        say(f"created a random token signing key in {keys.source} (mode 0600; keep it secret, back it up)")
    return keys
