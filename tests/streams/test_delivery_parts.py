"""The delivery stage's parts without a broker: the webhook executor's SSRF guard at delivery
time, redeliveries recognised, and attempts turned into verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.delivery.deliveries import already_attempted
from app.domain.delivery.delivery_verdicts import Attempt, Verdict
from app.domain.delivery.webhooks import new_secret
from app.executors.webhook import WebhookExecutor
from app.settings.delivery import WebhookConfig
from streams.attempts import verdict_of


def _item(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "effect_id": "act_0000000000000000000000test",
        "mode": "ACTUAL",
        "attempt": 1,
        "content": {"url": url, "body": '{"event_id":"evt_1"}'},
        **extra,
    }


# Every target the SSRF guard refuses at delivery time, whatever the URL looked like when saved.
SSRF_TARGETS = [
    "https://127.0.0.1/hook",
    "https://[::1]/hook",
    "https://10.1.2.3/hook",
    "https://172.16.0.5/hook",
    "https://192.168.1.1/hook",
    "https://169.254.169.254/latest/meta-data",  # cloud metadata
    "https://100.64.0.1/hook",  # CGNAT
    "https://0.0.0.0/hook",
    "https://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "https://[fd00::1]/hook",  # IPv6 ULA
    "https://2130706433/hook",  # 127.0.0.1 as one decimal number
    "https://0x7f.1/hook",  # 127.0.0.1 in hex shorthand
    "http://hooks.example.com/hook",  # plain http without the private-network setting
    "https://user:pw@hooks.example.com/hook",
]


@pytest.mark.parametrize("url", SSRF_TARGETS)
async def test_webhook_targets_refused_at_delivery_are_permanent(url: str) -> None:
    executor = WebhookExecutor(WebhookConfig(timeout_s=2, allow_private_networks=False))
    try:
        attempt = await executor.send(_item(url), new_secret())
    finally:
        await executor.aclose()
    assert attempt.status_code is None and attempt.error
    assert attempt.permanent, attempt.error
    assert verdict_of(attempt, 1, 0.0).verdict is Verdict.DEAD


async def test_an_unreachable_receiver_is_retried_not_refused() -> None:
    executor = WebhookExecutor(WebhookConfig(timeout_s=2, allow_private_networks=True))
    try:
        attempt = await executor.send(_item("http://127.0.0.1:9/hook"), new_secret())  # discard port: refused
    finally:
        await executor.aclose()
    assert attempt.error and not attempt.permanent
    outcome = verdict_of(attempt, 1, 0.0)
    assert outcome.verdict is Verdict.RETRY and outcome.delay_s is not None and outcome.delay_s > 0


async def test_a_webhook_without_secret_is_not_sent() -> None:
    executor = WebhookExecutor(WebhookConfig(timeout_s=2, allow_private_networks=True))
    try:
        attempt = await executor.send(_item("http://127.0.0.1:9/hook"), None)
    finally:
        await executor.aclose()
    assert attempt.permanent and attempt.error == "the webhook action has no secret"


@pytest.mark.parametrize(
    ("item", "state", "expected"),
    [
        ({"attempt": 1}, None, False),
        ({"attempt": 1}, ("RETRYING", 1, 0), True),  # attempt 1 was stored: a redelivery
        ({"attempt": 2}, ("RETRYING", 1, 0), False),
        ({"attempt": 2}, ("DELIVERED", 1, 0), True),
        ({"attempt": 3}, ("DEAD", 3, 0), True),
        ({"attempt": 1, "replay": 1}, ("PENDING", 0, 1), False),  # a replay of a dead letter
        ({"attempt": 3}, ("PENDING", 0, 1), True),  # an old retry arriving after the replay began
        ({"attempt": 1, "replay": 1}, ("DELIVERED", 1, 1), True),
    ],
)
def test_redeliveries_are_recognised(item: dict[str, Any], state: tuple[str, int, int] | None, expected: bool) -> None:
    assert already_attempted(item, state) is expected


@pytest.mark.parametrize(
    ("attempt", "verdict"),
    [
        (Attempt(status_code=204), Verdict.DELIVERED),
        (Attempt(status_code=250), Verdict.DELIVERED),  # SMTP accepted
        (Attempt(status_code=307), Verdict.RETRY),
        (Attempt(status_code=410), Verdict.DISABLE),
        (Attempt(status_code=503, headers={"retry-after": "2"}), Verdict.RETRY),
        (Attempt(error="timeout"), Verdict.RETRY),
        (Attempt(error="expired", expired=True), Verdict.DEAD),
        (Attempt(status_code=550, error="mailbox unavailable", permanent=True), Verdict.DEAD),
    ],
)
def test_attempts_become_verdicts(attempt: Attempt, verdict: Verdict) -> None:
    assert verdict_of(attempt, 1, 0.0).verdict is verdict
