"""The HTTP side of the commands for people at a terminal: one client per command, bound to the
organization's paths, and the API's error body turned into one line for the terminal."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from cli.profile import Target


def api_client(target: Target, timeout: float = 60, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client whose relative paths are under ``{url}/v1/organizations/{organization}`` (``transport``:
    the tests' ``httpx.MockTransport``)."""
    return httpx.Client(
        transport=transport,
        base_url=f"{target.url}/v1/organizations/{target.organization}",
        headers={"Authorization": f"Bearer {target.token}", "User-Agent": "tocsin-cli"},
        timeout=timeout,
    )


def segment(value: str) -> str:
    """``value`` as one path segment: quoted whole (``/``, ``?``, ``#``, ``%`` included), and ``.`` or ``..``
    spelt ``%2E`` so that no id given on the command line can move the request to another path."""
    if value in (".", ".."):
        return "%2E" * len(value)
    return quote(value, safe="")


def refusal(response: httpx.Response) -> str:
    """``STATUS CODE: message`` and the failing fields of an error answer (the API's error body:
    docs/reference/errors.md)."""
    try:
        body: Any = response.json()
    except ValueError:
        return f"{response.status_code}: {response.text[:200]}"
    if not isinstance(body, dict):
        return f"{response.status_code}: {response.text[:200]}"
    line = f"{response.status_code} {body.get('code', '')}: {body.get('message', '')}".replace(" :", ":")
    details = body.get("details") or {}
    fields = details.get("fields") if isinstance(details, dict) else None
    for field in fields or ():
        if isinstance(field, dict):
            line += f"\n  {field.get('field') or '(body)'}: {field.get('message')}"
    return line


def check(response: httpx.Response, what: str) -> Any:
    """The answer's JSON, or ``SystemExit`` saying what was refused and why."""
    if response.is_success:
        return response.json() if response.content else None
    raise SystemExit(f"tocsin: {what} refused: {refusal(response)}")
