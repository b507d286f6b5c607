"""Outgoing webhooks: secrets, Standard Webhooks signatures (checked by the reference library),
the body, outcome classification, the retry schedule and its delay levels."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime
from email.utils import formatdate
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import webhooks as reference
from standardwebhooks.webhooks import Webhook

from app.domain.delivery.delivery_verdicts import (
    MAX_RETRY_AFTER_S,
    Verdict,
    classify,
    parse_http_date,
    retry_after_s,
)
from app.domain.delivery.delivery_verdicts import DeliveryOutcome as Outcome
from app.domain.delivery.webhooks import (
    mask_secret,
    new_secret,
    secret_key,
    sign,
    webhook_body,
    webhook_headers,
)
from app.domain.shared.retry_schedule import RetrySchedule, delay_levels, level_for
from app.executors import webhook as webhook_executor
from app.executors.webhook import WebhookExecutor
from app.settings.delivery import WebhookConfig

NOW = 1_700_000_000  # 2023-11-14T22:13:20Z: the reference verifier's clock is frozen here
SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
MSG_ID = "act_01hf3k9x7m2v8q4r6t0w5y1z3b"
SHORT = RetrySchedule(base_s=0.2, factor=2.0, max_delay_s=1.6, max_attempts=6, jitter=0.5)


@pytest.fixture(autouse=True)
def reference_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference library checks ``webhook-timestamp`` against ``datetime.now``: freeze it."""

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls.fromtimestamp(NOW, tz=tz or UTC)

    monkeypatch.setattr(reference, "datetime", Frozen)


def record(status: str = "ACTUAL", **extra: Any) -> dict[str, Any]:
    return {
        "id": "evt_01hf3k9x7m2v8q4r6t0w5y1z3b",
        "organization_id": "org_1",
        "topic_id": "top_1",
        "status": status,
        "data": {"magnitude": 6.1, "region": "kanto", "name": "地震"},
        "event": {"id": "quake-2023-11-14", "name": "Quake", "description": "M6.1 Kanto"},
        "event_control": {"partition_key": "kanto"},
        "accepted_ms": NOW * 1000 + 344,
        "v": 1,
        **extra,
    }


# --- signatures, against the reference library --------------------------------------------------


def test_known_answer_vector_of_the_standard_webhooks_test_suite() -> None:
    body = b'{"test": 2432232314}'
    expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body) == expected


@pytest.mark.parametrize(
    ("decision", "status", "incident_id"),
    [
        ("NOTIFY", "ACTUAL", "inc_1"),
        ("RESOLVE", "ACTUAL", "inc_1"),
        ("NOTIFY", "DRILL", None),
        ("RESOLVE", "TEST", None),
    ],
)
def test_reference_library_verifies_our_signature(decision: str, status: str, incident_id: str | None) -> None:
    body = webhook_body(record(status), decision, "quake", incident_id)
    headers = webhook_headers(SECRET, MSG_ID, NOW, body, status)
    assert Webhook(SECRET).verify(body, headers) == json.loads(body)


@given(st.binary(min_size=24, max_size=64), st.integers(0, 2**33), st.binary(max_size=200))
def test_our_signature_equals_the_reference_signature(raw: bytes, ts: int, payload: bytes) -> None:
    secret = "whsec_" + base64.b64encode(raw).decode()
    text = payload.decode("latin-1")  # any str; the reference signs its UTF-8 bytes
    when = datetime.fromtimestamp(ts, tz=UTC)
    assert sign(secret, MSG_ID, ts, text.encode()) == Webhook(secret).sign(MSG_ID, when, text)


def _tamper_body(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str], str]:
    return body.replace(b'"kanto"', b'"tohoku"', 1), headers, SECRET


def _tamper_id(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str], str]:
    return body, {**headers, "webhook-id": MSG_ID + "x"}, SECRET


def _tamper_timestamp(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str], str]:
    return body, {**headers, "webhook-timestamp": str(NOW + 1)}, SECRET


def _wrong_secret(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str], str]:
    return body, headers, new_secret(lambda n: b"\x07" * n)


@pytest.mark.parametrize("tamper", [_tamper_body, _tamper_id, _tamper_timestamp, _wrong_secret])
def test_our_signature_covers_the_body_the_id_the_timestamp_and_the_secret(tamper: Any) -> None:
    """What a receiver recomputes from a tampered delivery (with ``sign``, ours) is not the
    signature we sent: each of the four inputs is bound by it. The reference library agrees
    with ``sign`` on every input (the property test above), so this is what it refuses too."""
    body = webhook_body(record(), "NOTIFY", "quake", "inc_1")
    headers = webhook_headers(SECRET, MSG_ID, NOW, body, "ACTUAL")
    untouched = sign(SECRET, headers["webhook-id"], int(headers["webhook-timestamp"]), body)
    assert untouched == headers["webhook-signature"]
    sent, got, secret = tamper(body, headers)
    recomputed = sign(secret, got["webhook-id"], int(got["webhook-timestamp"]), sent)
    assert recomputed != headers["webhook-signature"]


@pytest.mark.parametrize("late_s", [0, 301, 3600])
async def test_each_attempt_is_signed_with_its_own_time(monkeypatch: pytest.MonkeyPatch, late_s: int) -> None:
    """A receiver refuses a ``webhook-timestamp`` more than five minutes from its clock, so our
    executor signs every attempt with the time it is made, not the event's acceptance: a retry an
    hour after the event still carries a fresh timestamp and a signature over it."""
    sent: list[dict[str, str]] = []

    class Poster:
        async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Any:
            sent.append(headers)
            return type("Result", (), {"status": 204, "headers": {}})()

    executor = WebhookExecutor(WebhookConfig(timeout_s=5, allow_private_networks=True))
    await executor.aclose()
    monkeypatch.setattr(executor, "_fetcher", Poster())
    clock = SimpleNamespace(time=lambda: NOW + late_s + 0.7, perf_counter=time.perf_counter)
    monkeypatch.setattr(webhook_executor, "time", clock)
    body = webhook_body(record(), "NOTIFY", "quake", None)  # accepted at NOW
    item = {
        "effect_id": MSG_ID,
        "mode": "ACTUAL",
        "content": {"url": "http://receiver.test/hook", "body": body.decode()},
    }
    attempt = await executor.send(item, SECRET)
    assert attempt.status_code == 204
    [headers] = sent
    assert headers["webhook-timestamp"] == str(NOW + late_s)
    assert headers["webhook-signature"] == sign(SECRET, MSG_ID, NOW + late_s, body)


def test_headers_of_an_attempt() -> None:
    body = webhook_body(record("DRILL"), "NOTIFY", "quake", None)
    headers = webhook_headers(SECRET, MSG_ID, NOW, body, "DRILL")
    assert headers == {
        "webhook-id": MSG_ID,
        "webhook-timestamp": str(NOW),
        "webhook-signature": sign(SECRET, MSG_ID, NOW, body),
        "content-type": "application/json",
        "Tocsin-Mode": "DRILL",
    }


def test_a_retry_keeps_its_id_and_is_signed_afresh() -> None:
    body = webhook_body(record(), "NOTIFY", "quake", None)
    first = webhook_headers(SECRET, MSG_ID, NOW - 200, body, "ACTUAL")
    retry = webhook_headers(SECRET, MSG_ID, NOW, body, "ACTUAL")
    assert first["webhook-id"] == retry["webhook-id"]
    assert first["webhook-signature"] != retry["webhook-signature"]
    assert Webhook(SECRET).verify(body, retry)


@pytest.mark.parametrize("mode", ["", "actual", "LIVE", "SUPPRESS"])
def test_headers_refuse_an_unknown_mode(mode: str) -> None:
    with pytest.raises(ValueError):
        webhook_headers(SECRET, MSG_ID, NOW, b"{}", mode)


@pytest.mark.parametrize(
    ("msg_id", "timestamp"),
    [("", NOW), ("a.b", NOW), ("has space", NOW), ("new\nline", NOW), ("x" * 257, NOW), (MSG_ID, -1), (MSG_ID, True)],
)
def test_sign_refuses_unsafe_metadata(msg_id: str, timestamp: int) -> None:
    with pytest.raises(ValueError):
        sign(SECRET, msg_id, timestamp, b"{}")


# --- secrets -----------------------------------------------------------------------------------


def test_new_secret_uses_the_injected_random_source() -> None:
    asked: list[int] = []

    def source(n: int) -> bytes:
        asked.append(n)
        return bytes(range(n))

    assert new_secret(source) == SECRET
    assert asked == [32]
    assert secret_key(new_secret(source, size=24)) == bytes(range(24))


def test_new_secrets_are_random_and_well_formed() -> None:
    made = {new_secret() for _ in range(50)}
    assert len(made) == 50
    assert all(len(secret_key(s)) == 32 for s in made)


@pytest.mark.parametrize("size", [0, 16, 23, 65])
def test_new_secret_refuses_sizes_outside_the_spec(size: int) -> None:
    with pytest.raises(ValueError):
        new_secret(size=size)


def test_new_secret_refuses_a_short_random_source() -> None:
    with pytest.raises(ValueError):
        new_secret(lambda n: b"\x00" * (n - 1))


@pytest.mark.parametrize(
    ("secret", "key"),
    [
        (SECRET, bytes(range(32))),
        (SECRET.rstrip("="), bytes(range(32))),  # padding is optional, as in the reference libraries
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")),
        ("whsec_" + base64.b64encode(b"\xff" * 64).decode(), b"\xff" * 64),
        ("whsec_" + base64.b64encode(b"\xfb\xff" * 12).decode(), b"\xfb\xff" * 12),  # "+" and "/"
    ],
)
def test_secret_key_decodes_well_formed_secrets(secret: str, key: bytes) -> None:
    assert secret_key(secret) == key


@pytest.mark.parametrize(
    "secret",
    [
        "",
        "whsec_",
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",  # no prefix
        "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_" + base64.b64encode(b"\x01" * 23).decode(),  # too short
        "whsec_" + base64.b64encode(b"\x01" * 65).decode(),  # too long
        "whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 12).decode(),  # url-safe alphabet
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!",
        "whsec_MfKQ9r8GKYqrTwjUPD8I LPZIo2LaLaSw",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw=",  # padding where none belongs
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA",  # 33 characters: not base64
        "whsec_" + base64.b64encode(b"\x01" * 25).decode()[:-1],  # wrong padding
        "whsec_=" + base64.b64encode(b"\x01" * 30).decode(),
    ],
)
def test_secret_key_refuses_malformed_secrets(secret: str) -> None:
    with pytest.raises(ValueError):
        secret_key(secret)
    with pytest.raises(ValueError):
        sign(secret, MSG_ID, NOW, b"{}")


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        (SECRET, "whsec_AAEC****"),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ****"),
        ("whsec_short", "****"),
        ("not-a-secret-at-all-but-long-enough", "****"),
        ("", "****"),
    ],
)
def test_mask_secret_shows_four_characters_at_most(secret: str, masked: str) -> None:
    assert mask_secret(secret) == masked


# --- body --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "status", "type_", "release", "exercise"),
    [
        ("NOTIFY", "ACTUAL", "tocsin.event.notify", False, False),
        ("RESOLVE", "ACTUAL", "tocsin.event.resolve", True, False),
        ("NOTIFY", "DRILL", "tocsin.event.notify", False, True),
        ("RESOLVE", "DRILL", "tocsin.event.resolve", True, True),
        ("NOTIFY", "TEST", "tocsin.event.notify", False, True),
        ("RESOLVE", "TEST", "tocsin.event.resolve", True, True),
    ],
)
def test_body_shape(decision: str, status: str, type_: str, release: bool, exercise: bool) -> None:
    body = json.loads(webhook_body(record(status), decision, "quake", "inc_9"))
    assert body == {
        "type": type_,
        "timestamp": "2023-11-14T22:13:20.344Z",
        "event_id": "evt_01hf3k9x7m2v8q4r6t0w5y1z3b",
        "decision": decision,
        "status": status,
        "release": release,
        "exercise": exercise,
        "topic": "quake",
        "partition_key": "kanto",
        "data": {"magnitude": 6.1, "region": "kanto", "name": "地震"},
        "event": {"id": "quake-2023-11-14", "name": "Quake", "description": "M6.1 Kanto"},
        "incident_id": "inc_9",
    }


def test_body_bytes_are_compact_utf8_and_deterministic() -> None:
    body = webhook_body(record(), "NOTIFY", "quake", None)
    expected = (
        '{"type":"tocsin.event.notify","timestamp":"2023-11-14T22:13:20.344Z",'
        '"event_id":"evt_01hf3k9x7m2v8q4r6t0w5y1z3b","decision":"NOTIFY","status":"ACTUAL",'
        '"release":false,"exercise":false,"topic":"quake","partition_key":"kanto",'
        '"data":{"magnitude":6.1,"region":"kanto","name":"地震"},'
        '"event":{"id":"quake-2023-11-14","name":"Quake","description":"M6.1 Kanto"}}'
    )
    assert body == expected.encode()
    assert webhook_body(record(), "NOTIFY", "quake", None) == body
    assert "incident_id" not in json.loads(body)


def test_body_of_an_auto_resolve_tick() -> None:
    tick = {
        "kind": "tick",
        "id": "evt_tick",
        "organization_id": "org_1",
        "topic_id": "top_1",
        "status": "ACTUAL",
        "event_control": {"partition_key": "kanto"},
        "accepted_ms": 0,
    }
    body = json.loads(webhook_body(tick, "RESOLVE", "quake", "inc_9"))
    assert body["data"] == {} and body["event"] == {}
    assert body["timestamp"] == "1970-01-01T00:00:00.000Z"
    assert body["release"] is True and body["type"] == "tocsin.event.resolve"


def test_body_without_partition_key_or_acceptance_time() -> None:
    rec = record()
    del rec["event_control"], rec["accepted_ms"]
    body = json.loads(webhook_body(rec, "NOTIFY", "quake", None))
    assert body["partition_key"] is None
    assert "timestamp" not in body


def test_body_with_a_lone_surrogate_falls_back_to_ascii_escapes() -> None:
    body = webhook_body(record(data={"bad": "\ud800", "name": "地震"}), "NOTIFY", "quake", None)
    assert body.isascii()
    assert json.loads(body)["data"] == {"bad": "\ud800", "name": "地震"}


@pytest.mark.parametrize(("decision", "status"), [("SUPPRESS", "ACTUAL"), ("notify", "ACTUAL"), ("NOTIFY", "LIVE")])
def test_body_refuses_what_sends_no_webhook(decision: str, status: str) -> None:
    with pytest.raises(ValueError):
        webhook_body(record(status), decision, "quake", None)


# --- Retry-After -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("  7 ", 7.0),
        ("0", 0.0),
        (formatdate(NOW + 90, usegmt=True), 90.0),  # IMF-fixdate
        ("Tuesday, 14-Nov-23 22:14:20 GMT", 60.0),  # obsolete RFC 850
        ("Tue Nov 14 22:15:20 2023", 120.0),  # asctime
        (formatdate(NOW - 90, usegmt=True), 0.0),  # in the past
        ("-5", None),
        ("1.5", None),
        ("soon", None),
        ("", None),
        ("Tue, 14 Nov 2023 22:14:20 +0000", None),  # not an HTTP-date
        ("Tue, 31 Feb 2023 22:14:20 GMT", None),
    ],
)
def test_retry_after_parsing(value: str, expected: float | None) -> None:
    assert retry_after_s({"Retry-After": value}, NOW) == expected


@pytest.mark.parametrize("name", ["Retry-After", "retry-after", "RETRY-AFTER"])
def test_retry_after_header_name_is_case_insensitive(name: str) -> None:
    assert retry_after_s({name: "3"}, NOW) == 3.0
    assert retry_after_s({}, NOW) is None


def test_rfc850_two_digit_years_are_within_fifty_years() -> None:
    assert parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", NOW) == 784111777.0
    in_2043 = datetime(2043, 11, 6, 8, 49, 37, tzinfo=UTC).timestamp()
    assert parse_http_date("Friday, 06-Nov-43 08:49:37 GMT", NOW) == in_2043


# --- classification ----------------------------------------------------------------------------

GARBAGE = {"Retry-After": "in a while"}


@pytest.mark.parametrize(
    ("status", "headers", "error", "verdict", "delay"),
    [
        (200, {}, None, Verdict.DELIVERED, None),
        (204, {}, None, Verdict.DELIVERED, None),
        (299, {}, None, Verdict.DELIVERED, None),
        (301, {"Location": "https://elsewhere"}, None, Verdict.RETRY, 0.2),
        (302, {"Location": "https://elsewhere"}, None, Verdict.RETRY, 0.2),
        (307, {"Location": "https://elsewhere"}, None, Verdict.RETRY, 0.2),
        (400, {}, None, Verdict.RETRY, 0.2),
        (404, {}, None, Verdict.RETRY, 0.2),
        (408, {}, None, Verdict.RETRY, 0.2),
        (410, {}, None, Verdict.DISABLE, None),
        (410, {"Retry-After": "1"}, None, Verdict.DISABLE, None),
        (429, {}, None, Verdict.RETRY, 0.2),
        (429, {"Retry-After": "1"}, None, Verdict.RETRY, 1.0),
        (429, {"retry-after": "0"}, None, Verdict.RETRY, 0.2),  # never shorter than the backoff
        (429, {"Retry-After": "86400"}, None, Verdict.RETRY, 1.6),  # capped at the largest level
        (429, {"Retry-After": formatdate(NOW + 1, usegmt=True)}, None, Verdict.RETRY, 1.0),
        (429, {"Retry-After": formatdate(NOW - 60, usegmt=True)}, None, Verdict.RETRY, 0.2),
        (429, GARBAGE, None, Verdict.RETRY, 0.2),
        (500, {}, None, Verdict.RETRY, 0.2),
        (503, {}, None, Verdict.RETRY, 0.2),
        (503, {"Retry-After": "1"}, None, Verdict.RETRY, 1.0),
        (None, {}, "timeout", Verdict.RETRY, 0.2),
        (None, {}, "connection refused", Verdict.RETRY, 0.2),
        (None, {}, None, Verdict.RETRY, 0.2),
    ],
)
def test_classification(
    status: int | None, headers: dict[str, str], error: str | None, verdict: Verdict, delay: float | None
) -> None:
    outcome = classify(status, headers, error, 1, SHORT, float(NOW))
    assert outcome.verdict is verdict
    assert outcome.delay_s == delay
    if delay is None:
        assert outcome.retry_at_s is None and outcome.level_s is None
    else:
        assert outcome.retry_at_s == NOW + delay
        assert outcome.level_s == level_for(delay, delay_levels(SHORT))


@pytest.mark.parametrize(
    ("status", "error", "reason"),
    [
        (200, None, "HTTP 200"),
        (302, None, "HTTP 302: redirect not followed"),
        (410, None, "HTTP 410 Gone: the endpoint asked to stop receiving"),
        (503, None, "HTTP 503"),
        (None, "timeout", "no response: timeout"),
        (None, "x" * 500, "no response: " + "x" * 187),
    ],
)
def test_classification_reason(status: int | None, error: str | None, reason: str) -> None:
    assert classify(status, {}, error, 1, SHORT, 0.0).reason == reason


@pytest.mark.parametrize(
    ("status", "error", "verdict"),
    [
        (500, None, Verdict.DEAD),
        (302, None, Verdict.DEAD),
        (None, "timeout", Verdict.DEAD),
        (404, None, Verdict.DEAD),
        (429, None, Verdict.DEAD),
        (200, None, Verdict.DELIVERED),
        (410, None, Verdict.DISABLE),
    ],
)
def test_the_last_attempt_ends_the_delivery(status: int | None, error: str | None, verdict: Verdict) -> None:
    last = classify(status, {"Retry-After": "1"}, error, SHORT.max_attempts, SHORT, 0.0)
    assert last == Outcome(last.verdict, last.reason)  # no retry time
    assert last.verdict is verdict
    before = classify(status, {}, error, SHORT.max_attempts - 1, SHORT, 0.0)
    assert before.verdict is (Verdict.RETRY if verdict is Verdict.DEAD else verdict)


def test_a_failing_delivery_walks_the_default_schedule_then_dies() -> None:
    schedule = RetrySchedule()
    now, attempt, waits = 0.0, 1, []
    while (outcome := classify(503, {}, None, attempt, schedule, now, rand=0.999)).verdict is Verdict.RETRY:
        assert outcome.retry_at_s is not None and outcome.delay_s is not None
        waits.append(outcome.delay_s)
        now, attempt = outcome.retry_at_s, attempt + 1
    assert outcome.verdict is Verdict.DEAD
    assert attempt == schedule.max_attempts == 12
    assert len(waits) == 11
    assert 2 * 86400 < sum(schedule.nominal(n) for n in range(1, 12)) < 3 * 86400  # "spanning multiple days"
    assert all(w < schedule.nominal(n) for n, w in enumerate(waits, 1))  # jittered below the nominal


def test_retry_after_is_capped_at_an_hour_on_the_default_schedule() -> None:
    outcome = classify(429, {"Retry-After": "86400"}, None, 1, RetrySchedule(), 0.0)
    assert outcome.delay_s == MAX_RETRY_AFTER_S == 3600.0
    assert outcome.level_s == 6480.0
    later = classify(429, {"Retry-After": "10"}, None, 3, RetrySchedule(), 0.0)
    assert later.delay_s == 180.0  # the backoff is longer than asked


def test_classify_refuses_attempt_zero() -> None:
    with pytest.raises(ValueError):
        classify(500, {}, None, 0, SHORT, 0.0)


# --- schedule and delay levels -----------------------------------------------------------------


def test_default_schedule_and_levels() -> None:
    schedule = RetrySchedule()
    assert [schedule.nominal(n) for n in range(1, 12)] == [5, 30, 180, 1080, 6480] + [36000] * 6
    assert delay_levels(schedule) == [5.0, 30.0, 180.0, 1080.0, 6480.0, 36000.0]


@pytest.mark.parametrize(
    ("schedule", "levels"),
    [
        (SHORT, [0.2, 0.4, 0.8, 1.6]),
        (RetrySchedule(base_s=0.2, factor=2.0, max_delay_s=100.0, max_attempts=3, jitter=0.0), [0.2, 0.4]),
        (RetrySchedule(base_s=1.0, factor=1.0, max_delay_s=1.0, max_attempts=5, jitter=0.0), [1.0]),
        (RetrySchedule(base_s=1.0, factor=3.0, max_delay_s=5.0, max_attempts=10, jitter=0.1), [1.0, 3.0, 5.0]),
        (RetrySchedule(base_s=1.0, factor=2.0, max_delay_s=8.0, max_attempts=1, jitter=0.1), []),
    ],
)
def test_delay_levels(schedule: RetrySchedule, levels: list[float]) -> None:
    assert delay_levels(schedule) == levels


@pytest.mark.parametrize("schedule", [SHORT, RetrySchedule()])
def test_schedule_is_monotonic_and_capped(schedule: RetrySchedule) -> None:
    nominal = [schedule.nominal(n) for n in range(1, 40)]
    assert nominal == sorted(nominal)
    assert max(nominal) == schedule.max_delay_s
    assert schedule.nominal(10**6) == schedule.max_delay_s  # no overflow


@pytest.mark.parametrize("rand", [0.0, 0.25, 0.5, 0.999999])
@pytest.mark.parametrize("attempt", [1, 2, 4, 5, 30])
def test_jitter_bounds(attempt: int, rand: float) -> None:
    nominal = SHORT.nominal(attempt)
    delay = SHORT.delay(attempt, rand)
    assert nominal * (1 - SHORT.jitter) < delay <= nominal
    assert delay == nominal * (1 - SHORT.jitter * rand)
    assert SHORT.delay(attempt, rand) == delay  # deterministic given rand


@given(
    st.floats(0.01, 100),
    st.floats(1, 10),
    st.floats(1, 100),
    st.integers(2, 40),
    st.floats(0, 1),
    st.integers(1, 60),
    st.floats(0, 1, exclude_max=True),
)
def test_every_wait_lands_in_a_level_that_bounds_its_lateness(
    base: float, factor: float, span: float, attempts: int, jitter: float, attempt: int, rand: float
) -> None:
    schedule = RetrySchedule(base_s=base, factor=factor, max_delay_s=base * span, max_attempts=attempts, jitter=jitter)
    levels = delay_levels(schedule)
    assert levels == sorted(set(levels))
    assert set(levels) == {schedule.nominal(n) for n in range(1, attempts)}
    delay = schedule.delay(min(attempt, attempts - 1), rand)
    level = level_for(delay, levels)
    assert delay <= level and level * (1 - jitter) <= delay * (1 + 1e-12)  # at most jitter * level late


def test_a_level_holds_records_due_in_order_up_to_jitter() -> None:
    """Simulate one level's FIFO consumer: it holds the head until due. Nobody is early and
    nobody is later than jitter * level."""
    level = SHORT.nominal(4)
    parked = [(t * 0.05, SHORT.delay(4, r)) for t, r in enumerate([0.9, 0.0, 0.5, 0.99, 0.1, 0.7])]
    released_at = 0.0
    for enqueued, delay in parked:
        assert level_for(delay, delay_levels(SHORT)) == level
        due = enqueued + delay
        released_at = max(released_at, due)
        assert due <= released_at <= due + SHORT.jitter * level


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_s": 0.0},
        {"base_s": -1.0},
        {"base_s": float("nan")},
        {"factor": 0.5},
        {"factor": float("inf")},
        {"max_delay_s": 1.0},
        {"max_delay_s": float("inf")},
        {"max_attempts": 0},
        {"max_attempts": True},
        {"jitter": -0.1},
        {"jitter": 1.5},
    ],
)
def test_schedule_refuses_bad_parameters(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RetrySchedule(**kwargs)


@pytest.mark.parametrize(("attempt", "rand"), [(0, 0.0), (1, -0.1), (1, 1.0)])
def test_delay_refuses_bad_arguments(attempt: int, rand: float) -> None:
    with pytest.raises(ValueError):
        SHORT.delay(attempt, rand)


def test_level_for_refuses_a_wait_beyond_every_level() -> None:
    with pytest.raises(ValueError):
        level_for(2.0, delay_levels(SHORT))
