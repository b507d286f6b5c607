"""control_policy_profile is validated when a topic is created or changed; METRIC and SET topics
refuse a publish without event_control.partition_key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

METRIC = {"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}], "exit_stable_limit": 3}


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("profiles"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def client(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


_n = iter(range(10_000))


def _create(client: httpx.Client, profile: Any) -> httpx.Response:
    return client.post("/workflow_topics", json={"key": f"t{next(_n)}", "control_policy_profile": profile})


BAD = [
    ("unknown type", {"type": "WINDOW"}),
    ("METRIC without rules", {"type": "METRIC"}),
    ("METRIC with an empty rule list", {"type": "METRIC", "rules": []}),
    ("rule without metric_name", {"type": "METRIC", "rules": [{"threshold": 1}]}),
    ("rule without threshold", {"type": "METRIC", "rules": [{"metric_name": "x"}]}),
    ("empty metric_name", {"type": "METRIC", "rules": [{"metric_name": "", "threshold": 1}]}),
    ("unknown mode", {"type": "METRIC", "rules": [{"metric_name": "x", "mode": "RATE", "threshold": 1}]}),
    ("threshold not a number", {"type": "METRIC", "rules": [{"metric_name": "x", "threshold": "high"}]}),
    ("threshold out of bounds", {"type": "METRIC", "rules": [{"metric_name": "x", "threshold": 1e300}]}),
    ("DELTA threshold 0", {"type": "METRIC", "rules": [{"metric_name": "x", "mode": "DELTA", "threshold": 0}]}),
    ("two rules on one metric", {"type": "METRIC", "rules": [{"metric_name": "x", "threshold": 1}] * 2}),
    ("unknown rule field", {"type": "METRIC", "rules": [{"metric_name": "x", "threshold": 1, "window": 5}]}),
    ("too many rules", {"type": "METRIC", "rules": [{"metric_name": f"m{i}", "threshold": 1} for i in range(21)]}),
    ("negative peak hold", {**METRIC, "peak_hold_duration": -1}),
    ("peak hold over a week", {**METRIC, "peak_hold_duration": 10_081}),
    ("negative exit_stable_limit", {**METRIC, "exit_stable_limit": -1}),
    ("fractional exit_stable_limit", {**METRIC, "exit_stable_limit": 1.5}),
    ("auto-resolve over 30 days", {**METRIC, "auto_resolve_duration": 43_201}),
    ("negative auto-resolve", {**METRIC, "auto_resolve_duration": -0.5}),
    ("unknown status", {**METRIC, "status": "PAUSED"}),
    ("unknown field", {**METRIC, "cooldown": 5}),
    ("SET with rules", {"type": "SET", "rules": [{"metric_name": "x", "threshold": 1}]}),
    ("SET with exit_stable_limit", {"type": "SET", "exit_stable_limit": 2}),
    ("BYPASS with auto-resolve", {"type": "BYPASS", "auto_resolve_duration": 5}),
    ("not an object", ["METRIC"]),
]


@pytest.mark.parametrize("profile", [b for _, b in BAD], ids=[n for n, _ in BAD])
def test_invalid_profiles_are_422_with_the_field(client: httpx.Client, profile: Any) -> None:
    r = _create(client, profile)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "VAL-001"
    assert any(f["field"].startswith("control_policy_profile") for f in body["details"]["fields"]), body


GOOD = [
    ("METRIC ABSOLUTE", METRIC),
    ("METRIC DELTA", {"type": "METRIC", "rules": [{"metric_name": "x", "mode": "DELTA", "threshold": 0.5}]}),
    ("METRIC with hold and auto-resolve", {**METRIC, "peak_hold_duration": 30, "auto_resolve_duration": 0.5}),
    ("SET", {"type": "SET", "auto_resolve_duration": 60}),
    ("INACTIVE METRIC", {**METRIC, "status": "INACTIVE"}),
    ("BYPASS", {"type": "BYPASS"}),
]


@pytest.mark.parametrize("profile", [b for _, b in GOOD], ids=[n for n, _ in GOOD])
def test_valid_profiles_are_stored_as_given(client: httpx.Client, profile: dict[str, Any]) -> None:
    r = _create(client, profile)
    assert r.status_code == 201, r.text
    stored = r.json()["control_policy_profile"]
    assert {k: stored[k] for k in profile if k != "rules"} == {k: v for k, v in profile.items() if k != "rules"}
    got = client.get(f"/workflow_topics/{r.json()['id']}").json()["control_policy_profile"]
    assert got == stored


def test_patch_validates_and_replaces_the_profile(client: httpx.Client) -> None:
    topic = _create(client, METRIC).json()
    bad = client.patch(f"/workflow_topics/{topic['id']}", json={"control_policy_profile": {"type": "METRIC"}})
    assert bad.status_code == 422 and bad.json()["code"] == "VAL-001"
    assert client.patch(f"/workflow_topics/{topic['id']}", json={"key": "renamed"}).status_code == 422
    ok = client.patch(
        f"/workflow_topics/{topic['id']}",
        json={"name_en": "River", "control_policy_profile": {"type": "SET", "auto_resolve_duration": 5}},
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["name_en"] == "River" and ok.json()["control_policy_profile"]["type"] == "SET"
    assert ok.json()["key"] == topic["key"]
    cleared = client.patch(f"/workflow_topics/{topic['id']}", json={"control_policy_profile": None})
    assert cleared.status_code == 200 and "control_policy_profile" not in cleared.json()


@pytest.mark.parametrize("profile", [METRIC, {"type": "SET"}], ids=["METRIC", "SET"])
def test_metric_and_set_topics_refuse_a_publish_without_partition_key(
    client: httpx.Client, profile: dict[str, Any]
) -> None:
    topic = _create(client, profile).json()
    for body in (
        {"status": "ACTUAL", "data": {}},
        {"status": "ACTUAL", "data": {}, "event_control": {"metrics": {"level": 5}}},
    ):
        r = client.post(f"/workflow_topics/{topic['id']}/publish", json=body)
        assert r.status_code == 422, r.text
        required = {"field": "event_control.partition_key", "message": "required", "type": "missing"}
        assert r.json()["details"]["fields"] == [required]
    ok = client.post(
        f"/workflow_topics/{topic['id']}/publish",
        json={"status": "ACTUAL", "data": {}, "event_control": {"partition_key": "p", "metrics": {"level": 5}}},
    )
    assert ok.status_code == 202, ok.text


def test_an_inactive_policy_publishes_without_partition_key(client: httpx.Client) -> None:
    topic = _create(client, {**METRIC, "status": "INACTIVE"}).json()
    r = client.post(f"/workflow_topics/{topic['id']}/publish", json={"status": "ACTUAL", "data": {}})
    assert r.status_code == 202, r.text


def test_control_state_needs_a_partition_key_and_a_known_status(client: httpx.Client) -> None:
    topic = _create(client, METRIC).json()
    url = f"/workflow_topics/{topic['id']}/control_state"
    assert client.get(url).status_code == 422
    assert client.get(url, params={"partition_key": "p", "status": "LIVE"}).status_code == 422
    assert client.get(url, params={"partition_key": "x" * 257}).status_code == 422
    empty = client.get(url, params={"partition_key": "p"})
    assert empty.status_code == 200, empty.text
    assert empty.json() == {
        "partition_key": "p",
        "status": "ACTUAL",
        "policy_type": "METRIC",
        "episode_open": False,
        "peak": {},
        "last_values": {},
        "stable_count": 0,
        "set_members": [],
        "last_decision": None,
        "auto_resolve_at": None,
        "updated_at": None,
    }
    assert client.get("/workflow_topics/nope/control_state", params={"partition_key": "p"}).status_code == 404
