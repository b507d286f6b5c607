"""Webhook executor: Standard Webhooks signing, through the one outbound client (app/net: SSRF-safe,
no redirect followed)."""

from __future__ import annotations

import time
from typing import Any

from app.clock import elapsed_ms
from app.domain.delivery.delivery_verdicts import Attempt
from app.domain.delivery.kinds import WEBHOOK
from app.domain.delivery.webhooks import webhook_headers
from app.net.client import HttpClient
from app.net.errors import FetchRefused
from app.net.transport import Transport
from app.observability.metrics import register_cache
from app.settings.delivery import WebhookConfig


class WebhookExecutor:
    kind = WEBHOOK.name

    def __init__(self, config: WebhookConfig, *, transport: Transport | None = None) -> None:
        self._fetcher: Transport = transport or HttpClient(
            allow_private_networks=config.allow_private_networks,
            loopback_ports=config.loopback_ports,
            connect_timeout=min(5.0, config.timeout_s),
            read_timeout=config.timeout_s,
            max_bytes=64 * 1024,
            ca_file=config.ca_file,
            max_connections_per_host=config.max_connections,  # connections opened and kept alive per receiver
            proxy=config.proxy,
        )
        if isinstance(self._fetcher, HttpClient):
            register_cache("webhook_targets", self._fetcher.targets)

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
            return Attempt(error=exc.reason, permanent=not exc.retriable, duration_ms=elapsed_ms(started))
        return Attempt(status_code=result.status, headers=result.headers, duration_ms=elapsed_ms(started))

    async def aclose(self) -> None:
        await self._fetcher.aclose()
