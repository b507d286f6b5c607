"""The OpenAPI document generated clients are built from (issue 33, item 5): every operation has a
short stable ``operationId`` (a snake_case name a generated client exposes as a function), the bearer
security scheme is declared and required by default, and exactly the operations that take no token
(health, metrics, the token exchange, the sign-in steps, PagerDuty's /v2/enqueue) say so."""

from __future__ import annotations

import re
from typing import Any

import pytest

from api.main import create_app


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    document: dict[str, Any] = create_app().openapi()
    return document


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def test_every_operation_has_a_short_unique_snake_case_id(spec: dict[str, Any]) -> None:
    ids = [op["operationId"] for _p, _m, op in _operations(spec)]
    assert len(ids) == len(set(ids))
    assert [i for i in ids if not re.fullmatch(r"[a-z][a-z0-9_]{2,39}", i)] == []
    named = {(m, p): op["operationId"] for p, m, op in _operations(spec)}
    # the ids client code calls: a few, spelled out, so renaming one is a visible decision
    assert named[("post", "/v1/organizations/{org_id}/workflow_topics/{topic}/publish")] == "publish"
    assert named[("get", "/v1/organizations/{org_id}/events/{event_id}")] == "get_event_trace"
    assert named[("post", "/v1/organizations/{org_id}/iam:check")] == "check_iam_permission"
    assert named[("post", "/v2/enqueue")] == "pagerduty_enqueue"


def test_the_bearer_scheme_is_required_except_where_no_token_is_taken(spec: dict[str, Any]) -> None:
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert spec["security"] == [{"bearer": []}]
    public = {(m.upper(), p) for p, m, op in _operations(spec) if op.get("security") == []}
    assert {("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("POST", "/v2/enqueue")} <= public
    assert ("POST", "/auth/workload-identity/{credential_id}/token") in public
    assert {p for _m, p in public} - {"/healthz", "/readyz", "/metrics", "/v2/enqueue"} == {
        "/auth/workload-identity/{credential_id}/token",
        "/v1/organizations/{org_id}/signin_methods",
        *(p for _m, p in public if p.startswith("/v1/signin/")),
    }
    assert ("POST", "/v1/organizations/{org_id}/workflow_topics/{topic}/integration_keys") not in public
    enrolment = spec["paths"]["/v1/signin/totp_enrolment"]["post"]["security"]
    assert enrolment == [{}, {"bearer": []}]  # an enrolment step's challenge, or the person's session


def test_the_enqueue_documents_events_v2_answers_only(spec: dict[str, Any]) -> None:
    responses = spec["paths"]["/v2/enqueue"]["post"]["responses"]
    assert set(responses) == {"202", "400", "429", "503"}
    assert "ErrorOut" not in str(responses)
