"""Push content and its APNs / FCM HTTP v1 payloads, checked against payloads written out by hand."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from app.domain.delivery.push import (
    PushContent,
    PushSound,
    apns_payload,
    apns_request,
    expired,
    fcm_payload,
    push_content,
    remaining_ttl,
)
from app.domain.events.notification import NotificationObject

NOW_S = 1_700_000_000
TOPIC = "Quakes"


def _record(
    options: dict[str, Any] | None = None,
    *,
    status: str = "ACTUAL",
    event: dict[str, Any] | None = None,
    lang: str | None = "ja",
    data: dict[str, Any] | None = None,
    with_notification: bool = True,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "evt_1",
        "status": status,
        "event": {"id": "pub-1", "name": "Quake", "description": "M5 in Kanto"} if event is None else event,
        "data": {"magnitude": 5},
    }
    if with_notification:
        notification: dict[str, Any] = {"alert": {"options": options or {}}}
        if lang is not None:
            notification["lang"] = lang
        if data is not None:
            notification["data"] = data
        record["notification"] = notification
    return record


def _text(**fields: Any) -> dict[str, Any]:
    return {"notification": {"title": "Earthquake", "body": "Take cover", **fields}}


def _push(options: dict[str, Any] | None = None, decision: str = "NOTIFY", **kwargs: Any) -> PushContent:
    return push_content(_record(options, **kwargs), TOPIC, decision)


# --- every field of the notification object ---------------------------------------------------


def test_title_and_body_make_the_whole_apns_request_and_fcm_message() -> None:
    c = _push(_text())
    expected_apns = {
        "headers": {"apns-priority": "10", "apns-push-type": "alert"},
        "payload": {
            "aps": {"alert": {"title": "Earthquake", "body": "Take cover"}, "sound": "default"},
            "data": {},
            "tocsin_mode": "ACTUAL",
            "tocsin_lang": "ja",
            "tocsin_topic": "Quakes",
            "tocsin_release": False,
            "tocsin_event_id": "evt_1",
        },
    }
    assert apns_request(c, NOW_S) == expected_apns
    assert apns_payload(c) == expected_apns["payload"]
    assert fcm_payload(c, NOW_S) == {
        "notification": {"title": "Earthquake", "body": "Take cover"},
        "data": {
            "tocsin_mode": "ACTUAL",
            "tocsin_lang": "ja",
            "tocsin_topic": "Quakes",
            "tocsin_release": "false",
            "tocsin_event_id": "evt_1",
        },
        "android": {"priority": "HIGH", "notification": {"sound": "default"}},
        "apns": {
            "headers": {"apns-priority": "10", "apns-push-type": "alert"},
            "payload": {
                "aps": {"alert": {"title": "Earthquake", "body": "Take cover"}, "sound": "default"},
                "data": {},
                "tocsin_mode": "ACTUAL",
                "tocsin_lang": "ja",
                "tocsin_topic": "Quakes",
                "tocsin_release": False,
                "tocsin_event_id": "evt_1",
            },
        },
    }


def test_sound_as_a_string_is_the_sound_name() -> None:
    c = _push(_text(sound="siren.caf"))
    assert apns_payload(c)["aps"] == {"alert": {"title": "Earthquake", "body": "Take cover"}, "sound": "siren.caf"}
    assert fcm_payload(c, NOW_S)["android"] == {"priority": "HIGH", "notification": {"sound": "siren.caf"}}


def test_sound_object_critical_0_is_a_plain_sound_name_and_its_volume_does_not_apply() -> None:
    c = _push(_text(sound={"critical": 0, "name": "chime", "volume": 0.4}))
    assert c.sound == PushSound(name="chime", critical=False, volume=0.4)
    assert apns_payload(c)["aps"] == {"alert": {"title": "Earthquake", "body": "Take cover"}, "sound": "chime"}
    assert fcm_payload(c, NOW_S)["android"] == {"priority": "HIGH", "notification": {"sound": "chime"}}


def test_sound_object_critical_1_with_name_and_volume_defaults() -> None:
    c = _push(_text(sound={"critical": 1}))
    expected_aps = {
        "alert": {"title": "Earthquake", "body": "Take cover"},
        "sound": {"critical": 1, "name": "default", "volume": 1.0},
        "interruption-level": "critical",
    }
    assert apns_payload(c)["aps"] == expected_aps
    fcm = fcm_payload(c, NOW_S)
    assert fcm["android"] == {
        "priority": "HIGH",
        "notification": {"sound": "default", "notification_priority": "PRIORITY_MAX"},
    }
    assert fcm["apns"]["payload"]["aps"] == expected_aps


def test_sound_object_critical_1_with_a_given_name_and_volume() -> None:
    c = _push(_text(sound={"critical": 1.0, "name": "alarm.caf", "volume": 0.25}))
    assert apns_payload(c)["aps"]["sound"] == {"critical": 1, "name": "alarm.caf", "volume": 0.25}
    assert fcm_payload(c, NOW_S)["apns"]["payload"]["aps"]["sound"] == {
        "critical": 1,
        "name": "alarm.caf",
        "volume": 0.25,
    }


def test_critical_volume_bounds_are_kept_as_given() -> None:
    assert apns_payload(_push(_text(sound={"critical": 1, "volume": 0})))["aps"]["sound"] == {
        "critical": 1,
        "name": "default",
        "volume": 0.0,
    }
    assert apns_payload(_push(_text(sound={"critical": 1, "volume": 1})))["aps"]["sound"] == {
        "critical": 1,
        "name": "default",
        "volume": 1.0,
    }


def test_thread_id_groups_on_ios_and_travels_in_fcm_data() -> None:
    c = _push({**_text(), "thread_id": "quake-kanto"})
    assert apns_payload(c)["aps"] == {
        "alert": {"title": "Earthquake", "body": "Take cover"},
        "sound": "default",
        "thread-id": "quake-kanto",
    }
    assert fcm_payload(c, NOW_S)["data"] == {
        "tocsin_mode": "ACTUAL",
        "tocsin_lang": "ja",
        "tocsin_topic": "Quakes",
        "tocsin_release": "false",
        "tocsin_event_id": "evt_1",
        "tocsin_thread_id": "quake-kanto",
    }


def test_collapse_id_is_an_apns_header_and_the_android_collapse_key_and_tag() -> None:
    c = _push({**_text(), "collapse_id": "quake-42"})
    assert apns_request(c, NOW_S)["headers"] == {
        "apns-priority": "10",
        "apns-push-type": "alert",
        "apns-collapse-id": "quake-42",
    }
    fcm = fcm_payload(c, NOW_S)
    assert fcm["android"] == {
        "priority": "HIGH",
        "collapse_key": "quake-42",
        "notification": {"sound": "default", "tag": "quake-42"},
    }
    assert fcm["apns"]["headers"] == {
        "apns-priority": "10",
        "apns-push-type": "alert",
        "apns-collapse-id": "quake-42",
    }


def test_collapse_id_over_64_bytes_becomes_its_sha256_for_apns_only() -> None:
    c = _push({**_text(), "collapse_id": "c" * 70})
    digest = "6fe5981a314622bb624db8ecb4fdcd5b38997ee6a13c2ed85e5a5b4f424de25c"
    assert apns_request(c, NOW_S)["headers"]["apns-collapse-id"] == digest
    fcm = fcm_payload(c, NOW_S)
    assert fcm["apns"]["headers"]["apns-collapse-id"] == digest
    assert fcm["android"]["collapse_key"] == "c" * 70
    exactly_64 = _push({**_text(), "collapse_id": "d" * 64})
    assert apns_request(exactly_64, NOW_S)["headers"]["apns-collapse-id"] == "d" * 64


def test_time_to_live_is_the_apns_expiration_and_the_android_ttl() -> None:
    c = _push({**_text(), "time_to_live": 60})
    assert apns_request(c, NOW_S)["headers"] == {
        "apns-priority": "10",
        "apns-push-type": "alert",
        "apns-expiration": "1700000060",
    }
    fcm = fcm_payload(c, NOW_S)
    assert fcm["android"] == {"priority": "HIGH", "ttl": "60s", "notification": {"sound": "default"}}
    assert fcm["apns"]["headers"]["apns-expiration"] == "1700000060"


def test_time_to_live_0_is_deliver_now_or_never_for_both_providers() -> None:
    c = _push({**_text(), "time_to_live": 0})
    assert apns_request(c, NOW_S)["headers"]["apns-expiration"] == "0"
    assert fcm_payload(c, NOW_S)["android"]["ttl"] == "0s"


def test_fractional_time_to_live() -> None:
    c = _push({**_text(), "time_to_live": 2.5})
    assert apns_request(c, NOW_S)["headers"]["apns-expiration"] == "1700000002"
    assert fcm_payload(c, NOW_S)["android"]["ttl"] == "2.5s"
    assert fcm_payload(_push({**_text(), "time_to_live": 0.125}), NOW_S)["android"]["ttl"] == "0.125s"


def test_time_to_live_beyond_four_weeks_is_capped_for_fcm_only() -> None:
    c = _push({**_text(), "time_to_live": 3_000_000})
    assert fcm_payload(c, NOW_S)["android"]["ttl"] == "2419200s"
    assert apns_request(c, NOW_S)["headers"]["apns-expiration"] == "1703000000"


def test_no_time_to_live_sets_no_expiry() -> None:
    c = _push(_text())
    assert "apns-expiration" not in apns_request(c, NOW_S)["headers"]
    assert "ttl" not in fcm_payload(c, NOW_S)["android"]


def test_an_infinite_time_to_live_in_a_record_means_no_expiry() -> None:
    c = _push({**_text(), "time_to_live": float("inf")})
    assert c.time_to_live is None


def test_lang_is_carried_to_the_app() -> None:
    c = _push(_text(), lang="en")
    assert apns_payload(c)["tocsin_lang"] == "en"
    assert fcm_payload(c, NOW_S)["data"]["tocsin_lang"] == "en"
    assert _push(_text(), lang=None, event={"name": "Quake", "lang": "fr"}).lang == "fr"
    assert _push(_text(), lang=None, event={}).lang == "ja"


def test_custom_data_keeps_its_types_for_apns_and_is_strings_for_fcm() -> None:
    data = {"code": "Q-1", "magnitude": 5.5, "depth": 10, "tsunami": False, "areas": ["kanto"], "extra": None}
    c = _push(_text(), data=data)
    assert apns_payload(c)["data"] == {
        "code": "Q-1",
        "magnitude": 5.5,
        "depth": 10,
        "tsunami": False,
        "areas": ["kanto"],
        "extra": None,
    }
    assert fcm_payload(c, NOW_S)["data"] == {
        "code": "Q-1",
        "magnitude": "5.5",
        "depth": "10",
        "tsunami": "false",
        "areas": '["kanto"]',
        "extra": "null",
        "tocsin_mode": "ACTUAL",
        "tocsin_lang": "ja",
        "tocsin_topic": "Quakes",
        "tocsin_release": "false",
        "tocsin_event_id": "evt_1",
    }


def test_fcm_json_encoding_is_compact_sorted_and_keeps_unicode() -> None:
    c = _push(_text(), data={"where": {"z": 1, "a": "東京"}})
    assert fcm_payload(c, NOW_S)["data"]["where"] == '{"a":"東京","z":1}'


def test_custom_data_cannot_spoof_the_tocsin_keys() -> None:
    c = _push(_text(), data={"tocsin_mode": "ACTUAL"}, status="DRILL")
    assert fcm_payload(c, NOW_S)["data"]["tocsin_mode"] == "DRILL"
    assert apns_payload(c)["tocsin_mode"] == "DRILL"
    assert apns_payload(c)["data"] == {"tocsin_mode": "ACTUAL"}


def test_content_data_is_a_read_only_copy() -> None:
    data: dict[str, Any] = {"nested": {"n": 1}}
    c = _push(_text(), data=data)
    data["nested"]["n"] = 2
    with pytest.raises(TypeError):
        c.data["x"] = 1  # type: ignore[index]
    payload = apns_payload(c)
    payload["data"]["nested"]["n"] = 3
    assert c.data == {"nested": {"n": 1}}
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.title = "x"  # type: ignore[misc]


# --- fallback content ----------------------------------------------------------------------------


def test_without_notification_title_is_event_name_and_body_event_description() -> None:
    c = push_content(_record(with_notification=False), TOPIC, "NOTIFY")
    assert apns_request(c, NOW_S) == {
        "headers": {"apns-priority": "10", "apns-push-type": "alert"},
        "payload": {
            "aps": {"alert": {"title": "Quake", "body": "M5 in Kanto"}, "sound": "default"},
            "data": {},
            "tocsin_mode": "ACTUAL",
            "tocsin_lang": "ja",
            "tocsin_topic": "Quakes",
            "tocsin_release": False,
            "tocsin_event_id": "evt_1",
        },
    }
    assert fcm_payload(c, NOW_S)["notification"] == {"title": "Quake", "body": "M5 in Kanto"}


def test_without_event_name_the_title_is_the_topic_name_and_the_body_empty() -> None:
    c = push_content(_record(with_notification=False, event={}), TOPIC, "NOTIFY")
    assert apns_payload(c)["aps"]["alert"] == {"title": "Quakes", "body": ""}
    c = push_content({"id": "evt_2", "status": "ACTUAL", "data": {}}, TOPIC, "NOTIFY")
    assert fcm_payload(c, NOW_S)["notification"] == {"title": "Quakes", "body": ""}


def test_a_notification_without_title_or_body_falls_back_field_by_field() -> None:
    c = _push({"notification": {"sound": "siren.caf"}})
    assert apns_payload(c)["aps"] == {"alert": {"title": "Quake", "body": "M5 in Kanto"}, "sound": "siren.caf"}
    c = _push({"notification": {"title": "", "body": "Only a body"}})
    assert apns_payload(c)["aps"]["alert"] == {"title": "Quake", "body": "Only a body"}


def test_the_published_event_data_is_not_the_push_data() -> None:
    c = push_content(_record(with_notification=False), TOPIC, "NOTIFY")
    assert c.data == {}


# --- modes and the release notice ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "title"),
    [("ACTUAL", "Earthquake"), ("DRILL", "[DRILL] Earthquake"), ("TEST", "[TEST] Earthquake")],
)
def test_drill_and_test_are_stamped_on_the_title(status: str, title: str) -> None:
    c = _push(_text(), status=status)
    assert apns_payload(c)["aps"]["alert"] == {"title": title, "body": "Take cover"}
    assert apns_payload(c)["tocsin_mode"] == status
    assert fcm_payload(c, NOW_S)["notification"] == {"title": title, "body": "Take cover"}
    assert fcm_payload(c, NOW_S)["data"]["tocsin_mode"] == status


def test_the_fallback_title_is_stamped_too() -> None:
    c = push_content(_record(with_notification=False, event={}, status="TEST"), TOPIC, "NOTIFY")
    assert c.title == "[TEST] Quakes"


def test_a_resolve_is_a_release_notice() -> None:
    c = _push(_text(), decision="RESOLVE")
    assert apns_payload(c) == {
        "aps": {"alert": {"title": "Resolved: Earthquake", "body": "Take cover"}, "sound": "default"},
        "data": {},
        "tocsin_mode": "ACTUAL",
        "tocsin_lang": "ja",
        "tocsin_topic": "Quakes",
        "tocsin_release": True,
        "tocsin_event_id": "evt_1",
    }
    fcm = fcm_payload(c, NOW_S)
    assert fcm["notification"] == {"title": "Resolved: Earthquake", "body": "Take cover"}
    assert fcm["data"]["tocsin_release"] == "true"


def test_a_drill_release_carries_the_stamp_first() -> None:
    c = _push(_text(), decision="RESOLVE", status="DRILL")
    assert c.title == "[DRILL] Resolved: Earthquake"
    assert push_content(_record(with_notification=False), TOPIC, "RESOLVE").title == "Resolved: Quake"


def test_prefixes_already_in_the_title_are_not_repeated() -> None:
    c = _push({"notification": {"title": "[DRILL] Resolved: Earthquake"}}, decision="RESOLVE", status="DRILL")
    assert c.title == "[DRILL] Resolved: Earthquake"
    assert _push({"notification": {"title": "[DRILL] Earthquake"}}, status="DRILL").title == "[DRILL] Earthquake"
    assert _push({"notification": {"title": "Resolved: Earthquake"}}, decision="RESOLVE").title == (
        "Resolved: Earthquake"
    )
    assert _push({"notification": {"title": "Resolved: Earthquake"}}, decision="RESOLVE", status="TEST").title == (
        "[TEST] Resolved: Earthquake"
    )


@pytest.mark.parametrize("decision", ["SUPPRESS", "BOGUS"])
def test_only_notify_and_resolve_make_a_push(decision: str) -> None:
    with pytest.raises(ValueError, match="sends no push"):
        _push(_text(), decision=decision)


def test_an_unknown_status_is_refused() -> None:
    with pytest.raises(ValueError):
        _push(_text(), status="LIVE")


@pytest.mark.parametrize(
    "sound",
    [
        {"critical": 1, "volume": 1.5},
        {"critical": 1, "volume": -0.1},
        {"critical": 1, "volume": "0.5"},
        {"critical": True},
        42,
    ],
)
def test_a_malformed_record_sound_is_refused_not_clamped(sound: Any) -> None:
    with pytest.raises(ValueError):
        _push(_text(sound=sound))


@pytest.mark.parametrize("volume", [1.5, -0.1, float("nan")])
def test_push_sound_volume_must_be_within_0_and_1(volume: float) -> None:
    with pytest.raises(ValueError, match="volume"):
        PushSound(critical=True, volume=volume)


@pytest.mark.parametrize("ttl", [-1, float("nan"), "60", True])
def test_a_malformed_record_time_to_live_is_refused(ttl: Any) -> None:
    with pytest.raises(ValueError, match="time_to_live"):
        _push({**_text(), "time_to_live": ttl})


# --- expiry ----------------------------------------------------------------------------------


ACCEPTED_MS = 1_700_000_000_000


def test_no_time_to_live_never_expires() -> None:
    assert expired(ACCEPTED_MS, None, ACCEPTED_MS + 10**12) is False
    assert expired(ACCEPTED_MS, float("inf"), ACCEPTED_MS + 10**12) is False


def test_expiry_boundary_the_deadline_itself_is_still_in_time() -> None:
    assert expired(ACCEPTED_MS, 60, ACCEPTED_MS) is False
    assert expired(ACCEPTED_MS, 60, ACCEPTED_MS + 60_000) is False
    assert expired(ACCEPTED_MS, 60, ACCEPTED_MS + 60_001) is True
    assert expired(ACCEPTED_MS, 2.5, ACCEPTED_MS + 2_500) is False
    assert expired(ACCEPTED_MS, 2.5, ACCEPTED_MS + 2_501) is True


def test_ttl_0_is_now_or_never_within_the_dispatch_window() -> None:
    assert expired(ACCEPTED_MS, 0, ACCEPTED_MS) is False
    assert expired(ACCEPTED_MS, 0, ACCEPTED_MS + 1_000) is False
    assert expired(ACCEPTED_MS, 0, ACCEPTED_MS + 1_001) is True
    # A ttl shorter than the window is "now" as well.
    assert expired(ACCEPTED_MS, 0.2, ACCEPTED_MS + 1_000) is False
    assert expired(ACCEPTED_MS, 0.2, ACCEPTED_MS + 1_001) is True


def test_a_clock_behind_the_acceptance_does_not_expire() -> None:
    assert expired(ACCEPTED_MS, 0, ACCEPTED_MS - 5_000) is False


def test_a_negative_ttl_is_an_error() -> None:
    with pytest.raises(ValueError):
        expired(ACCEPTED_MS, -1, ACCEPTED_MS)


def test_remaining_ttl_gives_providers_the_acceptance_based_deadline() -> None:
    assert remaining_ttl(ACCEPTED_MS, None, ACCEPTED_MS + 5_000) is None
    assert remaining_ttl(ACCEPTED_MS, 60, ACCEPTED_MS + 15_000) == 45.0
    assert remaining_ttl(ACCEPTED_MS, 60, ACCEPTED_MS + 61_000) == 0.0
    assert remaining_ttl(ACCEPTED_MS, 60, ACCEPTED_MS - 1_000) == 60.0
    c = dataclasses.replace(
        _push({**_text(), "time_to_live": 60}), time_to_live=remaining_ttl(ACCEPTED_MS, 60, ACCEPTED_MS + 15_000)
    )
    assert apns_request(c, NOW_S + 15)["headers"]["apns-expiration"] == "1700000060"
    assert fcm_payload(c, NOW_S + 15)["android"]["ttl"] == "45s"
    gone = dataclasses.replace(c, time_to_live=remaining_ttl(ACCEPTED_MS, 0, ACCEPTED_MS + 500))
    assert apns_request(gone, NOW_S)["headers"]["apns-expiration"] == "0"


# --- the notification object model ---------------------------------------------------------------


FULL_OBJECT: dict[str, Any] = {
    "lang": "en",
    "data": {"anything": [1, {"goes": None}]},
    "alert": {
        "options": {
            "notification": {
                "title": "Earthquake",
                "body": "Take cover",
                "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5},
            },
            "thread_id": "quake",
            "collapse_id": "quake-42",
            "time_to_live": 60,
        }
    },
}


def test_the_model_accepts_the_full_object() -> None:
    parsed = NotificationObject.model_validate(FULL_OBJECT)
    assert parsed.model_dump() == {
        "lang": "en",
        "data": {"anything": [1, {"goes": None}]},
        "alert": {
            "options": {
                "notification": {
                    "title": "Earthquake",
                    "body": "Take cover",
                    "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5},
                },
                "thread_id": "quake",
                "collapse_id": "quake-42",
                "time_to_live": 60.0,
            }
        },
    }


def test_the_model_defaults() -> None:
    assert NotificationObject.model_validate({}).model_dump() == {"lang": "ja", "data": None, "alert": None}
    sound = NotificationObject.model_validate({"alert": {"options": {"notification": {"sound": {}}}}})
    assert sound.model_dump()["alert"]["options"]["notification"]["sound"] == {
        "critical": 0,
        "name": "default",
        "volume": 1.0,
    }
    named = NotificationObject.model_validate({"alert": {"options": {"notification": {"sound": "siren.caf"}}}})
    assert named.model_dump()["alert"]["options"]["notification"]["sound"] == "siren.caf"


def test_the_model_accepts_json_numbers_for_critical_and_ttl() -> None:
    body = '{"alert": {"options": {"time_to_live": 0, "notification": {"sound": {"critical": 1.0, "volume": 0}}}}}'
    parsed = NotificationObject.model_validate_json(body)
    assert parsed.model_dump()["alert"]["options"] == {
        "notification": {"title": None, "body": None, "sound": {"critical": 1, "name": "default", "volume": 0.0}},
        "thread_id": None,
        "collapse_id": None,
        "time_to_live": 0.0,
    }


def _with_sound(sound: Any) -> dict[str, Any]:
    return {"alert": {"options": {"notification": {"sound": sound}}}}


def _with_options(**options: Any) -> dict[str, Any]:
    return {"alert": {"options": options}}


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(_with_sound({"volume": 1.5}), id="volume-1.5"),
        pytest.param(_with_sound({"volume": -0.1}), id="volume--0.1"),
        pytest.param(_with_sound({"volume": "0.5"}), id="volume-string"),
        pytest.param(_with_sound({"critical": 2}), id="critical-2"),
        pytest.param(_with_sound({"critical": 0.5}), id="critical-0.5"),
        pytest.param(_with_sound({"critical": True}), id="critical-bool"),
        pytest.param(_with_sound({"critical": "1"}), id="critical-string"),
        pytest.param(_with_sound(5), id="sound-number"),
        pytest.param(_with_sound(["default"]), id="sound-list"),
        pytest.param(_with_sound(""), id="sound-empty-name"),
        pytest.param(_with_sound({"name": "x", "loud": True}), id="unknown-sound-key"),
        pytest.param({"lang": "ja", "priority": "high"}, id="unknown-top-key"),
        pytest.param({"alert": {"options": {}, "kind": "x"}}, id="unknown-alert-key"),
        pytest.param(_with_options(badge=1), id="unknown-options-key"),
        pytest.param(_with_options(notification={"title": "t", "subtitle": "s"}), id="unknown-notification-key"),
        pytest.param(_with_options(time_to_live=-1), id="negative-ttl"),
        pytest.param(_with_options(time_to_live="60"), id="ttl-string"),
        pytest.param(_with_options(time_to_live=True), id="ttl-bool"),
        pytest.param(_with_options(time_to_live=float("inf")), id="ttl-infinite"),
        pytest.param(_with_options(thread_id=7), id="thread-id-number"),
        pytest.param(_with_options(collapse_id=""), id="collapse-id-empty"),
        pytest.param(_with_options(collapse_id="c" * 257), id="collapse-id-too-long"),
        pytest.param(_with_options(thread_id="t" * 257), id="thread-id-too-long"),
        pytest.param(_with_options(notification={"title": "t" * 257}), id="title-too-long"),
        pytest.param(_with_options(notification={"body": "b" * 4097}), id="body-too-long"),
        pytest.param(_with_options(notification={"title": 1}), id="title-number"),
        pytest.param({"data": ["not", "an", "object"]}, id="data-not-object"),
        pytest.param({"lang": ""}, id="lang-empty"),
    ],
)
def test_the_model_refuses_invalid_objects(obj: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        NotificationObject.model_validate(obj)


def test_the_model_refuses_infinity_in_json() -> None:
    with pytest.raises(ValidationError):
        NotificationObject.model_validate_json('{"alert": {"options": {"time_to_live": Infinity}}}')


def test_the_model_limits_are_inclusive() -> None:
    NotificationObject.model_validate(
        _with_options(
            notification={"title": "t" * 256, "body": "b" * 4096},
            thread_id="t" * 256,
            collapse_id="c" * 256,
        )
    )


def test_a_validated_object_makes_the_same_push() -> None:
    dumped = NotificationObject.model_validate(FULL_OBJECT).model_dump(exclude_none=True)
    record = {"id": "evt_1", "status": "ACTUAL", "event": {}, "data": {}, "notification": dumped}
    c = push_content(record, TOPIC, "NOTIFY")
    assert apns_request(c, NOW_S) == {
        "headers": {
            "apns-priority": "10",
            "apns-push-type": "alert",
            "apns-collapse-id": "quake-42",
            "apns-expiration": "1700000060",
        },
        "payload": {
            "aps": {
                "alert": {"title": "Earthquake", "body": "Take cover"},
                "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5},
                "interruption-level": "critical",
                "thread-id": "quake",
            },
            "data": {"anything": [1, {"goes": None}]},
            "tocsin_mode": "ACTUAL",
            "tocsin_lang": "en",
            "tocsin_topic": "Quakes",
            "tocsin_release": False,
            "tocsin_event_id": "evt_1",
        },
    }
    assert fcm_payload(c, NOW_S) == {
        "notification": {"title": "Earthquake", "body": "Take cover"},
        "data": {
            "anything": '[1,{"goes":null}]',
            "tocsin_mode": "ACTUAL",
            "tocsin_lang": "en",
            "tocsin_topic": "Quakes",
            "tocsin_release": "false",
            "tocsin_event_id": "evt_1",
            "tocsin_thread_id": "quake",
        },
        "android": {
            "priority": "HIGH",
            "collapse_key": "quake-42",
            "ttl": "60s",
            "notification": {"sound": "alarm.caf", "tag": "quake-42", "notification_priority": "PRIORITY_MAX"},
        },
        "apns": {
            "headers": {
                "apns-priority": "10",
                "apns-push-type": "alert",
                "apns-collapse-id": "quake-42",
                "apns-expiration": "1700000060",
            },
            "payload": {
                "aps": {
                    "alert": {"title": "Earthquake", "body": "Take cover"},
                    "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5},
                    "interruption-level": "critical",
                    "thread-id": "quake",
                },
                "data": {"anything": [1, {"goes": None}]},
                "tocsin_mode": "ACTUAL",
                "tocsin_lang": "en",
                "tocsin_topic": "Quakes",
                "tocsin_release": False,
                "tocsin_event_id": "evt_1",
            },
        },
    }
