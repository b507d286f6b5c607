"""Which secrets may sign the exchange's access tokens: a rule the settings check at start and the
key loader (app/identity/signing_keys.py) checks on every key it reads — pure."""

from __future__ import annotations

MIN_KEY_CHARS = 32
# Keys published in this project's source (earlier releases signed with this placeholder by default):
# anyone can mint tokens with them, so they are refused as a current key and as a previous one.
PUBLIC_KEYS = frozenset({"dev-only-signing-key-change-me"})


def key_problem(value: str) -> str | None:
    """Why ``value`` cannot sign or verify tokens, or None when it can."""
    if value in PUBLIC_KEYS:
        return "is the development placeholder published in Tocsin's source; anyone could sign tokens with it"
    if len(value) < MIN_KEY_CHARS:
        return f"is shorter than {MIN_KEY_CHARS} characters"
    return None
