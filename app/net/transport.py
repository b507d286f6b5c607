"""The outbound HTTP interface webhooks and OIDC discovery/JWKS are written against.

:class:`app.net.client.HttpClient` is the one implementation; tests may pass anything that has
these methods (a recorder, a canned answer) where a component takes a ``Transport``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from app.net.errors import FetchRefused


@dataclass(frozen=True, slots=True)
class PostResult:
    """The final answer to a POST: its status and headers (names lower-cased); the body is read
    up to the client's bound and dropped."""

    status: int
    headers: dict[str, str]


class Transport(Protocol):
    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
        """POST ``body`` once, no redirect followed; raises :class:`FetchRefused` (or its
        :class:`~app.net.errors.TargetRefused`) when there is no answer."""
        ...

    async def get_json(self, url: str) -> dict[str, Any]:
        """GET ``url`` over https; its bounded JSON object body, or :class:`FetchRefused`."""
        ...

    async def aclose(self) -> None: ...


def json_object(body: bytes) -> dict[str, Any]:
    """Decode a strict UTF-8 JSON object (no NaN / Infinity)."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    try:
        value = json.loads(body.decode("utf-8"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FetchRefused(f"body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise FetchRefused(f"body is JSON {type(value).__name__}, not an object")
    return value
