"""A workflow topic has one identity in IAM (id or key in the path), and publishing needs a
service account: over HTTP against a real API process and broker, as callers who read the source."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.resource_names import organization_name, resource_name
from app.store import accounts
from devstack.kafka import LocalKafka
from tests.support.db import in_db
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

GOOD = {"status": "ACTUAL", "data": {"magnitude": 5}}


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("topic-identity"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def owner(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as client:
        yield client


def new_topic(owner: httpx.Client, key: str) -> str:
    r = owner.post("/workflow_topics", json={"key": key})
    assert r.status_code == 201, r.text
    topic_id: str = r.json()["id"]
    return topic_id


def token_of(owner: httpx.Client, kind: str, bindings: list[dict[str, str]]) -> str:
    if kind == "service_account":
        account = owner.post("/service_accounts", json={"name": "sa"}).json()["id"]
        collection = "service_accounts"
    else:
        account = owner.post("/users", json={"email": f"{id(bindings)}@example.com", "display_name": "U"}).json()["id"]
        collection = "users"
    assert owner.put(f"/{collection}/{account}/iam", json={"bindings": bindings}).status_code == 200
    r = owner.post(f"/{collection}/{account}/access_tokens", json={})
    assert r.status_code == 201, r.text
    token: str = r.json()["access_token"]
    return token


def topic_name(api: Stack, spelled: str) -> str:
    return resource_name(api.org, "workflow_topics", spelled)


ROUTES = [("GET", "", None), ("GET", "/control_state?partition_key=p", None), ("POST", "/publish", GOOD)]


def call(client: httpx.Client, method: str, path: str, body: object) -> httpx.Response:
    return client.request(method, path, json=body) if body is not None else client.request(method, path)


@pytest.mark.parametrize("bound_on", ["id", "key"])
def test_a_binding_on_the_topic_id_or_key_grants_on_every_route_whichever_spelling(
    api: Stack, owner: httpx.Client, bound_on: str
) -> None:
    key = f"ident-{bound_on}"
    topic_id = new_topic(owner, key)
    role = owner.post(
        "/iam/roles",
        json={
            "name": f"topic-user-{bound_on}",
            "policies": [
                {"permission_id": f"organization.workflow_topic:{a}", "effect": "allow"}
                for a in ("get", "publish", "update", "delete")
            ],
        },
    )
    assert role.status_code == 201, role.text
    spelled = topic_id if bound_on == "id" else key
    token = token_of(owner, "service_account", [{"resource": topic_name(api, spelled), "role_id": role.json()["id"]}])
    with api.client(token) as c:
        for path_spelling in (topic_id, key):
            for method, suffix, body in ROUTES:
                r = call(c, method, f"/workflow_topics/{path_spelling}{suffix}", body)
                assert r.status_code in (200, 202), (path_spelling, suffix, r.text)
            r = c.patch(f"/workflow_topics/{path_spelling}", json={"name_en": f"via {path_spelling}"})
            assert r.status_code == 200, r.text
        assert c.delete(f"/workflow_topics/{topic_id if bound_on == 'key' else key}").status_code == 204


def test_a_binding_on_one_topic_grants_nothing_on_another(api: Stack, owner: httpx.Client) -> None:
    mine = new_topic(owner, "ident-mine")
    new_topic(owner, "ident-theirs")
    token = token_of(owner, "service_account", [{"resource": topic_name(api, mine), "role_id": "workflow_publisher"}])
    with api.client(token) as c:
        for method, suffix, body in ROUTES:
            r = call(c, method, f"/workflow_topics/ident-theirs{suffix}", body)
            assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), (suffix, r.text)


def test_a_missing_topic_is_403_without_the_permission_and_404_with_it(api: Stack, owner: httpx.Client) -> None:
    """Nobody learns whether a key exists unless they could use it."""
    new_topic(owner, "ident-exists")
    weak = token_of(owner, "service_account", [{"resource": topic_name(api, "elsewhere"), "role_id": "viewer"}])
    with api.client(weak) as c:
        for spelled in ("ident-exists", "ident-missing", "wtp_00000000000000000000000000"):
            for method, suffix, body in ROUTES:
                r = call(c, method, f"/workflow_topics/{spelled}{suffix}", body)
                assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), (spelled, suffix, r.text)
    strong = token_of(
        owner, "service_account", [{"resource": topic_name(api, "<.*>"), "role_id": "workflow_publisher"}]
    )
    with api.client(strong) as c:
        for method, suffix, body in ROUTES:
            r = call(c, method, f"/workflow_topics/ident-missing{suffix}", body)
            assert (r.status_code, r.json()["code"]) == (404, "RES-001"), (suffix, r.text)


def test_another_organization_gets_404_for_a_topic_by_id_by_key_or_missing(api: Stack, owner: httpx.Client) -> None:
    topic_id = new_topic(owner, "ident-foreign")
    other = owner.post(f"{api.base_url}/v1/organizations", json={"name": "Other"})
    assert other.status_code == 201, other.text
    other_org = other.json()["id"]

    async def outsider(session: AsyncSession) -> str:
        # an owner of the other organization, bound on every name it may hold
        account = await accounts.create_account(session, other_org, kind="service_account", name="outsider")
        await accounts.bind(session, other_org, "service_account", account.id, organization_name(other_org), "owner")
        _row, plain = await accounts.issue_token(session, account)
        return plain

    token = in_db(api, outsider)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"{api.base_url}/v1/organizations/{api.org}", headers=headers, timeout=30) as c:
        for spelled in (topic_id, "ident-foreign", "ident-none"):
            for method, suffix, body in ROUTES:
                r = call(c, method, f"/workflow_topics/{spelled}{suffix}", body)
                assert (r.status_code, r.json()["code"]) == (404, "RES-001"), (spelled, suffix, r.text)


def test_a_topic_key_cannot_be_renamed(owner: httpx.Client) -> None:
    """A key never comes to name another topic, so a binding on a key follows one topic only."""
    new_topic(owner, "ident-fixed")
    r = owner.patch("/workflow_topics/ident-fixed", json={"key": "ident-other"})
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001")


def test_a_user_account_cannot_publish_even_with_the_permission(api: Stack, owner: httpx.Client) -> None:
    new_topic(owner, "ident-users")
    user = token_of(owner, "user_account", [{"resource": organization_name(api.org), "role_id": "owner"}])
    with api.client(user) as c:
        r = c.post("/workflow_topics/ident-users/publish", json=GOOD)
        assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), r.text
        assert "service account" in r.json()["message"]
        assert c.get("/workflow_topics/ident-users").status_code == 200  # reading is still theirs
    service = token_of(owner, "service_account", [{"resource": organization_name(api.org), "role_id": "owner"}])
    with api.client(service) as c:
        assert c.post("/workflow_topics/ident-users/publish", json=GOOD).status_code == 202


def test_a_topic_created_again_under_a_deleted_key_starts_without_the_old_grants(
    api: Stack, owner: httpx.Client
) -> None:
    """Found by the outside review: a binding on ``workflow_topics/<key>`` outlived its topic and
    granted on a new topic created later under the same key (another topic, maybe another owner's
    purpose). Bindings on a deleted topic's two names go with it."""
    new_topic(owner, "ident-reborn")
    token = token_of(
        owner, "service_account", [{"resource": topic_name(api, "ident-reborn"), "role_id": "workflow_publisher"}]
    )
    with api.client(token) as c:
        assert c.post("/workflow_topics/ident-reborn/publish", json=GOOD).status_code == 202
        assert owner.delete("/workflow_topics/ident-reborn").status_code == 204
        new_topic(owner, "ident-reborn")
        r = c.post("/workflow_topics/ident-reborn/publish", json=GOOD)
        assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), r.text
