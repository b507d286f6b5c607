"""The organization a request's log lines name (issue 30, item 4): only one the caller has been
authenticated for. An unauthenticated publish's 401 ``request`` line carried the organization id
its path named, so anyone could write lines tagged with any organization into its log view.

In-process: the API's ASGI entry (api/fastpath.py, the publish fast path and the access line) with
a stand-in state holding one cached principal, logs rendered as in production."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from typing import Any

import pytest

from api.fastpath import TocsinAPI
from app.domain.iam.principal import Principal
from app.observability import logs

ORG, OTHER_ORG = "org_victim", "org_caller"
TOKEN = "tok-of-a-user"


@dataclass
class _State:
    """What the publish reads of the API's state before it refuses these requests."""

    principals: dict[str, Principal]
    used_tokens: set[str] = field(default_factory=set)


def _access_line(org_in_path: str, authorization: str | None, principal_org: str = ORG) -> tuple[int, dict[str, Any]]:
    """Publish to ``org_in_path`` with ``authorization``; the response's status and the request's
    access line."""
    out = io.StringIO()
    logs.configure("json", "INFO", out)
    app = TocsinAPI()
    user = Principal("usr_1", principal_org, "user_account", False, "tok_1", ())
    app.state.tocsin = _State({TOKEN: user})
    headers = [(b"content-type", b"application/json")]
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    scope = {
        "type": "http",
        "method": "POST",
        "path": f"/v1/organizations/{org_in_path}/workflow_topics/quake/publish",
        "root_path": "",
        "headers": headers,
        "client": ("192.0.2.7", 4000),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    (line,) = [r for r in map(logs.parse_line, out.getvalue().splitlines()) if r["event"] == "request"]
    return sent[0]["status"], line


@pytest.mark.parametrize("authorization", [None, "Bearer", "Basic abc", "Bearer not-a-token"])
def test_an_unauthenticated_request_line_names_no_organization(
    restore_logging: None, authorization: str | None
) -> None:
    status, line = _access_line(ORG, authorization)
    assert status == 401
    assert "organization_id" not in line, line
    assert line["path"].endswith(f"/{ORG}/workflow_topics/quake/publish"), "the path is there, as sent"


def test_a_caller_of_another_organization_is_not_tagged_with_the_one_it_named(restore_logging: None) -> None:
    status, line = _access_line(ORG, f"Bearer {TOKEN}", principal_org=OTHER_ORG)
    assert status == 404
    assert "organization_id" not in line, line


def test_an_authenticated_caller_of_the_organization_is_tagged_with_it(restore_logging: None) -> None:
    status, line = _access_line(ORG, f"Bearer {TOKEN}")
    assert status == 403, "a user account cannot publish: refused after authentication"
    assert line["organization_id"] == ORG
