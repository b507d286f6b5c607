"""End to end with the real Prometheus Alertmanager (Debian's ``prometheus-alertmanager``, installed
by scripts/system-deps.sh): an alert posted to Alertmanager's own API reaches Tocsin through its
webhook receiver (bearer token in ``http_config.authorization``) and opens an incident; the same
alert posted again as ended reaches it as a resolve and the incident is RESOLVED; a resolved alert
naming nothing open is accepted, changes nothing and says so in its trace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.ports import free_port, port_open
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

BINARY = "prometheus-alertmanager"


def _binary() -> str:
    found = shutil.which(BINARY)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {BINARY} (scripts/system-deps.sh does): not found")
        pytest.skip(f"no {BINARY} (apt-get install prometheus-alertmanager; scripts/system-deps.sh installs it)")
    return found


def _config(stack: Stack, topic: str) -> dict[str, Any]:
    """JSON is YAML: Alertmanager's configuration, one webhook receiver pointing at the stack."""
    url = f"{stack.base_url}/v1/organizations/{stack.org}/integrations/alertmanager/{topic}"
    return {
        "global": {"resolve_timeout": "1h"},  # longer than the test: nothing resolves by itself
        "route": {
            "receiver": "tocsin",
            "group_by": ["alertname"],
            "group_wait": "1s",
            "group_interval": "1s",
            "repeat_interval": "24h",
        },
        "receivers": [
            {
                "name": "tocsin",
                "webhook_configs": [
                    {
                        "url": url,
                        "send_resolved": True,
                        "http_config": {
                            "authorization": {"type": "Bearer", "credentials": stack.credentials["access_token"]}
                        },
                    }
                ],
            }
        ],
    }


@pytest.fixture
def alertmanager(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], str]]:
    """Start Alertmanager on loopback with a configuration; its base URL. Stopped after the test."""
    binary = _binary()
    procs: list[tuple[subprocess.Popen[bytes], int]] = []

    def start(config: dict[str, Any]) -> str:
        (tmp_path / "alertmanager.yml").write_text(json.dumps(config))
        port = free_port()
        with (tmp_path / "alertmanager.log").open("ab") as log:
            proc = subprocess.Popen(
                [
                    binary,
                    f"--config.file={tmp_path / 'alertmanager.yml'}",
                    f"--storage.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--cluster.listen-address=",  # else it also binds 0.0.0.0:9094
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        procs.append((proc, port))
        base = f"http://127.0.0.1:{port}"

        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"alertmanager exited: {(tmp_path / 'alertmanager.log').read_text()[-2000:]}")
            try:
                return httpx.get(f"{base}/-/ready", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        wait_for(ready, 30, "alertmanager ready")
        return base

    yield start
    for proc, port in procs:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        assert not port_open("127.0.0.1", port), "alertmanager still listening"


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _post_alert(base: str, labels: dict[str, str], ends_at: datetime) -> None:
    alert = {"labels": labels, "annotations": {"summary": "disk full on db1"}, "endsAt": _stamp(ends_at)}
    r = httpx.post(f"{base}/api/v2/alerts", json=[alert], timeout=10)
    assert r.status_code == 200, r.text


def _incidents(client: httpx.Client, fingerprint: str) -> list[dict[str, Any]]:
    return [i for i in all_incidents(client) if i.get("partition_key") == fingerprint]


def test_an_alert_opens_an_incident_and_its_resolve_resolves_it(
    stack_factory: Callable[..., Stack], alertmanager: Callable[[dict[str, Any]], str]
) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        setup_topic(client, "alerts", {"type": "BYPASS"})
        base = alertmanager(_config(stack, "alerts"))
        labels = {"alertname": "DiskFull", "instance": "db1", "severity": "page"}
        _post_alert(base, labels, datetime.now(UTC) + timedelta(hours=1))
        fingerprint = wait_for(
            lambda: next((a["fingerprint"] for a in httpx.get(f"{base}/api/v2/alerts", timeout=5).json()), None),
            30,
            "the alert in alertmanager",
        )
        [incident] = wait_for(
            lambda: (lambda found: found if found and found[0]["status"] == "OPEN" else None)(
                _incidents(client, fingerprint)
            ),
            60,
            "the alert's incident OPEN",
        )
        assert incident.get("event_id") is None  # no publisher event.id: the resolve pairs by the partition key

        _post_alert(base, labels, datetime.now(UTC))  # ended now: resolved
        wait_for(
            lambda: [i["status"] for i in _incidents(client, fingerprint)] == ["RESOLVED"],
            60,
            "the alert's incident RESOLVED",
        )
        # a resolved alert naming nothing open (as a receiver added after the alert fired sees it):
        # accepted, nothing changes, its trace says so
        never = {"status": "resolved", "fingerprint": "0123456789abcdef", "labels": labels, "annotations": {}}
        r = client.post("/integrations/alertmanager/alerts", json={"version": "4", "alerts": [never]})
        assert r.status_code == 202, r.text
        [event_id] = r.json()["ids"]

        def outcome() -> str | None:
            steps = client.get(f"/events/{event_id}").json().get("steps", [])
            found = [s["outcome"] for s in steps if s.get("step", "").startswith("action:") and "outcome" in s]
            return found[0] if found else None

        assert wait_for(outcome, 60, "the resolve's trace") == "nothing open to resolve"
        assert len(all_incidents(client)) == 1
