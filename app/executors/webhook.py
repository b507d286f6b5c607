"""Webhook executor: Standard Webhooks signing, through the SSRF-safe client (no redirect)."""

from __future__ import annotations

import time
from typing import Any

from app.domain.webhooks import webhook_headers
from app.executors.base import Attempt
from app.identity.fetch import SafePoster
from app.net.errors import FetchRefused, TargetRefused


class WebhookExecutor:
    kind = "WEBHOOK"

    def __init__(
        self,
        *,
        timeout_s: float,
        allow_private_networks: bool,
        ca_file: str | None = None,
        max_connections: int = 64,
        loopback_ports: frozenset[int] = frozenset(),
    ) -> None:
        self._fetcher = SafePoster(
            allow_private_networks=allow_private_networks,
            loopback_ports=loopback_ports,
            connect_timeout=min(5.0, timeout_s),
            read_timeout=timeout_s,
            max_bytes=64 * 1024,
            ca_file=ca_file,
            idle_per_origin=max_connections,  # connections kept alive per receiver
        )

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt:
        content = item["content"]
        body = str(content["body"]).encode()
        if secret is None:
            return Attempt(error="the webhook action has no secret", permanent=True)
        # webhook-id is the effect id (stable across retries), webhook-timestamp this attempt's time.
        headers = webhook_headers(secret, item["effect_id"], int(time.time()), body, item["mode"])
        started = time.perf_counter()
        try:
            result = await self._fetcher.post(str(content["url"]), body, headers)
        except FetchRefused as exc:  # a refused target is final; a timeout or a failed connection is retried
            return Attempt(error=exc.reason, permanent=isinstance(exc, TargetRefused), duration_ms=_ms(started))
        return Attempt(status_code=result.status, headers=result.headers, duration_ms=_ms(started))

    async def aclose(self) -> None:
        await self._fetcher.aclose()


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
