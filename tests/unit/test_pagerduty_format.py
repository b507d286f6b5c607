"""PagerDuty Events v2 events mapped onto publish requests (app/domain/formats/pagerduty.py): a
trigger and its acknowledge or resolve pair up by the dedup key, an over-long summary is cut as
Events v2 truncates it, and every fault of an event is listed in Events v2's words."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from app.domain.events.publish import PublishRequest
from app.domain.formats import pagerduty as pd


def _event(**fields: Any) -> bytes:
    event = {
        "routing_key": "tpk_key",
        "event_action": "trigger",
        "dedup_key": "web-1/disk",
        "payload": {"summary": "disk full", "source": "web-1", "severity": "error", "custom_details": {"free": 3}},
        "links": [{"href": "https://grafana/d/1", "text": "dashboard"}],
    }
    return orjson.dumps({k: v for k, v in {**event, **fields}.items() if v is not None})


def _request(event_body: bytes, given: str = "evt_given") -> dict[str, Any]:
    event = pd.parse_event(event_body)
    body = pd.publish_request(event, event.dedup_key or given)
    PublishRequest.model_validate_json(body)  # a valid native request
    request: dict[str, Any] = orjson.loads(body)
    return request


def test_trigger_and_resolve_of_one_dedup_key_pair_up() -> None:
    trigger = _request(_event())
    resolve = _request(_event(event_action="resolve", payload=None))
    acknowledge = _request(_event(event_action="acknowledge", payload=None))
    assert trigger["event_control"] == {"partition_key": "web-1/disk"}
    assert trigger["event"] == {"id": "web-1/disk", "name": "disk full"}
    assert trigger["data"]["custom_details"] == {"free": 3} and trigger["data"]["links"][0]["text"] == "dashboard"
    assert trigger["data"]["severity"] == "error" and trigger["status"] == "ACTUAL"
    assert resolve["event_control"] == {"partition_key": "web-1/disk", "action": "resolve"}
    assert acknowledge["event_control"] == {"partition_key": "web-1/disk", "action": "acknowledge"}
    assert resolve["event"] == {"id": "web-1/disk"}


def test_a_trigger_without_dedup_key_is_keyed_by_the_key_given_to_it() -> None:
    request = _request(_event(dedup_key=None), given="evt_123")
    assert request["event_control"]["partition_key"] == request["data"]["dedup_key"] == "evt_123"


def test_an_over_long_summary_is_cut_not_refused() -> None:
    request = _request(_event(payload={"summary": "s" * 5000, "source": "x", "severity": "info"}))
    assert len(request["event"]["name"]) == pd.MAX_SUMMARY_CHARS and request["event"]["name"].endswith("…")
    assert len(request["data"]["summary"]) == 5000


@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        (
            {"routing_key": None, "payload": {"severity": "fatal"}},
            [
                "'routing_key' is missing or blank",
                "'payload.summary' is missing or blank",
                "'payload.source' is missing or blank",
                "'payload.severity' is missing or invalid (critical, error, warning or info)",
            ],
        ),
        ({"event_action": "snooze"}, ["'event_action' is missing or invalid (trigger, acknowledge or resolve)"]),
        ({"event_action": "acknowledge", "dedup_key": None}, ["'dedup_key' is required to acknowledge"]),
        ({"links": "https://x"}, ["'links' must be an array"]),
        (
            {"payload": {"summary": "s", "source": "x", "severity": "info", "class": 3}},
            ["'payload.class' must be a string"],
        ),
    ],
)
def test_every_fault_of_an_event_is_listed(fields: dict[str, Any], errors: list[str]) -> None:
    with pytest.raises(pd.InvalidEvent) as refused:
        pd.parse_event(_event(**fields))
    assert refused.value.errors == errors


def test_refused_publish_fields_are_named_by_the_event_fields_behind_them() -> None:
    assert pd.event_field("data.custom_details.a.b") == "payload.custom_details.a.b"
    assert pd.event_field("event_control.partition_key") == "dedup_key"
    assert pd.event_field("event.name") == "payload.summary"
    assert pd.event_field("") == ""


def test_details_nested_past_what_json_encoders_take_are_refused_not_crashed() -> None:
    deep: Any = 1
    for _ in range(300):
        deep = {"d": deep}
    payload = {"summary": "s", "source": "x", "severity": "info", "custom_details": deep}
    body = json.dumps({"routing_key": "tpk_k", "event_action": "trigger", "payload": payload}).encode()
    event = pd.parse_event(body)  # orjson reads 300 levels, but writes at most 255
    with pytest.raises(pd.InvalidEvent) as refused:
        pd.publish_request(event, "k")
    assert refused.value.errors == ["'payload.custom_details' is nested too deeply"]


def test_a_body_nested_deeper_than_the_reader_takes_is_said_so_not_called_invalid_json() -> None:
    """Valid JSON 2000 levels deep answered "the body is not valid JSON" (outside attacker)."""
    deep = "[" * 2000 + "]" * 2000
    body = b'{"routing_key": "tpk_k", "event_action": "trigger", "payload": {"custom_details": ' + deep.encode() + b"}}"
    assert body.count(b"[") == 2000  # valid JSON, only deep
    with pytest.raises(pd.InvalidEvent) as refused:
        pd.parse_event(body)
    assert refused.value.errors == ["the body is nested too deep (more than 1024 levels)"]
    with pytest.raises(pd.InvalidEvent) as refused:
        pd.parse_event(b"{nope")
    assert refused.value.errors == ["the body is not valid JSON"]
