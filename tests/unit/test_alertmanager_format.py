"""Alertmanager's webhook mapped onto publish requests (app/domain/formats/alertmanager.py): an
alert's firing and resolved notifications pair up by its fingerprint, and an over-long summary is
cut rather than refused (Alertmanager does not retry a 4xx)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.domain.events.publish import PublishRequest
from app.domain.formats import alertmanager as am
from app.errors import InvalidInput


def _alert(status: str, **annotations: str) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": "DiskFull", "instance": "db1"},
        "annotations": annotations,
        "startsAt": "2026-11-28T10:00:00Z",
        "fingerprint": "c0ffee0123456789",
    }


def _requests(*alerts: dict[str, Any]) -> list[dict[str, Any]]:
    message = am.notification(orjson.dumps({"version": "4", "receiver": "tocsin", "alerts": list(alerts)}))
    return [orjson.loads(body) for _prefix, body in am.alert_requests(message)]


def test_firing_and_resolved_of_one_alert_pair_up_by_its_fingerprint() -> None:
    firing, resolved = _requests(_alert("firing"), _alert("resolved"))
    assert firing["event_control"] == {"partition_key": "c0ffee0123456789"}
    assert resolved["event_control"] == {"partition_key": "c0ffee0123456789", "action": "resolve"}
    assert firing["attributes"]["idempotency_key"] != resolved["attributes"]["idempotency_key"]
    assert firing["data"]["labels"] == resolved["data"]["labels"] == {"alertname": "DiskFull", "instance": "db1"}
    assert (firing["event"]["name"], firing["data"]["receiver"]) == ("DiskFull", "tocsin")


def test_an_over_long_summary_and_description_are_cut_and_kept_whole_in_data() -> None:
    summary, description = "s" * 5000, "d" * 20000
    [request] = _requests(_alert("firing", summary=summary, description=description))
    checked = PublishRequest.model_validate_json(orjson.dumps(request))
    assert checked.event is not None and checked.event.name is not None and checked.event.description is not None
    assert len(checked.event.name) == am.MAX_NAME_CHARS and checked.event.name.endswith("…")
    assert len(checked.event.description) == am.MAX_DESCRIPTION_CHARS
    assert request["data"]["annotations"] == {"summary": summary, "description": description}


@pytest.mark.parametrize("name", ["labels", "annotations"])
def test_null_labels_or_annotations_are_refused_not_taken_as_empty(name: str) -> None:
    """``labels: null`` was accepted as ``{}`` (outside attacker): it must be an object."""
    with pytest.raises(InvalidInput) as refused:
        _requests({**_alert("firing"), name: None})
    assert refused.value.details["fields"][0]["field"] == f"alerts.0.{name}"
    assert _requests({k: v for k, v in _alert("firing").items() if k != "annotations"})  # absent is still {}


def test_a_body_nested_too_deep_is_said_so() -> None:
    with pytest.raises(InvalidInput) as refused:
        am.notification(b"[" * 2000 + b"]" * 2000)
    assert "nested deeper than 1024 levels" in refused.value.message
