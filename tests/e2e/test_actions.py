"""Workflow actions end to end over HTTP on the real broker: a webhook receiver on loopback that
verifies every signature with the reference ``standardwebhooks`` library, an aiosmtpd server
that receives the e-mails, the push outbox, for ACTUAL, DRILL and TEST publishes; retries with
the configured backoff, the dead-letter list and its replay, a redirect never followed, a 410
that disables an endpoint until the workflow is updated."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaConsumer
from standardwebhooks.webhooks import Webhook

from app.domain.delivery.webhooks import new_secret
from cli.dead_letters import cmd_dead_letters_list, cmd_dead_letters_replay
from cli.profile import Target
from devstack.ports import free_port
from devstack.smtp_sink import SinkController
from tests.support.effects import listen, timeline_entries
from tests.support.receiver import QuietHandler, loopback_server
from tests.support.scaling import decision_lines
from tests.support.stack import ROOT, Stack, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

BACKOFF = 0.5  # first retry wait; then 1.0 (factor 2), 3 attempts in all
RETRY_ENV = {
    "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
    "TOCSIN_RETRY_BASE_SECONDS": str(BACKOFF),
    "TOCSIN_RETRY_FACTOR": "2",
    "TOCSIN_RETRY_MAX_ATTEMPTS": "3",
    "TOCSIN_RETRY_JITTER": "0",
    "TOCSIN_RETRY_MAX_DELAY_SECONDS": "5",
}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    verified: bool
    at: float


@dataclass
class Receiver:
    """Answers by path: /ok 204; /flaky fails ``flaky_failures`` times then 200; /dead 500 until
    ``dead_recovers``; /redirect 307 to /target; /gone 410 until ``gone_recovers``."""

    secrets: dict[str, str] = field(default_factory=dict)  # path → secret
    requests: list[Received] = field(default_factory=list)
    flaky_failures: int = 2
    dead_recovers: bool = False
    gone_recovers: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> int:
        secret = self.secrets.get(path)
        verified = False
        if secret is not None:
            try:
                Webhook(secret).verify(raw, headers)
                verified = True
            except Exception:  # noqa: BLE001 - recorded as unverified; the test asserts on it
                verified = False
        with self.lock:
            self.requests.append(Received(path, headers, json.loads(raw or b"{}"), verified, time.monotonic()))
            seen = sum(1 for r in self.requests if r.path == path)
        if path == "/flaky":
            return 500 if seen <= self.flaky_failures else 200
        if path == "/dead":
            return 200 if self.dead_recovers else 500
        if path == "/gone":
            return 204 if self.gone_recovers else 410
        if path == "/redirect":
            return 307
        return 204


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    state = Receiver()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            code = state.answer(self.path, self.lower_headers(), self.read_body())
            self.answer_empty(code, {"Location": "/target"} if code == 307 else None)

    with loopback_server(Handler) as url:
        yield state, url


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    port = free_port()
    controller = SinkController(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


async def _dead_letter_topic(stack: Stack, n: int) -> list[dict[str, Any]]:
    """The first ``n`` records of the deliveries' dead-letter topic."""
    env = stack.env
    consumer = AIOKafkaConsumer(
        f"{env['TOCSIN_TOPIC_PREFIX']}actions.dead-letter",
        bootstrap_servers=env["TOCSIN_KAFKA_BOOTSTRAP"],
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        out: list[dict[str, Any]] = []
        async with asyncio.timeout(30):
            async for record in consumer:
                out.append(json.loads(record.value or b"{}"))
                if len(out) == n:
                    return out
    finally:
        await consumer.stop()
    return out


def _webhook(url: str, secret: str) -> dict[str, Any]:
    return {"type": "SEND_WEBHOOK", "url": url, "secret": secret}


def _publish(client: httpx.Client, topic: str, status: str, magnitude: float) -> str:
    r = client.post(
        f"/workflow_topics/{topic}/publish",
        json={
            "status": status,
            "data": {"quake": {"magnitude": magnitude}},
            "event": {"name": f"M{magnitude}", "description": "shaking"},
            "notification": {"alert": {"options": {"notification": {"title": "Quake", "body": f"M{magnitude}"}}}},
        },
    )
    assert r.status_code == 202, r.text
    event_id: str = r.json()["id"]
    return event_id


def _trace(client: httpx.Client, event_id: str, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    def get() -> dict[str, Any] | None:
        r = client.get(f"/events/{event_id}")
        if r.status_code != 200:
            return None
        steps = {s["step"]: s for s in r.json()["steps"]}
        return steps if ready(steps) else None

    return wait_for(get, 60, f"the trace of {event_id}")


def test_webhooks_email_push_by_mode_with_filters(
    stack_factory: Callable[..., Stack], receiver: tuple[Receiver, str], smtp: tuple[Mailbox, int]
) -> None:
    hooks, base = receiver
    mailbox, smtp_port = smtp
    stack = stack_factory(extra_env={**RETRY_ENV, "TOCSIN_SMTP_PORT": str(smtp_port)}).start()
    with stack.client() as c:
        fields = [{"id": "mag", "path": "quake.magnitude", "values": [{"type": "number", "operators": [">="]}]}]
        assert (
            c.post("/workflow_topics", json={"key": "quakes", "name_en": "Quakes", "fields": fields}).status_code == 201
        )
        recipient = c.post("/users", json={"email": "push@example.com", "display_name": "Push"}).json()["id"]
        for mode in ("ACTUAL", "DRILL", "TEST"):
            hooks.secrets[f"/ok/{mode}"] = secret = new_secret()
            r = c.post(
                "/workflows",
                json={
                    "name": f"quake {mode}",
                    "topic": "quakes",
                    "mode": mode,
                    "filter": {"field": "mag", "operator": ">=", "value": 5},
                    "actions": [
                        _webhook(f"{base}/ok/{mode}", secret),
                        {
                            "type": "SEND_EMAIL",
                            "to": ["ops@example.com"],
                            "subject": "Quake {data.quake.magnitude}",
                            "body": "{event.name}: {event.description}",
                        },
                        {"type": "SEND_PUSH_NOTIFICATION", "user_ids": [recipient]},
                    ],
                },
            )
            assert r.status_code == 201, r.text
            assert r.json()["actions"][0]["secret"].endswith("****"), "a secret is never returned"

        low = _publish(c, "quakes", "ACTUAL", 3.0)
        high = {mode: _publish(c, "quakes", mode, 6.0) for mode in ("ACTUAL", "DRILL", "TEST")}

        for mode, event_id in high.items():
            got = wait_for(lambda m=mode: hooks.on(f"/ok/{m}") or None, 60, f"the {mode} webhook")
            assert len(got) == 1 and got[0].verified, "signed per Standard Webhooks"
            assert got[0].headers["tocsin-mode"] == mode
            assert got[0].headers["webhook-id"].startswith("act_")
            assert got[0].body["event_id"] == event_id and got[0].body["status"] == mode
            assert got[0].body["exercise"] is (mode != "ACTUAL")
        mails = wait_for(lambda: mailbox.messages if len(mailbox.messages) >= 3 else None, 60, "three e-mails")
        subjects = sorted(m["Subject"] for m in mails)
        assert subjects == ["Quake 6.0", "[DRILL] Quake 6.0", "[TEST] Quake 6.0"], subjects
        pushes = wait_for(
            lambda: ((items := c.get("/push_notifications").json()["items"]) and len(items) >= 3 and items) or None,
            60,
            "three pushes",
        )
        titles = sorted(p["apns"]["payload"]["aps"]["alert"]["title"] for p in pushes)
        assert titles == ["Quake", "[DRILL] Quake", "[TEST] Quake"], titles
        assert all(p["fcm"]["notification"]["title"] == p["title"] for p in pushes)

        steps = _trace(c, low, lambda s: "workflows" in s)
        considered = steps["workflows"]["workflows"]
        actual = next(w for w in considered if w["mode"] == "ACTUAL")
        assert actual["filter"]["result"] is False
        assert actual["filter"]["clauses"] == [
            {"field": "mag", "path": "quake.magnitude", "operator": ">=", "value": 5, "actual": 3.0, "result": False}
        ]
        assert not [w for w in considered if w["mode"] != "ACTUAL" and w["mode_matched"]], "mode never crosses"
        assert len(hooks.on("/ok/ACTUAL")) == 1, "the filtered-out event sent nothing"
        delivered = _trace(c, high["ACTUAL"], lambda s: any(k.startswith("delivery:") for k in s))
        attempts = [v for k, v in delivered.items() if k.startswith("delivery:")]
        assert {a["outcome"] for a in attempts} == {"DELIVERED"}

        # A RESOLVE runs the actions as a release notice that says so.
        profile = {
            "type": "METRIC",
            "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
            "exit_stable_limit": 1,
        }
        assert c.post("/workflow_topics", json={"key": "levels", "control_policy_profile": profile}).status_code == 201
        hooks.secrets["/levels"] = secret = new_secret()
        r = c.post(
            "/workflows",
            json={
                "name": "levels",
                "topic": "levels",
                "mode": "ACTUAL",
                "actions": [
                    _webhook(f"{base}/levels", secret),
                    {
                        "type": "SEND_EMAIL",
                        "to": ["ops@example.com"],
                        "subject": "Level {data.level}",
                        "body": "{decision}",
                    },
                ],
            },
        )
        assert r.status_code == 201, r.text
        for level in (12.0, 1.0):
            body = {
                "status": "ACTUAL",
                "data": {"level": level},
                "event_control": {"partition_key": "tank", "metrics": {"level": level}},
            }
            assert c.post("/workflow_topics/levels/publish", json=body).status_code == 202
            wait_for(
                lambda lv=level: [h for h in hooks.on("/levels") if h.body["data"]["level"] == lv] or None,
                60,
                f"the webhook of level {level}",
            )
        notify, release = hooks.on("/levels")
        assert (notify.body["type"], notify.body["release"]) == ("tocsin.event.notify", False)
        assert (release.body["type"], release.body["release"]) == ("tocsin.event.resolve", True)
        assert release.body["decision"] == "RESOLVE" and release.verified
        mails = wait_for(
            lambda: (
                [m for m in mailbox.messages if "Level" in m["Subject"]]
                if len([m for m in mailbox.messages if "Level" in m["Subject"]]) == 2
                else None
            ),
            60,
            "two level e-mails",
        )
        assert sorted(m["Subject"] for m in mails) == ["Level 12.0", "Resolved: Level 1.0"]
        print(
            f"actions: 3 modes x (webhook, e-mail, push) delivered, a RESOLVE as a release notice; "
            f"{len(hooks.requests)} webhook requests"
        )


def test_retries_dead_letters_replay_redirect_and_gone(
    stack_factory: Callable[..., Stack], receiver: tuple[Receiver, str]
) -> None:
    hooks, base = receiver
    stack = stack_factory(extra_env=RETRY_ENV).start()
    with stack.client() as c:
        assert c.post("/workflow_topics", json={"key": "hooks"}).status_code == 201
        ids = {}
        for path in ("/flaky", "/dead", "/redirect", "/gone"):
            hooks.secrets[path] = secret = new_secret()
            r = c.post(
                "/workflows",
                json={"name": path, "topic": "hooks", "mode": "ACTUAL", "actions": [_webhook(base + path, secret)]},
            )
            assert r.status_code == 201, r.text
            ids[path] = r.json()["id"]
        first = _publish(c, "hooks", "ACTUAL", 1.0)

        flaky = wait_for(lambda: ((got := hooks.on("/flaky")) and len(got) >= 3 and got) or None, 60, "3 attempts")
        assert len({r.headers["webhook-id"] for r in flaky}) == 1, "webhook-id is stable across retries"
        assert all(r.verified for r in flaky), "every attempt is signed afresh"
        gaps = [b.at - a.at for a, b in itertools.pairwise(flaky)]
        assert gaps[0] >= BACKOFF * 0.9 and gaps[1] >= 2 * BACKOFF * 0.9, gaps
        print(f"flaky receiver: delivered on attempt 3 after gaps of {', '.join(f'{g:.2f}s' for g in gaps)}")

        dead = wait_for(
            lambda: (
                (
                    (d := {x["target"].rsplit("/", 1)[1]: x for x in c.get("/dead_letters").json()["items"]})
                    and {"dead", "redirect"} <= set(d)
                    and d
                )
                or None
            ),
            60,
            "the dead and redirect deliveries dead-lettered",
        )
        assert len(hooks.on("/dead")) == 3 and dead["dead"]["attempts"] == 3
        assert hooks.on("/target") == [], "a redirect is never followed"
        assert dead["redirect"]["last_status_code"] == 307
        on_topic = asyncio.run(_dead_letter_topic(stack, 2))
        assert {r["effect_id"] for r in on_topic} == {dead["dead"]["id"], dead["redirect"]["id"]}
        assert all(r["attempt"] == 3 and r["kind"] == "WEBHOOK" and r["reason"] for r in on_topic)

        # what a person at a terminal sees and does: tocsin dead-letters list, then replay
        target = Target(stack.base_url, stack.credentials["access_token"], stack.org)
        listed = io.StringIO()
        assert cmd_dead_letters_list(target, out=listed) == len(dead)
        assert listed.getvalue().startswith("id ") and dead["dead"]["id"] in listed.getvalue()
        hooks.dead_recovers = True
        replayed = io.StringIO()
        cmd_dead_letters_replay(target, [dead["dead"]["id"]], out=replayed)
        assert replayed.getvalue() == f"{dead['dead']['id']}: PENDING\n"
        wait_for(lambda: len(hooks.on("/dead")) == 4 or None, 60, "the replayed delivery")
        assert hooks.on("/dead")[-1].headers["webhook-id"] == hooks.on("/dead")[0].headers["webhook-id"]
        wait_for(
            lambda: all(d["id"] != dead["dead"]["id"] for d in c.get("/dead_letters").json()["items"]) or None,
            30,
            "the replayed delivery leaving the dead letters",
        )
        with pytest.raises(SystemExit, match="409 RES-002"):  # only dead letters replay
            cmd_dead_letters_replay(target, [dead["dead"]["id"]], out=io.StringIO())

        # 410 Gone disabled the endpoint: a later event does not call it, until the workflow is updated.
        assert len(hooks.on("/gone")) == 1
        second = _publish(c, "hooks", "ACTUAL", 1.0)
        steps = _trace(c, second, lambda s: "workflows" in s)
        gone = next(w for w in steps["workflows"]["workflows"] if w["workflow_id"] == ids["/gone"])
        assert "disabled" in gone["actions"][0]["outcome"]
        hooks.gone_recovers = True
        assert c.patch(f"/workflows/{ids['/gone']}", json={"name": "gone, fixed"}).status_code == 200
        third = wait_for(
            lambda: ((e := _publish(c, "hooks", "ACTUAL", 1.0)) and len(hooks.on("/gone")) >= 2 and e) or None,
            60,
            "the re-enabled endpoint called again",
            interval=2.0,
        )
        assert third and hooks.on("/gone")[-1].verified
        print(
            "dead-lettered: dead after 3 attempts, redirect never followed; replayed;",
            f"410 disabled then re-enabled ({first})",
        )


def _other_org(stack: Stack, name: str) -> tuple[str, httpx.Client]:
    out = subprocess.run(
        [sys.executable, "-m", "cli", "bootstrap", "--org", name],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    creds = json.loads(out.stdout.decode().strip().splitlines()[-1])
    client = httpx.Client(
        base_url=f"{stack.base_url}/v1/organizations/{creds['organization_id']}",
        headers={"Authorization": f"Bearer {creds['access_token']}"},
        timeout=30,
    )
    return str(creds["organization_id"]), client


def test_shared_topics_reach_receiving_organizations(
    stack_factory: Callable[..., Stack], receiver: tuple[Receiver, str]
) -> None:
    hooks, base = receiver
    stack = stack_factory(extra_env=RETRY_ENV).start()
    b_id, b = _other_org(stack, "Receiver B")
    c_id, c_org = _other_org(stack, "Stranger C")
    with stack.client() as a, b, c_org:
        spec = {"name_en": "Public quakes", "access_scope": "public"}
        assert a.post("/workflow_topics", json={"key": "pub", **spec}).status_code == 201
        restricted = {"access_scope": "restricted", "share_with_allowed_orgs": True, "allowed_organization_ids": [b_id]}
        assert a.post("/workflow_topics", json={"key": "club", **restricted}).status_code == 201
        assert a.post("/workflow_topics", json={"key": "mine"}).status_code == 201
        a_org = stack.org

        def keys(client: httpx.Client) -> set[str]:
            return {t["key"] for t in client.get("/shared_workflow_topics").json()["items"]}

        assert keys(b) == {"pub", "club"}
        assert keys(c_org) == {"pub"}, "restricted to B: C neither sees it…"
        assert all("allowed_organization_ids" not in t for t in b.get("/shared_workflow_topics").json()["items"])
        for client, topic in ((c_org, "club"), (b, "mine")):
            r = client.post(
                "/workflows",
                json={
                    "name": "x",
                    "topic": topic,
                    "topic_organization_id": a_org,
                    "mode": "ACTUAL",
                    "actions": [_webhook(f"{base}/never", new_secret())],
                },
            )
            assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "topic", (
                r.text
            )  # …nor subscribes

        book = b.post("/operation_books", json={"name": "b", "incident_title_template": "B: {event.name}"}).json()
        workflow_ids: dict[str, str] = {}
        for path, client, topic in (("/b/pub", b, "pub"), ("/b/club", b, "club"), ("/c/pub", c_org, "pub")):
            hooks.secrets[path] = secret = new_secret()
            actions: list[dict[str, Any]] = [_webhook(base + path, secret)]
            if path == "/b/pub":
                actions.append({"type": "RUN_OPERATION_BOOK", "operation_book_id": book["id"]})
            r = client.post(
                "/workflows",
                json={
                    "name": path,
                    "topic": topic,
                    "topic_organization_id": a_org,
                    "mode": "ACTUAL",
                    "actions": actions,
                },
            )
            assert r.status_code == 201, r.text
            assert r.json()["topic_organization_id"] == a_org
            workflow_ids[path] = r.json()["id"]

        event_id = _publish(a, "pub", "ACTUAL", 7.0)
        wait_for(lambda: (hooks.on("/b/pub") and hooks.on("/c/pub")) or None, 60, "both receivers of the public topic")
        # Each organization's trace shows its own workflows; the owner sees how many others ran, never which.
        owner_trace = _trace(a, event_id, lambda s: "workflows" in s)
        assert (
            owner_trace["workflows"]["workflows"] == []
            and owner_trace["workflows"]["other_organizations_workflows"] == 2
        )
        assert b_id not in repr(owner_trace) and c_id not in repr(owner_trace)
        b_trace = _trace(b, event_id, lambda s: "workflows" in s)
        assert [w["organization_id"] for w in b_trace["workflows"]["workflows"]] == [b_id]
        assert "accepted" not in b_trace and c_id not in repr(b_trace)
        incidents = wait_for(lambda: b.get("/incidents").json()["items"] or None, 60, "B's incident")
        assert incidents[0]["title"] == "B: M7.0"
        assert a.get("/incidents").json()["items"] == [], "the incident belongs to the receiving organization"

        # target_organization_ids narrows a publish to C: B's workflow does not run for it.
        r = a.post(
            "/workflow_topics/pub/publish",
            json={
                "status": "ACTUAL",
                "data": {},
                "event": {"name": "to C"},
                "attributes": {"target_organization_ids": [c_id]},
            },
        )
        assert r.status_code == 202, r.text
        to_c = r.json()["id"]
        # C's trace shows its workflow ran (the publisher's names no receiver's workflow, see above)…
        considered = {
            w["workflow_id"]: w for w in _trace(c_org, to_c, lambda s: "workflows" in s)["workflows"]["workflows"]
        }
        assert [x["outcome"] for x in considered[workflow_ids["/c/pub"]]["actions"]] == ["requested"]
        assert workflow_ids["/b/pub"] not in considered
        # …and once C's delivery is stored (its trace, in C's organization), B's receiver and trace
        # hold nothing of this event: every delivery the event asked for has been made.
        delivered = _trace(c_org, to_c, lambda s: any(k.startswith("delivery:") for k in s))
        assert [v["outcome"] for k, v in delivered.items() if k.startswith("delivery:")] == ["DELIVERED"]
        assert [h.body["event"]["name"] for h in hooks.on("/c/pub") if h.body["event_id"] == to_c] == ["to C"]
        assert [h for h in hooks.on("/b/pub") if h.body["event_id"] == to_c] == [], "B received a publish to C"
        # B sees its own workflow considered and not run for a publish narrowed to C
        b_steps = _trace(b, to_c, lambda s: "workflows" in s)
        assert not any(k.startswith(("action:", "delivery:")) for k in b_steps), b_steps
        assert [(w["workflow_id"], w["actions"]) for w in b_steps["workflows"]["workflows"]] == [
            (workflow_ids["/b/pub"], [])
        ], b_steps["workflows"]
        club = _publish(a, "club", "ACTUAL", 1.0)
        _trace(b, club, lambda s: any(k.startswith("delivery:") for k in s))
        assert [h.body["event_id"] for h in hooks.on("/b/club")] == [club]
        assert c_org.get(f"/events/{club}").status_code == 404, "C took part in a topic restricted to B"
        assert len(hooks.on("/b/pub")) == 1 and len(hooks.on("/c/pub")) == 2
        assert all(r.verified for r in hooks.requests)
        assert hooks.on("/never") == []
        print(f"shared topics: public reached B and C, restricted only B, target_organization_ids only C ({b_id})")


def _all_pages(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = client.get(path, params={"limit": 500, **({"cursor": cursor} if cursor else {})}).json()
        items.extend(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def _effects(
    stack: Stack, c: httpx.Client, hooks: Receiver, mailbox: Mailbox, topic: str
) -> tuple[dict[str, Counter[str]], dict[str, int]]:
    """What the events published to ``topic`` produced, as multisets by the event's number: each
    incident, each incident timeline entry (by kind), each distinct webhook-id received, each
    distinct e-mail Message-ID received, each stored push. A second effect for one event shows as
    a count of 2. Also how many deliveries repeated an effect already received (same webhook-id or
    Message-ID: at-least-once to a receiver outside Tocsin, which dedupes by that id)."""
    prefix = f"{topic}-"

    def number(text: str) -> str:
        return text.removeprefix(prefix)

    incidents = [i["event_id"] for i in _all_pages(c, "/incidents") if (i["event_id"] or "").startswith(prefix)]
    entries = [(e, k) for e, k, _ in timeline_entries(stack) if (e or "").startswith(prefix)]
    hooks_got = [h for h in hooks.on(f"/ok/{topic}")]
    hook_ids = {(str(h.body["data"]["i"]), h.headers["webhook-id"]) for h in hooks_got}
    mails = [(m["Subject"], m["Message-ID"]) for m in mailbox.messages if m["Subject"].startswith(prefix)]
    pushes = [p["title"] for p in _all_pages(c, "/push_notifications") if p["title"].startswith(prefix)]
    found = {
        "incidents": Counter(number(e) for e in incidents),
        "timeline": Counter(f"{number(e or '')}:{k}" for e, k in entries),
        "webhooks": Counter(i for i, _ in hook_ids),
        "emails": Counter(number(subject) for subject, _ in set(mails)),
        "pushes": Counter(number(t) for t in pushes),
    }
    repeats = {"webhooks": len(hooks_got) - len(hook_ids), "emails": len(mails) - len(set(mails))}
    return found, repeats


def test_repeated_kill_9_gives_the_effects_of_an_undisturbed_run(
    stack_factory: Callable[..., Stack], receiver: tuple[Receiver, str], smtp: tuple[Mailbox, int]
) -> None:
    """The same events to two identical topics: ``calm`` with the worker left alone, ``storm``
    while the worker is killed with SIGKILL three times. Both must end with the same incidents,
    pushes, e-mails and webhook deliveries (a receiver may see an effect twice: at-least-once,
    same webhook-id; the stored ones are deduplicated)."""
    hooks, base = receiver
    mailbox, smtp_port = smtp
    total, kills = 300, 3
    started = time.monotonic()
    env = {**RETRY_ENV, "TOCSIN_SMTP_PORT": str(smtp_port), "TOCSIN_WORKER_COMMIT_SECONDS": "5"}
    stack = stack_factory(extra_env=env).start()
    with stack.client() as c:
        book = c.post("/operation_books", json={"name": "book", "incident_title_template": "{event.name}"})
        assert book.status_code == 201, book.text
        recipient = c.post("/users", json={"email": "push@example.com", "display_name": "Push"}).json()["id"]
        for topic in ("calm", "storm"):
            assert c.post("/workflow_topics", json={"key": topic}).status_code == 201
            hooks.secrets[f"/ok/{topic}"] = secret = new_secret()
            actions = [
                {"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]},
                _webhook(f"{base}/ok/{topic}", secret),
                {"type": "SEND_EMAIL", "to": ["ops@example.com"], "subject": "{data.t}-{data.i}", "body": "x"},
                {"type": "SEND_PUSH_NOTIFICATION", "user_ids": [recipient]},
            ]
            r = c.post("/workflows", json={"name": topic, "topic": topic, "mode": "ACTUAL", "actions": actions})
            assert r.status_code == 201, r.text

    def publish(topic: str, paced: float) -> list[int]:
        refused: list[int] = []
        with stack.client() as pc:
            for i in range(total):
                body = {
                    "status": "ACTUAL",
                    "data": {"t": topic, "i": i},
                    "event": {"id": f"{topic}-{i}", "name": f"{topic} {i}"},
                    "notification": {"alert": {"options": {"notification": {"title": f"{topic}-{i}", "body": "b"}}}},
                }
                if pc.post(f"/workflow_topics/{topic}/publish", json=body).status_code != 202:
                    refused.append(i)
                time.sleep(paced)  # a steady load over the kills, not a condition being waited for
        return refused

    def complete(topic: str) -> dict[str, Counter[str]] | None:
        found, _ = _effects(stack, c, hooks, mailbox, topic)
        return found if all(len(v) >= total for v in found.values()) else None

    with stack.client() as c:
        assert publish("calm", 0) == []
        wait_for(lambda: complete("calm"), 180, "every effect of the undisturbed run")
        calm, calm_repeats = listen(lambda: _effects(stack, c, hooks, mailbox, "calm"))

        refused: list[list[int]] = []
        publisher = threading.Thread(target=lambda: refused.append(publish("storm", 0.04)))
        publisher.start()
        killed_at = []
        for k in range(1, kills + 1):
            wait_for(
                lambda k=k: len(hooks.on("/ok/storm")) >= k * total // (kills + 1), 180, f"progress before kill {k}"
            )
            killed_at.append(len(hooks.on("/ok/storm")))
            stack.kill_worker()
            stack.start_worker()
        publisher.join(timeout=300)
        assert not publisher.is_alive() and refused == [[]], refused
        wait_for(lambda: complete("storm"), 300, "every effect of the disturbed run")
        # Complete: listen a little longer for late duplicates, then count every effect.
        storm, repeats = listen(lambda: _effects(stack, c, hooks, mailbox, "storm"))

    # The undisturbed run: each event has exactly one of each effect, and its incident one entry.
    once = Counter(str(i) for i in range(total))
    assert calm == {**{k: once for k in ("incidents", "webhooks", "emails", "pushes")}, "timeline": _created(once)}
    assert calm_repeats == {"webhooks": 0, "emails": 0}, calm_repeats
    for kind in calm:  # the whole multiset, not the set: a second effect of one event is a 2
        extra, missing = storm[kind] - calm[kind], calm[kind] - storm[kind]
        assert storm[kind] == calm[kind], (kind, "second effects", sorted(extra)[:5], "missing", sorted(missing)[:5])
    # Every decision the workers logged (a redelivered record decided again shows twice) is NOTIFY.
    decided = decision_lines(stack.worker_logs)
    storm_ids = {h.body["event_id"] for h in hooks.on("/ok/storm")}
    assert len(storm_ids) == total and all(set(decided[e]) == {"NOTIFY"} for e in storm_ids)
    decided_again = sum(1 for e in storm_ids if len(decided[e]) > 1)
    assert killed_at[0] < total, "the first kill came after the work was done"
    print(
        f"\nrepeated kill -9: {total} events x 4 effects undisturbed and with {kills} SIGKILLs "
        f"(webhooks received at each kill: {killed_at}); equal multisets (one of each effect per event, "
        f"one timeline entry per incident), 0 lost, 0 second effects; records decided again {decided_again}; "
        f"redelivered to receivers (same id, at-least-once): {repeats}; {time.monotonic() - started:.0f} s"
    )


def test_an_email_subject_rendering_control_characters_is_delivered(
    stack_factory: Callable[..., Stack], smtp: tuple[Mailbox, int]
) -> None:
    """Issue 16, item 8, through the worker: a subject template that renders CR, LF and other
    control characters from ``event.name`` is delivered on one line (before: REFUSED for good)."""
    mailbox, smtp_port = smtp
    stack = stack_factory(extra_env={**RETRY_ENV, "TOCSIN_SMTP_PORT": str(smtp_port)}).start()
    with stack.client() as c:
        assert c.post("/workflow_topics", json={"key": "mail"}).status_code == 201
        action = {"type": "SEND_EMAIL", "to": ["ops@example.com"], "subject": "[{event.name}]", "body": "{event.name}"}
        r = c.post("/workflows", json={"name": "mail", "topic": "mail", "mode": "ACTUAL", "actions": [action]})
        assert r.status_code == 201, r.text
        # (U+0000 is refused at the ingress since PostgreSQL cannot store it: BEL stands for it here)
        name = "Quake\r\nBcc: victim@example.com\x07\x1b\u2028end"
        published = c.post(
            "/workflow_topics/mail/publish", json={"status": "ACTUAL", "data": {}, "event": {"name": name}}
        )
        assert published.status_code == 202, published.text
        [mail] = wait_for(lambda: mailbox.messages or None, 60, "the e-mail")
        assert mail["Subject"] == "[Quake Bcc: victim@example.com end]"
        assert mail["Bcc"] is None
        assert c.get("/dead_letters").json()["items"] == []


def _created(events: Counter[str]) -> Counter[str]:
    return Counter({f"{e}:CREATED": n for e, n in events.items()})
