"""Schemathesis against the API's own OpenAPI document, on a real API process and broker.

Every operation is called with the bootstrap owner's token, on seeded resources (so path
parameters name real objects; an unknown one is a documented 404). Valid and invalid
requests (coverage and fuzzing phases, positive and negative data), half of the JSON bodies with
one value replaced by an integer beyond 64 bits or JSON nested deeper than a publish body may
(:data:`HOSTILE`). Checked on every answer:
no 5xx, the status is one the operation documents, the body matches the documented schema
(content type included), and an invalid request is refused — 422 VAL-001, or 400
invalid_request on the token exchange; a body over the size cap is a 413 and a request
without a JSON body a 415, as API.md documents.

``TOCSIN_FUZZ_EXAMPLES`` (default 10) is the number of generated examples per operation and
phase; ``make fuzz`` raises it and adds the stateful phase. ``TOCSIN_FUZZ_SEED`` replays a run.
The test prints the requests made, the operations covered, the 5xx found and the time taken.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.engine import Status, events
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.shared.ids import new_id
from app.store.models import Delivery, FederatedCredential
from devstack.kafka import LocalKafka
from tests.support.db import in_db, insert_incident
from tests.support.stack import Stack

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

DEFAULT_EXAMPLES = 10
EXAMPLES = int(os.environ.get("TOCSIN_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))
STATEFUL = EXAMPLES > DEFAULT_EXAMPLES  # the longer run (make fuzz) also chains calls
FIELDS = [
    {"id": "magnitude", "path": "magnitude", "values": [{"type": "number", "operators": [">=", "<"]}]},
    {"id": "region", "path": "region", "values": [{"type": "string", "operators": ["=", "IN"]}], "site": True},
]
CHECKS_ON = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
)
CHECKS_OFF = (
    # valid-looking data may still name unknown objects (422 by design); the others need more than one token
    "positive_data_acceptance",
    "use_after_free",
    "ensure_resource_availability",
    "missing_required_header",
    "ignored_auth",
    "object_level_authorization",
    "unsupported_method",
    "allow_header_conformance",
)
REFUSED = [422, 413, 415]  # VAL-001 invalid; VAL-002 over the body cap; VAL-003 no JSON body at all
REFUSED_BY_EXCHANGE = [400, 413]  # RFC 6749 invalid_request; the body cap


def _created(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 201, (path, response.status_code, response.text)
    answer: dict[str, Any] = response.json()
    return answer


def _seed(stack: Stack) -> dict[str, str]:
    """One real object of every kind a path names; their ids by path parameter."""
    with stack.client() as c:
        sa = _created(c, "/service_accounts", {"name": "fuzzed"})
        sa_token = _created(c, f"/service_accounts/{sa['id']}/access_tokens", {"name": "t"})
        user = _created(c, "/users", {"email": "fuzz@example.com", "display_name": "Fuzz"})
        user_token = _created(c, f"/users/{user['id']}/access_tokens", {})
        group = _created(c, "/groups", {"name": "fuzzers", "member_user_ids": [user["id"]]})
        policy = {"permission_id": "organization.user:get", "effect": "allow"}
        role = _created(c, "/iam/roles", {"name": "reader", "policies": [policy]})
        topic = _created(c, "/workflow_topics", {"key": "quake", "fields": FIELDS})
        book = _created(c, "/operation_books", {"name": "book", "incident_title_template": "{event.name}"})
        workflow = _created(
            c,
            "/workflows",
            {
                "name": "wf",
                "topic": topic["id"],
                "mode": "ACTUAL",
                "actions": [{"type": "RUN_OPERATION_BOOK", "operation_book_id": book["id"]}],
            },
        )
        published = c.post(f"/workflow_topics/{topic['id']}/publish", json={"data": {"magnitude": 6}, "status": "TEST"})
        assert published.status_code == 202, published.text

    async def rows(session: AsyncSession) -> tuple[str, str]:
        now = datetime.now(UTC)
        credential = FederatedCredential(
            id=new_id("cred"),
            organization_id=stack.org,
            service_account_id=sa["id"],
            display_name="fuzzed",
            issuer_url="https://issuer.example.com",
            subject_filter="repo:fuzz/*",
            audience="tocsin",
            attribute_condition=None,
            jwks_uri="https://issuer.example.com/jwks",
            status="ACTIVE",
            created_at=now,
        )
        delivery = Delivery(
            id=new_id("dlv"),
            organization_id=stack.org,
            event_id=published.json()["id"],
            workflow_id=workflow["id"],
            action_index=0,
            kind="PUSH",
            target="",
            mode="ACTUAL",
            decision="NOTIFY",
            status="DEAD",
            item={},
            created_at=now,
            updated_at=now,
        )
        session.add_all([credential, delivery])
        return credential.id, delivery.id

    credential_id, delivery_id = in_db(stack, rows)
    return {
        "org_id": stack.org,
        "account_id": sa["id"],
        "subject_id": sa["id"],
        "token_id": sa_token["id"],
        "credential_id": credential_id,
        "group_id": group["id"],
        "role_id": role["id"],
        "topic": topic["id"],
        "book_id": book["id"],
        "workflow_id": workflow["id"],
        "incident_id": insert_incident(stack, member_user_ids=[user["id"]]),
        "event_id": published.json()["id"],
        "delivery_id": delivery_id,
        "user_id": user["id"],
        "user_token_id": user_token["id"],
    }


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # the fuzzer is one client address sending many bad subject tokens: not a stranger to slow down
    failures = {"TOCSIN_EXCHANGE_FAILURE_RATE_PER_CLIENT": "100000", "TOCSIN_EXCHANGE_FAILURE_BURST": "100000"}
    stack = Stack(tmp_path_factory.mktemp("openapi-fuzz"), kafka.bootstrap, extra_env=failures)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


def _config(stack: Stack, ids: dict[str, str], seed: int) -> schemathesis.Config:
    user_ids = {"account_id": ids["user_id"], "subject_id": ids["user_id"], "token_id": ids["user_token_id"]}
    group_ids = {"subject_id": ids["group_id"]}
    return schemathesis.Config.from_dict(
        {
            "seed": seed,
            "workers": 1,  # CPython 3.11 ast is not thread-safe: 2 workers flaked in schemathesis itself
            "headers": {"Authorization": f"Bearer {stack.credentials['access_token']}"},
            "request-timeout": 30,
            "generation": {"mode": "all", "max-examples": EXAMPLES, "database": "none"},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": STATEFUL},
            },
            "checks": {
                **{name: {"enabled": True} for name in CHECKS_ON},
                **{name: {"enabled": False} for name in CHECKS_OFF},
                "negative_data_rejection": {"enabled": True, "expected-statuses": REFUSED},
            },
            "parameters": {k: v for k, v in ids.items() if k not in ("user_id", "user_token_id")},
            "operations": [
                {"include-path-regex": "/users/", "parameters": user_ids},
                {"include-path-regex": "/groups/[^/]+/iam$", "parameters": group_ids},
                {
                    "include-path-regex": "/workload-identity/",
                    "checks": {"negative_data_rejection": {"expected-statuses": REFUSED_BY_EXCHANGE}},
                },
                {  # PagerDuty's Events v2 answers every refusal 400 "invalid event" (docs/api.md)
                    "include-path-regex": "^/v2/enqueue$",
                    "checks": {"negative_data_rejection": {"expected-statuses": [400]}},
                },
            ],
        }
    )


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"n": value}
    return value


# Values no stored or forwarded body may carry (issue 16): integers beyond signed 64 bits (orjson,
# the records' encoder, refuses them) and nesting deeper than a publish body may.
HOSTILE: list[Any] = [2**63, -(2**63) - 1, 10**40, [2**64], _nested(40), [_nested(300)]]


def _json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _json_paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _json_paths(inner, (*prefix, index))


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _put(value[head], rest, new)}
    return [*value[:head], _put(value[head], rest, new), *value[head + 1 :]]


HOSTILE_SENT: list[int] = [0]  # how many hostile bodies the run drew (the hook must have run)


def _hostile(body: Any, path: tuple[Any, ...], value: Any, add: bool) -> Any:
    HOSTILE_SENT[0] += 1
    if add:  # a new key in an object: free-form objects (publish data, form answers, filters) take it
        return _put(body, path, {**_at(body, path), "hostile": value})
    return _put(body, path, value)


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def hostile_bodies(context: Any, body: Any) -> st.SearchStrategy[Any]:
    """Half of the JSON bodies as generated, half with one of :data:`HOSTILE` put somewhere: in
    place of a value (the whole body included) or as a new key of an object. Every stored body
    meets them."""
    if not isinstance(body, dict | list):
        return st.just(body)
    paths = list(_json_paths(body))
    objects = [p for p in paths if isinstance(_at(body, p), dict)] or paths
    replaced = st.builds(lambda p, v: _hostile(body, p, v, False), st.sampled_from(paths), st.sampled_from(HOSTILE))
    added = st.builds(
        lambda p, v: _hostile(body, p, v, isinstance(_at(body, p), dict)),
        st.sampled_from(objects),
        st.sampled_from(HOSTILE),
    )
    return st.one_of(st.just(body), replaced, added, added)


def test_every_operation_keeps_its_documented_contract(api: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _seed(api)
    seed = int(os.environ.get("TOCSIN_FUZZ_SEED") or random.getrandbits(64))
    schema = schemathesis.openapi.from_url(f"{api.base_url}/openapi.json", config=_config(api, ids, seed))
    schema.hook("flatmap_body")(hostile_bodies)
    documented = {f"{method.upper()} {path}" for path, item in schema.raw_schema["paths"].items() for method in item}

    started = time.monotonic()
    requests = 0
    server_errors: list[str] = []
    covered: set[str] = set()
    failures: list[str] = []
    errors: list[str] = []
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            for interaction in recorder.interactions.values():
                if interaction.response is None:
                    continue
                requests += 1
                if recorder.label in documented:  # the stateful phase labels its scenarios otherwise
                    covered.add(recorder.label)
                if interaction.response.status_code >= 500:
                    server_errors.append(
                        f"{interaction.request.method} {interaction.request.uri} -> {interaction.response.status_code}"
                    )
            for checks in recorder.checks.values():
                for check in checks:
                    if check.status == Status.FAILURE and check.failure_info is not None:
                        info = check.failure_info
                        failures.append(
                            f"{recorder.label}: {check.name}: {info.failure.title}\n    {info.failure.message}\n"
                            f"    {info.steps[-1].curl if info.steps else ''}"
                        )
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.message}")
        elif isinstance(event, events.FatalError):
            errors.append(f"fatal: {event.exception!r}")
    seconds = time.monotonic() - started

    # operations whose every request was refused before schemathesis recorded a response are not covered
    not_covered = sorted(documented - covered)
    with capsys.disabled():
        print(
            f"\nschemathesis {schemathesis.__version__}, seed {seed}, {EXAMPLES} examples per operation and phase"
            f"{' + stateful' if STATEFUL else ''}: {requests} requests, {len(covered)}/{len(documented)} "
            f"operations covered, {len(server_errors)} 5xx, {len(set(failures))} failed checks, in {seconds:.0f} s"
        )
    report = "\n".join(sorted(set(failures)) + errors + server_errors[:20])
    assert not server_errors, report
    assert not failures, report
    assert not errors, report
    assert not not_covered, f"operations never answered: {not_covered}"
    assert requests >= 2 * len(documented)
    assert HOSTILE_SENT[0] >= len(documented) // 2, f"only {HOSTILE_SENT[0]} hostile bodies were drawn"
