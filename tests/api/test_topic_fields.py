"""Topic ``fields[].values[].operators`` over HTTP: only the spec's operators, each on a type the
spec's table allows it on; anything else is 422 VAL-001 on create and on update."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

ALLOWED = {  # the spec's table, written out here rather than read from the code
    "number": ["=", "!=", ">", ">=", "<", "<=", "BETWEEN", "IN", "NOT IN", "EXISTS", "IS NULL", "IS NOT NULL"],
    "string": ["=", "!=", "IN", "NOT IN", "CONTAINS", "STARTS WITH", "ENDS WITH", "EXISTS", "IS NULL", "IS NOT NULL"],
    "boolean": ["=", "!=", "EXISTS", "IS NULL", "IS NOT NULL"],
}
REFUSED = [
    ("string", [">"]),
    ("string", ["BETWEEN"]),
    ("boolean", ["IN"]),
    ("boolean", ["CONTAINS"]),
    ("number", ["STARTS WITH"]),
    ("number", ["CONTAINS"]),
    ("number", ["=="]),
    ("string", ["in"]),
    ("string", ["LIKE"]),
    ("string", ["STARTS_WITH"]),
    ("any", ["~"]),
    ("number", ["=", "="]),
]


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("topic-fields"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def owner(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as client:
        yield client


def fields(ftype: str, operators: list[str]) -> list[dict[str, Any]]:
    return [{"id": "f", "path": "f", "values": [{"type": ftype, "operators": operators}]}]


def test_every_operator_on_every_type_the_spec_allows_is_accepted(owner: httpx.Client) -> None:
    for ftype, operators in ALLOWED.items():
        r = owner.post("/workflow_topics", json={"key": f"ops-{ftype}", "fields": fields(ftype, operators)})
        assert r.status_code == 201, (ftype, r.text)
        assert r.json()["fields"][0]["values"][0]["operators"] == operators
    every = sorted({op for ops in ALLOWED.values() for op in ops})
    assert owner.post("/workflow_topics", json={"key": "ops-any", "fields": fields("any", every)}).status_code == 201


@pytest.mark.parametrize(("ftype", "operators"), REFUSED)
def test_an_operator_outside_the_spec_or_its_types_is_422_on_create_and_update(
    owner: httpx.Client, ftype: str, operators: list[str]
) -> None:
    key = f"bad-{uuid.uuid4().hex[:12]}"
    r = owner.post("/workflow_topics", json={"key": key, "fields": fields(ftype, operators)})
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert owner.post("/workflow_topics", json={"key": key}).status_code == 201
    r = owner.patch(f"/workflow_topics/{key}", json={"fields": fields(ftype, operators)})
    assert (r.status_code, r.json()["code"]) == (422, "VAL-001"), r.text
    assert owner.get(f"/workflow_topics/{key}").json()["fields"] == []
