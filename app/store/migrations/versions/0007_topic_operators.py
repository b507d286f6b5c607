"""topic fields: operators in the spec's spelling, each on a type the spec allows it on

Until now ``fields[].values[].operators`` took any string. Stored lists are rewritten with
app.domain.workflows.filters.spec_field_values: other spellings of the spec's operators (``==``, ``in``,
``starts_with``, ...) become the spec's; what is not an operator of the spec, or not for the
entry's type, is left out (the filter code already ignored it, so no workflow changes meaning).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 06:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from app.domain.workflows.filters.operators import spec_field_values

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TOPICS = sa.table("workflow_topics", sa.column("id", sa.String), sa.column("spec", sa.JSON))


def spec_fields(spec: Any) -> Any:
    """``spec`` with every field's values in the spec's operators (unchanged when it has none)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("fields"), list):
        return spec
    fields = [
        {**f, "values": spec_field_values(f["values"])}
        if isinstance(f, dict) and isinstance(f.get("values"), list)
        else f
        for f in spec["fields"]
    ]
    return {**spec, "fields": fields}


def upgrade() -> None:
    connection = op.get_bind()
    for topic_id, spec in connection.execute(sa.select(TOPICS.c.id, TOPICS.c.spec)).all():
        fixed = spec_fields(spec)
        if fixed != spec:
            connection.execute(sa.update(TOPICS).where(TOPICS.c.id == topic_id).values(spec=fixed))


def downgrade() -> None:
    pass  # the old spellings are gone; the rewritten lists are valid for the old code as well
