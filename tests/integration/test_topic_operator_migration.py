"""Migration 0007: stored topic operators are rewritten to the spec's (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import text

from app.store.db import alembic_config, create_engine, migrate
from tests.support.postgres_local import LocalPostgres

OLD_FIELDS = [
    {"id": "mag", "path": "mag", "values": [{"type": "number", "operators": ["==", ">=", "between", "LIKE"]}]},
    {
        "id": "region",
        "path": "region",
        "values": [{"type": "string", "operators": ["in", "starts_with", ">"]}, {"type": "string", "operators": ["x"]}],
    },
    {"id": "free", "path": "free"},
]
NEW_FIELDS = [
    {"id": "mag", "path": "mag", "values": [{"type": "number", "operators": ["=", ">=", "BETWEEN"]}]},
    {"id": "region", "path": "region", "values": [{"type": "string", "operators": ["IN", "STARTS WITH"]}]},
    {"id": "free", "path": "free"},
]


def run(url: str, sql: str, **params: Any) -> list[Any]:
    async def go() -> list[Any]:
        engine = create_engine(url)
        try:
            async with engine.begin() as conn:
                result = await conn.execute(text(sql), params)
                return list(result.all()) if result.returns_rows else []
        finally:
            await engine.dispose()

    return asyncio.run(go())


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_stored_operators_are_rewritten_to_the_specs_spelling(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    else:
        server: LocalPostgres = request.getfixturevalue("postgres")
        url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    command.upgrade(alembic_config(url), "0006")
    run(
        url,
        "INSERT INTO organizations (id, name, partner_organization_ids,"
        " license_subscriber_organization_ids, created_at) VALUES ('org_m', 'm', '[]', '[]', CURRENT_TIMESTAMP)",
    )
    for topic_id, spec in (("wtp_old", {"fields": OLD_FIELDS, "access_scope": "private"}), ("wtp_none", {})):
        run(
            url,
            "INSERT INTO workflow_topics (id, organization_id, key, spec, status, created_at)"
            " VALUES (:id, 'org_m', :id, :spec, 'ACTIVE', CURRENT_TIMESTAMP)",
            id=topic_id,
            spec=json.dumps(spec),
        )
    migrate(url)
    stored = {row[0]: row[1] for row in run(url, "SELECT id, spec FROM workflow_topics")}
    specs = {k: json.loads(v) if isinstance(v, str) else v for k, v in stored.items()}
    assert specs["wtp_old"] == {"fields": NEW_FIELDS, "access_scope": "private"}
    assert specs["wtp_none"] == {}
