"""``GET /metrics`` of a real API process: the collectors, the build info, and the request
histogram labelled by route template and status code (the publish fast path counted too)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

PUBLISH = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"
TOPIC = "/v1/organizations/{org_id}/workflow_topics/{topic}"


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("api"), kafka.bootstrap)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


def _samples(stack: Stack) -> dict[str, list[dict[str, str]]]:
    r = httpx.get(f"{stack.base_url}/metrics", timeout=10)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    found: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(dict(sample.labels))
    return found


def test_metrics_show_collectors_build_info_and_requests_by_route_and_code(api: Stack) -> None:
    with api.client() as client:
        assert client.post("/workflow_topics", json={"key": "quake"}).status_code == 201
        assert client.post("/workflow_topics/quake/publish", json={"status": "ACTUAL", "data": {}}).status_code == 202
        assert client.get("/workflow_topics/nosuch").status_code == 404
        assert client.post("/workflow_topics/nosuch/publish", json={"status": "ACTUAL", "data": {}}).status_code == 404
    assert httpx.get(f"{api.base_url}/no/such/path/{api.org}", timeout=10).status_code == 404

    samples = _samples(api)
    for name in ("process_resident_memory_bytes", "python_gc_objects_collected_total", "python_info"):
        assert name in samples, name
    (build,) = samples["tocsin_build_info"]
    assert build["version"] and build["python"].count(".") == 2 and build["faust"] and build["aiokafka"]

    counted = {(s["method"], s["route"], s["code"]) for s in samples["tocsin_http_request_duration_seconds_count"]}
    assert ("POST", PUBLISH, "202") in counted  # the fast path
    assert ("POST", PUBLISH, "404") in counted
    assert ("GET", TOPIC, "404") in counted
    assert ("POST", "/v1/organizations/{org_id}/workflow_topics", "201") in counted
    assert ("GET", "unmatched", "404") in counted
    routes = {route for _, route, _ in counted}
    assert not any(api.org in route or "quake" in route or "nosuch" in route for route in routes), routes
    buckets = {s["le"] for s in samples["tocsin_http_request_duration_seconds_bucket"] if s["route"] == PUBLISH}
    assert "+Inf" in buckets
    # the names the README and the dashboards already use stay
    assert ("POST", PUBLISH, "202") in {
        (s["method"], s["route"], s["status"]) for s in samples["tocsin_http_requests_total"]
    }
    assert {"outcome": "accepted", "status": "202"} in samples["tocsin_publishes_total"]


def test_the_api_caches_are_bounded_by_their_settings_and_exposed(api: Stack) -> None:
    """README "Memory": the token, topic and rate-limit caches of a replica, with their bounds."""
    with api.client() as client:
        assert client.get("/workflow_topics").status_code == 200  # an authenticated request: a cached token
    text = httpx.get(f"{api.base_url}/metrics", timeout=10).text
    bounds: dict[str, float] = {}
    entries: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "tocsin_cache_max_entries":
                bounds[sample.labels["cache"]] = sample.value
            elif sample.name == "tocsin_cache_entries":
                entries[sample.labels["cache"]] = sample.value
    assert bounds["api_principals"] == 10_000 and bounds["api_topics"] == 10_000
    assert bounds["api_publish_rate_limit"] == 100_000
    assert entries["api_principals"] >= 1
    assert {"api_exchange_credentials", "api_exchange_rate_per_client"} <= set(bounds)
