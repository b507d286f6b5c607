"""Lists over HTTP (API.md "Conventions"): every list takes ``?limit=`` (1 to 500, default 50) and
``?cursor=``, answers ``{"items", "next_cursor"}``, and paging through it with any limit gives every
item exactly once in full pages; incident visibility is applied before the page is cut."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.shared.ids import new_id
from app.store.models import FederatedCredential, Incident, IncidentEvent
from devstack.kafka import LocalKafka
from tests.support.db import in_db, insert_incident, insert_trace
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("lists"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def seeded(api: Stack) -> dict[str, str]:
    """Several items in every list the issue names: tokens, credentials, roles, timeline, form answers."""
    with api.client() as c:
        sa = c.post("/service_accounts", json={"name": "listed"}).json()["id"]
        for n in range(5):
            assert c.post(f"/service_accounts/{sa}/access_tokens", json={"name": f"t{n}"}).status_code == 201
        for n in range(4):
            body = {"name": f"role {n}", "policies": [{"permission_id": "organization.user:get", "effect": "allow"}]}
            assert c.post("/iam/roles", json=body).status_code == 201
        incident = insert_incident(api)
        topic = c.post("/workflow_topics", json={"key": "listed"}).json()["id"]
        later = datetime.now(UTC)
        for n in range(5):  # two at one time: only (time, id) orders them
            insert_trace(api, topic, at=later + timedelta(seconds=min(n, 3)))
        for n in range(3):
            assert c.post(f"/incidents/{incident}/events", json={"message": f"note {n}"}).status_code == 201
            assert c.post(f"/incidents/{incident}/form_answers", json={"answers": {"n": n}}).status_code == 201

    async def rows(session: AsyncSession) -> None:
        now = datetime.now(UTC)
        for n in range(5):
            session.add(
                FederatedCredential(
                    id=new_id("cred"),
                    organization_id=api.org,
                    service_account_id=sa,
                    display_name=f"c{n}",
                    issuer_url="https://issuer.example.com",
                    subject_filter=f"repo:o/r{n}",
                    audience="tocsin",
                    attribute_condition=None,
                    jwks_uri="https://issuer.example.com/jwks",
                    status="ACTIVE",
                    created_at=now,
                )
            )
        # timeline entries with one timestamp and effect-style ids: only (time, id) orders them
        later = now + timedelta(hours=1)
        for n in range(4):
            session.add(
                IncidentEvent(
                    id=f"eff_{'zyxw'[n]}{n}", incident_id=incident, kind="UPDATED", message=f"same time {n}",
                    server_event_id="evt_x", created_at=later,
                )
            )  # fmt: skip

    in_db(api, rows)
    return {"sa": sa, "incident": incident}


LISTS = [
    "/service_accounts",
    "/service_accounts/{sa}/access_tokens",
    "/service_accounts/{sa}/federated_credentials",
    "/iam/roles",
    "{base}/v1/iam/roles",
    "/incidents",
    "/incidents/{incident}/events",
    "/incidents/{incident}/form_answers",
    "/workflow_topics/listed/events",
    "/audit_log",
    "/users",
    "/groups",
    "/workflow_topics",
    "/shared_workflow_topics",
    "/operation_books",
    "/workflows",
    "/push_notifications",
    "/dead_letters",
]


def walk(client: httpx.Client, path: str, limit: int) -> list[list[dict[str, Any]]]:
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        r = client.get(path, params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"items", "next_cursor"}
        pages.append(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 1000, "next_cursor never ends"


@pytest.mark.parametrize("template", LISTS)
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_every_list_pages_through_every_item_once_in_full_pages(
    api: Stack, seeded: dict[str, str], template: str, limit: int
) -> None:
    path = template.format(base=api.base_url, **seeded)
    with api.client() as c:
        everything = c.get(path, params={"limit": 500}).json()
        assert everything["next_cursor"] is None
        pages = walk(c, path, limit)
    assert all(len(p) == limit for p in pages[:-1]), [len(p) for p in pages]
    assert len(pages[-1]) <= limit
    assert [i["id"] for p in pages for i in p] == [i["id"] for i in everything["items"]]


@pytest.mark.parametrize("template", LISTS)
@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 501}, {"limit": "x"}, {"cursor": ""}])
def test_every_list_refuses_bad_paging_parameters(
    api: Stack, seeded: dict[str, str], template: str, params: dict[str, Any]
) -> None:
    with api.client() as c:
        r = c.get(template.format(base=api.base_url, **seeded), params=params)
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text


@pytest.mark.parametrize("template", LISTS)
@pytest.mark.parametrize(
    ("params", "named"),
    [({"mode": "BOGUS"}, "mode"), ({"cursor": "garbage"}, "cursor"), ({"cursor": "inc_"}, "cursor")],
)
def test_every_list_refuses_an_unknown_parameter_and_a_cursor_it_never_gave(
    api: Stack, seeded: dict[str, str], template: str, params: dict[str, Any], named: str
) -> None:
    """``?mode=BOGUS`` and ``?cursor=garbage`` on …/incidents answered 200 with the whole list (outside
    attacker): an unknown parameter and a cursor that is no id are 422 naming the parameter."""
    with api.client() as c:
        r = c.get(template.format(base=api.base_url, **seeded), params=params)
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert [f["field"] for f in r.json()["details"]["fields"]] == [named], r.text


def test_a_lists_own_filter_is_still_taken(api: Stack) -> None:
    with api.client() as c:
        assert c.get("/push_notifications", params={"event_id": "evt_x"}).json()["items"] == []


def test_the_issue_lists_are_in_order_and_a_forged_timeline_cursor_is_422(api: Stack, seeded: dict[str, str]) -> None:
    with api.client() as c:
        timeline = c.get(f"/incidents/{seeded['incident']}/events").json()["items"]
        assert [e["message"] for e in timeline][-4:] == [f"same time {n}" for n in (3, 2, 1, 0)]  # by id within a time
        for cursor in ("not-base64!", "bm90IGpzb24", "WzFd"):
            r = c.get(f"/incidents/{seeded['incident']}/events", params={"cursor": cursor})
            assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
        assert len(c.get(f"/service_accounts/{seeded['sa']}/access_tokens").json()["items"]) == 5
        assert len(c.get(f"/service_accounts/{seeded['sa']}/federated_credentials").json()["items"]) == 5


def test_a_member_gets_full_pages_of_its_incidents(api: Stack) -> None:
    """Visibility before the limit: hidden incidents between a member's never thin its pages,
    not even past the rows the server reads at a time."""
    with api.client() as owner:
        user = owner.post("/users", json={"email": "pages@example.com", "display_name": "Pages"}).json()["id"]
        binding = {"resource": f"crn:tocsin:organizations:{api.org}", "role_id": "incident_responder"}
        assert owner.put(f"/users/{user}/iam", json={"bindings": [binding]}).status_code == 200
        token = owner.post(f"/users/{user}/access_tokens", json={}).json()["access_token"]

    async def incidents(session: AsyncSession) -> list[str]:
        mine: list[str] = []
        base = int(datetime.now(UTC).timestamp() * 1000) + 10_000  # after every incident of the other tests
        for n in range(530):
            member = (n % 4 == 0 and n < 20) or n == 529  # five early, one after 500+ hidden ones
            incident = Incident(
                id=new_id("inc", now_ms=base + n), organization_id=api.org, title=f"i{n}", status="OPEN",
                operation_book_id="obk_x", workflow_id="wfl_x", topic_id="wtp_x", partition_key=None,
                event_id=None, server_event_id="evt_x", mode="ACTUAL", member_user_ids=[user] if member else [],
                member_group_ids=[], created_at=datetime.fromtimestamp((base + n) / 1000, UTC), resolved_at=None,
            )  # fmt: skip
            session.add(incident)
            if member:
                mine.append(incident.id)
        return mine

    mine = in_db(api, incidents)
    newest_first = mine[::-1]  # the list's order (docs/api.md, Lists): newest first by created_at
    with api.client(token) as c:
        pages = walk(c, "/incidents", 2)
        first = c.get("/incidents", params={"limit": 6}).json()
    assert [len(p) for p in pages] == [2, 2, 2]
    assert [i["id"] for p in pages for i in p] == newest_first
    assert [i["id"] for i in first["items"]] == newest_first and first["next_cursor"] is None
