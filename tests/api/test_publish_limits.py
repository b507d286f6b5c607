"""Publish is rate limited per service account and topic, per API replica: 429 RATE-001 with
Retry-After once the burst is spent; another topic or another account has its own budget."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

BODY = {"status": "ACTUAL", "data": {}}


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    limits = {"TOCSIN_PUBLISH_RATE_PER_SECOND": "0.2", "TOCSIN_PUBLISH_BURST": "3"}
    stack = Stack(tmp_path_factory.mktemp("limits"), kafka.bootstrap, extra_env=limits)
    stack.bootstrap()
    stack.start_api()
    with stack.client() as c:
        for key in ("a", "b"):
            assert c.post("/workflow_topics", json={"key": key}).status_code == 201
    yield stack
    stack.stop()


def _second_account(client: httpx.Client, org: str) -> str:
    sa = client.post("/service_accounts", json={"name": "second"}).json()
    bindings = [{"resource": f"crn:tocsin:organizations:{org}", "role_id": "owner"}]
    assert client.put(f"/service_accounts/{sa['id']}/iam", json={"bindings": bindings}).status_code == 200
    return str(client.post(f"/service_accounts/{sa['id']}/access_tokens", json={}).json()["access_token"])


def test_the_burst_then_429_with_retry_after_per_account_and_topic(api: Stack) -> None:
    with api.client() as c:
        codes = [c.post("/workflow_topics/a/publish", json=BODY).status_code for _ in range(3)]
        assert codes == [202, 202, 202]
        limited = c.post("/workflow_topics/a/publish", json=BODY)
        assert limited.status_code == 429, limited.text
        assert limited.json()["code"] == "RATE-001"
        assert 1 <= int(limited.headers["retry-after"]) <= 5  # one token at 0.2/s
        assert c.post("/workflow_topics/b/publish", json=BODY).status_code == 202, "another topic"
        other = _second_account(c, api.org)
    with api.client(other) as c2:
        assert c2.post("/workflow_topics/a/publish", json=BODY).status_code == 202, "another account"
