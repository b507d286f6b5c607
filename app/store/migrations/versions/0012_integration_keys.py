"""integration_keys: PagerDuty Events v2 routing keys, each bound to one workflow topic, stored as
their SHA-256 (issue 33, item 4)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 10:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "integration_keys",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column(
            "topic_id",
            sa.String(length=40),
            sa.ForeignKey("workflow_topics.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_integration_keys_organization_id", "integration_keys", ["organization_id"])
    op.create_index("ix_integration_keys_topic_id", "integration_keys", ["topic_id"])


def downgrade() -> None:
    op.drop_index("ix_integration_keys_topic_id", "integration_keys")
    op.drop_index("ix_integration_keys_organization_id", "integration_keys")
    op.drop_table("integration_keys")
