"""The webhook executor against a replaced transport (app/net/transport.py): what it sends, and
how each kind of failure is classed for the retry schedule. No socket."""

from __future__ import annotations

from typing import Any

import pytest

from app.executors.webhook import WebhookExecutor
from app.net.errors import FetchRefused, TargetRefused
from app.net.transport import PostResult, Transport
from app.settings.delivery import WebhookConfig

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ITEM = {"effect_id": "eff_1", "mode": "ACTUAL", "content": {"url": "https://hooks.example.com/x", "body": "{}"}}


class Recorder:
    """A Transport answering from a script: a result, or an exception to raise."""

    def __init__(self, answer: PostResult | FetchRefused) -> None:
        self.answer = answer
        self.sent: list[tuple[str, bytes, dict[str, str]]] = []

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
        self.sent.append((url, body, headers))
        if isinstance(self.answer, FetchRefused):
            raise self.answer
        return self.answer

    async def get_json(self, url: str) -> dict[str, Any]:
        raise AssertionError("webhooks never GET")

    async def aclose(self) -> None:
        pass


def _executor(transport: Transport) -> WebhookExecutor:
    return WebhookExecutor(WebhookConfig(timeout_s=5, allow_private_networks=False), transport=transport)


async def test_the_signed_body_goes_to_the_transport_and_its_answer_is_the_attempt() -> None:
    transport = Recorder(PostResult(503, {"retry-after": "5"}))
    attempt = await _executor(transport).send(ITEM, SECRET)
    assert (attempt.status_code, attempt.headers, attempt.error) == (503, {"retry-after": "5"}, None)
    [(url, body, headers)] = transport.sent
    assert (url, body) == ("https://hooks.example.com/x", b"{}")
    assert headers["webhook-id"] == "eff_1" and headers["webhook-signature"].startswith("v1,")


@pytest.mark.parametrize(
    ("failure", "permanent"),
    [(TargetRefused("hooks.example.com -> 10.0.0.1: private address refused"), True), (FetchRefused("timeout"), False)],
)
async def test_a_refused_target_is_final_and_a_failed_connection_is_retried(
    failure: FetchRefused, permanent: bool
) -> None:
    attempt = await _executor(Recorder(failure)).send(ITEM, SECRET)
    assert attempt.status_code is None and attempt.error == failure.reason
    assert attempt.permanent is permanent
