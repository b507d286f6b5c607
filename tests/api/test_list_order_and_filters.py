"""Lists in an order and with filters (issue 39, item A; API.md "Resources", docs/api.md "Lists"):
``GET …/incidents`` newest first by ``created_at`` (``?order=oldest``), filtered by ``status``,
``mode``, ``topic`` (id or key) and ``partition_key``; ``GET …/workflow_topics/{topic}/events`` the
topic's events newest first by the time they were accepted, filtered by ``status``,
``partition_key``, ``decision``, ``since`` and ``until``. Both page by ``(time, id)`` with an opaque
cursor that stays stable while rows are added; a bad filter or cursor is ``422``, never ``500``.

Incident ids are effect-id hashes (not time-sortable), so the rows here get ids in no time order:
listed by id (as before), they came out in effectively random order."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import EventTraceStep, Incident
from app.store.topic_events import dialect_of, topic_events
from devstack.kafka import LocalKafka
from tests.support.db import in_db, insert_trace
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("ordered"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def other(api: Stack) -> dict[str, str]:
    """A second organization, with its own topic, incidents and events."""
    credentials = api.new_organization("Other org")
    with org_client(api, credentials) as c:
        topic = c.post("/workflow_topics", json={"key": "quake"}).json()["id"]
    insert_incidents(api, [incident(credentials["organization_id"], f"inc_other{n:02d}", T0, topic) for n in range(3)])
    for n in range(3):
        insert_trace(api, topic, at=T0 + timedelta(minutes=n), org_id=credentials["organization_id"])
    return {**credentials, "topic": topic}


def org_client(api: Stack, credentials: dict[str, str], token: str | None = None) -> httpx.Client:
    return httpx.Client(
        base_url=f"{api.base_url}/v1/organizations/{credentials['organization_id']}",
        headers={"Authorization": f"Bearer {token or credentials['access_token']}"},
        timeout=30,
    )


def incident(org: str, incident_id: str, at: datetime, topic: str, **fields: Any) -> Incident:
    values: dict[str, Any] = {
        "title": incident_id, "status": "OPEN", "operation_book_id": "obk_x", "workflow_id": "wfl_x",
        "partition_key": None, "event_id": None, "server_event_id": "evt_x", "mode": "ACTUAL",
        "member_user_ids": [], "member_group_ids": [], "resolved_at": None, **fields,
    }  # fmt: skip
    return Incident(id=incident_id, organization_id=org, topic_id=topic, created_at=at, **values)


def insert_incidents(api: Stack, rows: list[Incident]) -> None:
    async def add(session: AsyncSession) -> None:
        session.add_all(rows)

    in_db(api, add)


def token_of(owner: httpx.Client, bindings: list[dict[str, str]]) -> str:
    account = owner.post("/service_accounts", json={"name": f"sa {uuid.uuid4().hex[:6]}"}).json()["id"]
    assert owner.put(f"/service_accounts/{account}/iam", json={"bindings": bindings}).status_code == 200
    r = owner.post(f"/service_accounts/{account}/access_tokens", json={})
    assert r.status_code == 201, r.text
    token: str = r.json()["access_token"]
    return token


def walk(client: httpx.Client, path: str, limit: int, **params: Any) -> list[list[dict[str, Any]]]:
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        r = client.get(path, params={"limit": limit, **params, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        pages.append(r.json()["items"])
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 200, "next_cursor never ends"


@pytest.fixture(scope="module")
def incidents(api: Stack, other: dict[str, str]) -> dict[str, Any]:
    """Twelve incidents of the organization: ids in no time order (hashes), two pairs sharing a
    creation time, statuses, modes, two topics (one named by key, one deleted) and partition keys."""
    with api.client() as c:
        quake = c.post("/workflow_topics", json={"key": "quake"}).json()["id"]
    gone = "wtp_01zzzzzzzzzzzzzzzzzzzzzzzz"  # a deleted topic: its incidents keep its id
    ids = [f"inc_{h}" for h in ("q9", "a1", "m5", "c3", "z0", "b2", "k7", "e4", "x8", "d6", "y1", "f0")]
    times = [T0 + timedelta(minutes=n) for n in range(10)] + [T0 + timedelta(minutes=4)] * 2
    rows = []
    for n, (incident_id, at) in enumerate(zip(ids, times, strict=True)):
        rows.append(
            incident(
                api.org, incident_id, at, quake if n % 3 else gone,
                status=("OPEN", "ACKNOWLEDGED", "RESOLVED")[n % 3], mode=("ACTUAL", "DRILL", "ACTUAL", "TEST")[n % 4],
                partition_key=f"site-{n % 2}",
            )
        )  # fmt: skip
    insert_incidents(api, rows)
    newest = sorted(rows, key=lambda i: (i.created_at, i.id), reverse=True)
    return {"quake": quake, "gone": gone, "newest": newest}


def delete_rows(api: Stack, table: str, column: str, values: set[str]) -> None:
    async def delete(session: AsyncSession) -> None:
        for value in values:
            await session.execute(text(f"DELETE FROM {table} WHERE {column} = :v"), {"v": value})

    in_db(api, delete)


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [i["id"] for i in items]


# ----------------------------------------------------------------------------------------- incidents


def test_incidents_are_listed_newest_first_and_oldest_first_on_request(api: Stack, incidents: dict[str, Any]) -> None:
    newest = [i.id for i in incidents["newest"]]
    with api.client() as c:
        listed = c.get("/incidents", params={"limit": 500}).json()["items"]
        oldest = c.get("/incidents", params={"limit": 500, "order": "oldest"}).json()["items"]
        explicit = c.get("/incidents", params={"limit": 500, "order": "newest"}).json()["items"]
    assert ids(listed) == newest == ids(explicit)
    assert ids(oldest) == newest[::-1]
    times = [i["created_at"] for i in listed]
    assert times == sorted(times, reverse=True)


@pytest.mark.parametrize(
    ("params", "keep"),
    [
        ({"status": "ACKNOWLEDGED"}, lambda i, t: i.status == "ACKNOWLEDGED"),
        ({"mode": "DRILL"}, lambda i, t: i.mode == "DRILL"),
        ({"topic": "quake"}, lambda i, t: i.topic_id == t["quake"]),
        ({"topic": "<quake id>"}, lambda i, t: i.topic_id == t["quake"]),
        ({"topic": "<gone id>"}, lambda i, t: i.topic_id == t["gone"]),
        ({"partition_key": "site-1"}, lambda i, t: i.partition_key == "site-1"),
        ({"status": "OPEN", "mode": "ACTUAL", "partition_key": "site-0"},
         lambda i, t: (i.status, i.mode, i.partition_key) == ("OPEN", "ACTUAL", "site-0")),
    ],
    ids=["status", "mode", "topic-key", "topic-id", "deleted-topic-id", "partition_key", "together"],
)  # fmt: skip
def test_each_incident_filter_keeps_only_its_incidents_in_order(
    api: Stack, incidents: dict[str, Any], params: dict[str, str], keep: Any
) -> None:
    params = {k: incidents["quake"] if v == "<quake id>" else incidents["gone"] if v == "<gone id>" else v
              for k, v in params.items()}  # fmt: skip
    expected = [i.id for i in incidents["newest"] if keep(i, incidents)]
    assert expected, "the filter must keep something"
    with api.client() as c:
        listed = c.get("/incidents", params={"limit": 500, **params}).json()["items"]
        oldest = c.get("/incidents", params={"limit": 500, "order": "oldest", **params}).json()["items"]
        assert c.get("/incidents", params={"status": "RESOLVED", "partition_key": "no-such"}).json()["items"] == []
    assert ids(listed) == expected and ids(oldest) == expected[::-1]


@pytest.mark.parametrize("order", ["newest", "oldest"])
@pytest.mark.parametrize("limit", [1, 2, 5])
def test_incident_pages_hold_every_incident_once_though_incidents_arrive_meanwhile(
    api: Stack, incidents: dict[str, Any], order: str, limit: int
) -> None:
    """The cursor is the last item's (created_at, id): an incident stored between two pages (newer
    than all, or in the middle of the time range) moves nothing, so nothing is listed twice or lost."""
    expected = [i.id for i in incidents["newest"]]
    expected = expected if order == "newest" else expected[::-1]
    with api.client() as c:
        first = c.get("/incidents", params={"limit": limit, "order": order, "partition_key": "site-0"}).json()
        arriving = [
            incident(api.org, f"inc_new{uuid.uuid4().hex[:8]}", T0 + timedelta(minutes=4), incidents["quake"],
                     partition_key="site-0")
        ]  # fmt: skip
        insert_incidents(api, arriving)
        try:
            seen = ids(first["items"])
            cursor = first["next_cursor"]
            while cursor:
                params = {"limit": limit, "order": order, "partition_key": "site-0", "cursor": cursor}
                body = c.get("/incidents", params=params).json()
                seen += ids(body["items"])
                cursor = body["next_cursor"]
        finally:
            delete_rows(api, "incidents", "id", {i.id for i in arriving})
    wanted = [i for i in expected if i in {r.id for r in incidents["newest"] if r.partition_key == "site-0"}]
    assert len(seen) == len(set(seen))
    assert [i for i in seen if not i.startswith("inc_new")] == wanted


def test_a_member_gets_its_incidents_newest_first_filtered_before_the_page(
    api: Stack, incidents: dict[str, Any]
) -> None:
    with api.client() as owner:
        user = owner.post("/users", json={"email": f"m{uuid.uuid4().hex[:6]}@example.com", "display_name": "M"})
        user_id = user.json()["id"]
        binding = {"resource": f"crn:tocsin:organizations:{api.org}", "role_id": "incident_responder"}
        assert owner.put(f"/users/{user_id}/iam", json={"bindings": [binding]}).status_code == 200
        token = owner.post(f"/users/{user_id}/access_tokens", json={}).json()["access_token"]
    mine = [
        incident(api.org, f"inc_mine{n}", T0 - timedelta(days=1, minutes=n), incidents["quake"],
                 member_user_ids=[user_id], mode="DRILL" if n % 2 else "ACTUAL")
        for n in range(5)
    ]  # fmt: skip
    insert_incidents(api, mine)
    with api.client(token) as c:
        assert ids(c.get("/incidents").json()["items"]) == [f"inc_mine{n}" for n in range(5)]
        pages = walk(c, "/incidents", 1, mode="DRILL", order="oldest")
    assert [ids(p) for p in pages] == [["inc_mine3"], ["inc_mine1"]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "CLOSED"}, "status"),
        ({"status": "open"}, "status"),
        ({"mode": "LIVE"}, "mode"),
        ({"order": "sideways"}, "order"),
        ({"topic": "no-such-topic"}, "topic"),
        ({"topic": ""}, "topic"),
        ({"topic": "x" * 257}, "topic"),
        ({"topic": "quake\x00"}, "topic"),
        ({"partition_key": "site\x00-0"}, "partition_key"),
        ({"partition_key": "k" * 257}, "partition_key"),
        ({"partition_key": ""}, "partition_key"),
    ],
)
def test_a_bad_incident_filter_is_422_naming_it(
    api: Stack, incidents: dict[str, Any], params: dict[str, str], field: str
) -> None:
    with api.client() as c:
        r = c.get("/incidents", params=params)
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert [f["field"] for f in r.json()["details"]["fields"]] == [field], r.text


def forged(*values: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode()


CURSORS = [
    "garbage",
    "inc_01zzzzzzzzzzzzzzzzzzzzzzzz",  # an id: the cursors of the list before it had an order
    "não-ascii",
    forged("2026-11-01T12:00:00", "inc_a1", "newest"),  # a naive time
    forged("0001-01-01T00:00:00+01:00", "inc_a1", "newest"),  # out of range once in UTC
    forged("2026-11-01T12:00:00+00:00", 5, "newest"),
    forged("2026-11-01T12:00:00+00:00", "", "newest"),
    forged("2026-11-01T12:00:00+00:00", "inc_a1", "sideways"),
    forged({"at": 1}, "inc_a1", "newest"),
    base64.urlsafe_b64encode(b'{"a": 1}').decode(),
]


@pytest.mark.parametrize("cursor", CURSORS)
@pytest.mark.parametrize("path", ["/incidents", "/workflow_topics/quake/events"])
def test_a_cursor_no_list_gave_is_422_never_500(api: Stack, incidents: dict[str, Any], path: str, cursor: str) -> None:
    with api.client() as c:
        r = c.get(path, params={"cursor": cursor})
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert [f["field"] for f in r.json()["details"]["fields"]] == ["cursor"]


@pytest.mark.parametrize("path", ["/incidents", "/workflow_topics/quake/events"])
def test_a_cursor_of_one_order_is_refused_for_the_other(api: Stack, events: dict[str, Any], path: str) -> None:
    with api.client() as c:
        oldest = c.get(path, params={"limit": 1, "order": "oldest"}).json()["next_cursor"]
        newest = c.get(path, params={"limit": 1}).json()["next_cursor"]
        assert oldest and newest
        for cursor, order in ((oldest, "newest"), (newest, "oldest")):
            r = c.get(path, params={"cursor": cursor, "order": order})
            assert r.status_code == 422 and "other order" in r.json()["message"], r.text


def test_another_organizations_incidents_are_never_listed(
    api: Stack, incidents: dict[str, Any], other: dict[str, str]
) -> None:
    with api.client() as c:
        mine = ids(c.get("/incidents", params={"limit": 500}).json()["items"])
        assert not [i for i in mine if i.startswith("inc_other")]
        assert c.get("/incidents", params={"topic": other["topic"]}).json()["items"] == []
    with org_client(api, other) as theirs:
        assert sorted(ids(theirs.get("/incidents").json()["items"])) == [f"inc_other{n:02d}" for n in range(3)]
    with httpx.Client(headers={"Authorization": f"Bearer {api.credentials['access_token']}"}, timeout=30) as c:
        r = c.get(f"{api.base_url}/v1/organizations/{other['organization_id']}/incidents")
    assert (r.status_code, r.json()["code"]) == (404, "RES-001")


def test_incidents_need_the_list_permission(api: Stack, incidents: dict[str, Any]) -> None:
    with api.client() as owner:
        token = token_of(owner, [{"resource": f"crn:tocsin:organizations:{api.org}", "role_id": "workflow_publisher"}])
    with api.client(token) as c:
        r = c.get("/incidents", params={"status": "OPEN"})
    assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), r.text


# ------------------------------------------------------------------------------------- a topic's events


@pytest.fixture(scope="module")
def events(api: Stack, incidents: dict[str, Any], other: dict[str, str]) -> dict[str, Any]:
    """Ten events of the topic quake (statuses, partition keys, decisions, a duplicate; two at one
    time), two of another topic of the organization, and the other organization's three."""
    with api.client() as c:
        tsunami = c.post("/workflow_topics", json={"key": "tsunami"}).json()["id"]
    quake = incidents["quake"]
    made = []
    for n in range(10):
        at = T0 + timedelta(minutes=min(n, 8))  # the last two share a time
        fields = {
            "status": ("ACTUAL", "DRILL", "TEST")[n % 3],
            "partition_key": f"site-{n % 2}" if n != 7 else None,
            "decision": (None, "NOTIFY", "SUPPRESS", "RESOLVE")[n % 4],
        }
        made.append({"id": insert_trace(api, quake, at=at, **fields), "accepted_at": at, **fields})
    for n in range(2):
        insert_trace(api, tsunami, at=T0 + timedelta(minutes=n))
    newest = sorted(made, key=lambda e: (e["accepted_at"], e["id"]), reverse=True)
    return {"quake": quake, "tsunami": tsunami, "newest": newest}


def listed_events(c: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    r = c.get("/workflow_topics/quake/events", params={"limit": 500, **params})
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


def test_a_topics_events_are_listed_newest_first_as_api_md_shows_them(api: Stack, events: dict[str, Any]) -> None:
    expected = [e["id"] for e in events["newest"]]
    with api.client() as c:
        items = listed_events(c)
        by_id = c.get(f"/workflow_topics/{events['quake']}/events", params={"limit": 500}).json()["items"]
        oldest = listed_events(c, order="oldest")
    assert ids(items) == expected == ids(by_id)
    assert ids(oldest) == expected[::-1]
    first = events["newest"][0]
    assert items[0] == {
        "id": first["id"], "status": first["status"], "partition_key": first["partition_key"],
        "decision": first["decision"], "accepted_at": first["accepted_at"].isoformat(),
    }  # fmt: skip
    assert {tuple(sorted(i)) for i in items} == {("accepted_at", "decision", "id", "partition_key", "status")}


@pytest.mark.parametrize(
    ("params", "keep"),
    [
        ({"status": "DRILL"}, lambda e: e["status"] == "DRILL"),
        ({"partition_key": "site-1"}, lambda e: e["partition_key"] == "site-1"),
        ({"decision": "SUPPRESS"}, lambda e: e["decision"] == "SUPPRESS"),
        ({"since": "2026-11-01T12:03:00Z"}, lambda e: e["accepted_at"] >= T0 + timedelta(minutes=3)),
        ({"until": "2026-11-01T21:03:00+09:00"}, lambda e: e["accepted_at"] < T0 + timedelta(minutes=3)),
        ({"since": "2026-11-01T12:02:00Z", "until": "2026-11-01T12:06:00Z", "status": "ACTUAL"},
         lambda e: T0 + timedelta(minutes=2) <= e["accepted_at"] < T0 + timedelta(minutes=6)
         and e["status"] == "ACTUAL"),
    ],
    ids=["status", "partition_key", "decision", "since", "until", "together"],
)  # fmt: skip
def test_each_event_filter_keeps_only_its_events(
    api: Stack, events: dict[str, Any], params: dict[str, str], keep: Any
) -> None:
    expected = [e["id"] for e in events["newest"] if keep(e)]
    assert expected
    with api.client() as c:
        assert ids(listed_events(c, **params)) == expected
        assert ids(listed_events(c, order="oldest", **params)) == expected[::-1]


@pytest.mark.parametrize("order", ["newest", "oldest"])
@pytest.mark.parametrize("limit", [1, 3])
def test_event_pages_hold_every_event_once_though_events_arrive_meanwhile(
    api: Stack, events: dict[str, Any], order: str, limit: int
) -> None:
    expected = [e["id"] for e in events["newest"]]
    expected = expected if order == "newest" else expected[::-1]
    with api.client() as c:
        first = c.get("/workflow_topics/quake/events", params={"limit": limit, "order": order}).json()
        assert len(first["items"]) == limit
        arrived = {
            insert_trace(api, events["quake"], at=T0 + timedelta(minutes=8), decision="NOTIFY", event_id="evt_zzzz"),
            insert_trace(api, events["quake"], at=datetime.now(UTC)),
        }
        try:
            seen = ids(first["items"])
            cursor = first["next_cursor"]
            while cursor:
                body = c.get(
                    "/workflow_topics/quake/events", params={"limit": limit, "order": order, "cursor": cursor}
                ).json()
                assert len(body["items"]) == limit or body["next_cursor"] is None
                seen += ids(body["items"])
                cursor = body["next_cursor"]
        finally:
            delete_traces(api, arrived)
    assert len(seen) == len(set(seen))
    assert [i for i in seen if i not in arrived] == expected


def delete_traces(api: Stack, event_ids: set[str]) -> None:
    delete_rows(api, "event_trace_steps", "event_id", event_ids)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "LIVE"}, "status"),
        ({"decision": "NOTIFIED"}, "decision"),
        ({"order": "newest-first"}, "order"),
        ({"since": "2026-11-01T12:00:00"}, "since"),  # no offset: which time is meant?
        ({"until": "yesterday"}, "until"),
        ({"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"}, "since"),
        ({"since": "0001-01-01T00:00:00+14:00"}, "since"),  # before year 1 in UTC: a 500 on SQLite
        ({"until": "9999-12-31T23:59:59-14:00"}, "until"),
        ({"until": "0.5"}, "until"),  # seconds since 1970: pydantic took it for a time
        ({"since": "1764590400"}, "since"),
        ({"since": "2026-11-01"}, "since"),  # a date alone
        ({"partition_key": "a\x00b"}, "partition_key"),
        ({"partition_key": "k" * 257}, "partition_key"),
        ({"topic": "quake"}, "topic"),  # not a filter of this list
    ],
)
def test_a_bad_event_filter_is_422_naming_it(
    api: Stack, events: dict[str, Any], params: dict[str, str], field: str
) -> None:
    with api.client() as c:
        r = c.get("/workflow_topics/quake/events", params=params)
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert [f["field"] for f in r.json()["details"]["fields"]] == [field], r.text


def test_another_organizations_events_are_never_listed(
    api: Stack, events: dict[str, Any], other: dict[str, str]
) -> None:
    """Both organizations have a topic keyed quake: each lists its own topic's events only."""
    with api.client() as c:
        mine = set(ids(listed_events(c)))
        assert c.get(f"/workflow_topics/{other['topic']}/events").status_code == 404
    with org_client(api, other) as theirs:
        their_events = theirs.get("/workflow_topics/quake/events").json()["items"]
    assert len(their_events) == 3 and not mine & set(ids(their_events))
    with httpx.Client(headers={"Authorization": f"Bearer {api.credentials['access_token']}"}, timeout=30) as c:
        r = c.get(f"{api.base_url}/v1/organizations/{other['organization_id']}/workflow_topics/quake/events")
    assert (r.status_code, r.json()["code"]) == (404, "RES-001")


def test_a_topics_events_need_the_event_list_permission_on_it(api: Stack, events: dict[str, Any]) -> None:
    """``organization.event:list`` on the topic's names or the organization's; a publisher (whose role
    reads traces, not lists) and an incident responder get 403; a missing topic is 404 only for a
    caller who holds the permission."""
    with api.client() as owner:
        org = f"crn:tocsin:organizations:{api.org}"
        publisher = token_of(owner, [{"resource": f"{org}:workflow_topics/quake", "role_id": "workflow_publisher"}])
        responder = token_of(owner, [{"resource": org, "role_id": "incident_responder"}])
        role = {"name": f"lister {uuid.uuid4().hex[:6]}",
                "policies": [{"permission_id": "organization.event:list", "effect": "allow"}]}  # fmt: skip
        role_id = owner.post("/iam/roles", json=role).json()["id"]
        lister = token_of(owner, [{"resource": f"{org}:workflow_topics/{events['quake']}", "role_id": role_id}])
        viewer = token_of(owner, [{"resource": org, "role_id": "viewer"}])
    for token in (publisher, responder):
        with api.client(token) as c:
            r = c.get("/workflow_topics/quake/events")
            assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), r.text
    with api.client(lister) as c:
        assert len(listed_events(c)) == 10  # bound on the id, asked by the key
        assert c.get("/workflow_topics/tsunami/events").status_code == 403
        assert c.get("/workflow_topics/no-such-topic/events").status_code == 403
    with api.client(viewer) as c:
        assert len(listed_events(c)) == 10
        r = c.get("/workflow_topics/no-such-topic/events")
        assert (r.status_code, r.json()["code"]) == (404, "RES-001")


def test_the_list_reads_the_accepted_steps_through_their_index(api: Stack, events: dict[str, Any]) -> None:
    """Migration 0013's partial index on (organization, the detail's topic_id, time, event id) matches
    the list's query as written on this database (an expression index is used only when the query
    repeats the expression exactly)."""

    async def plan(session: AsyncSession) -> str:
        dialect = dialect_of(session)
        query = topic_events(dialect, api.org, events["quake"])
        query = query.order_by(EventTraceStep.recorded_at.desc(), EventTraceStep.event_id.desc()).limit(3)
        compiled = query.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
        if dialect == "postgresql":
            await session.execute(text("SET LOCAL enable_seqscan = off"))
            rows = await session.execute(text(f"EXPLAIN {compiled}"))
        else:
            rows = await session.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))
        return "\n".join(str(r) for r in rows)

    assert "ix_event_trace_steps_topic" in in_db(api, plan)


def test_a_cursor_of_the_other_list_is_refused(api: Stack, incidents: dict[str, Any], events: dict[str, Any]) -> None:
    """Found from outside: an incidents cursor passed to a topic's events (and the other way) started
    that list after the other list's last item. Each list takes only cursors of its own ids."""
    with api.client() as c:
        of_incidents = c.get("/incidents", params={"limit": 1}).json()["next_cursor"]
        of_events = c.get("/workflow_topics/quake/events", params={"limit": 1}).json()["next_cursor"]
        assert of_incidents and of_events
        for path, cursor in (("/workflow_topics/quake/events", of_incidents), ("/incidents", of_events)):
            r = c.get(path, params={"cursor": cursor})
            assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
            assert [f["field"] for f in r.json()["details"]["fields"]] == ["cursor"]
