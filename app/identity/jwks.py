"""JWKS per issuer: keys reused for minutes, an unknown ``kid`` refetches at most once per
interval, and a failed refresh keeps serving the keys already known."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from jwt import PyJWK
from jwt.exceptions import PyJWKError

log = logging.getLogger(__name__)

FetchJson = Callable[[str], Awaitable[dict[str, Any]]]


def parse_jwks(document: dict[str, Any]) -> dict[str, PyJWK]:
    """Signing keys of a JWKS document by ``kid`` (keys without a usable shape are skipped)."""
    keys: dict[str, PyJWK] = {}
    entries = document.get("keys")
    if not isinstance(entries, list):
        return keys
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = PyJWK(entry)
        except (PyJWKError, ValueError, TypeError, KeyError) as exc:
            log.info("jwks: skipping key %s: %s", entry.get("kid", index), exc)
            continue
        keys[str(entry.get("kid", f"#{index}"))] = key
    return keys


@dataclass
class _Entry:
    keys: dict[str, PyJWK] = field(default_factory=dict)
    fetched_at: float = float("-inf")
    forced_at: float = float("-inf")
    fetches: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class JwksCache:
    def __init__(
        self,
        fetch_json: FetchJson,
        *,
        ttl: float = 300.0,
        unknown_kid_interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch_json = fetch_json
        self._ttl = ttl
        self._unknown_interval = unknown_kid_interval
        self._clock = clock
        self._entries: dict[str, _Entry] = {}

    def fetches(self, jwks_uri: str) -> int:
        entry = self._entries.get(jwks_uri)
        return entry.fetches if entry else 0

    async def _refresh(self, uri: str, entry: _Entry) -> None:
        entry.fetches += 1
        try:
            keys = parse_jwks(await self._fetch_json(uri))
        except Exception as exc:  # noqa: BLE001 - any failure keeps serving the known keys
            log.warning("jwks: refresh of %s failed, keeping %d known keys: %s", uri, len(entry.keys), exc)
            entry.fetched_at = self._clock() - self._ttl + min(self._ttl, 30.0)  # retry in ≤ 30 s
            return
        if keys:
            entry.keys = keys
        entry.fetched_at = self._clock()

    async def key(self, jwks_uri: str, kid: str | None) -> PyJWK | None:
        """The key for ``kid`` (or the only key when the token names none), or None."""
        entry = self._entries.get(jwks_uri)
        if entry is not None and self._clock() - entry.fetched_at < self._ttl:
            found = self._pick(entry, kid)
            if found is not None:
                return found  # the common case: a fresh entry that knows the key
        entry = self._entries.setdefault(jwks_uri, _Entry())
        if self._clock() - entry.fetched_at >= self._ttl:
            async with entry.lock:
                if self._clock() - entry.fetched_at >= self._ttl:
                    await self._refresh(jwks_uri, entry)
        found = self._pick(entry, kid)
        if found is not None:
            return found
        async with entry.lock:
            found = self._pick(entry, kid)
            if found is None and self._clock() - entry.forced_at >= self._unknown_interval:
                entry.forced_at = self._clock()
                await self._refresh(jwks_uri, entry)
                found = self._pick(entry, kid)
        return found

    @staticmethod
    def _pick(entry: _Entry, kid: str | None) -> PyJWK | None:
        if kid is None:
            return next(iter(entry.keys.values())) if len(entry.keys) == 1 else None
        return entry.keys.get(kid)
