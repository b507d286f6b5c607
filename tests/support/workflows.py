"""Workflow set-ups and incident reads over the HTTP API, shared by the e2e tests and the bench."""

from __future__ import annotations

from typing import Any

import httpx


def setup_topic(client: httpx.Client, key: str, profile: dict[str, Any]) -> dict[str, str]:
    """A topic with this control policy and one ACTUAL workflow creating an incident per NOTIFY."""
    topic = client.post("/workflow_topics", json={"key": key, "name_en": key, "control_policy_profile": profile})
    assert topic.status_code == 201, topic.text
    book = client.post("/operation_books", json={"name": f"{key} book", "incident_title_template": "{event.name}"})
    assert book.status_code == 201, book.text
    workflow = client.post(
        "/workflows",
        json={
            "name": f"{key} alert",
            "topic": key,
            "mode": "ACTUAL",
            "actions": [{"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]}],
        },
    )
    assert workflow.status_code == 201, workflow.text
    return {"topic": topic.json()["id"], "workflow": workflow.json()["id"]}


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
