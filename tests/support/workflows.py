"""Workflow set-ups and incident reads over the HTTP API, shared by the e2e tests and the bench."""

from __future__ import annotations

from typing import Any

import httpx


def operation_book(client: httpx.Client, key: str) -> str:
    """An operation book titling each incident with its event's name; its id."""
    book = client.post("/operation_books", json={"name": f"{key} book", "incident_title_template": "{event.name}"})
    assert book.status_code == 201, book.text
    book_id: str = book.json()["id"]
    return book_id


def actual_workflow(client: httpx.Client, key: str, name: str, actions: list[dict[str, Any]], **extra: Any) -> str:
    """An ACTUAL workflow on topic ``key`` with these actions (and ``extra`` fields, a filter...); its id."""
    workflow = client.post(
        "/workflows", json={"name": name, "topic": key, "mode": "ACTUAL", "actions": actions, **extra}
    )
    assert workflow.status_code == 201, workflow.text
    workflow_id: str = workflow.json()["id"]
    return workflow_id


def setup_topic(client: httpx.Client, key: str, profile: dict[str, Any]) -> dict[str, str]:
    """A topic with this control policy and one ACTUAL workflow creating an incident per NOTIFY."""
    topic = client.post("/workflow_topics", json={"key": key, "name_en": key, "control_policy_profile": profile})
    assert topic.status_code == 201, topic.text
    actions = [{"type": "RUN_OPERATION_BOOK", "operation_book_id": operation_book(client, key)}]
    return {"topic": topic.json()["id"], "workflow": actual_workflow(client, key, f"{key} alert", actions)}


def all_incidents(client: httpx.Client) -> list[dict[str, Any]]:
    """Every incident of the client's organization, following the cursor."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        page = client.get("/incidents", params=params).json()
        items.extend(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return items
