"""Identifiers: prefixed, time-sortable, random; and deterministic effect ids."""

from __future__ import annotations

import hashlib
import os
import time

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def _base32(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    """A sortable random id ``<prefix>_<10 chars time><16 chars random>`` (ULID layout)."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    return f"{prefix}_{_base32(ms, 10)}{_base32(rand, 16)}"


def effect_id(prefix: str, *parts: str) -> str:
    """Deterministic id of an effect, derived from the server event id and the step.

    Every sink dedupes on it, so a redelivered event never produces a second effect.
    """
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return f"{prefix}_{_base32(int.from_bytes(digest[:16], 'big'), 26)}"
