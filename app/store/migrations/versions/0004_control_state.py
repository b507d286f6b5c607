"""event control: incidents per episode, control state read model

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 05:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("episode_key", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_incidents_episode", ["episode_key", "workflow_id"], unique=False)
    op.create_table(
        "control_state_views",
        sa.Column("key", sa.String(length=1200), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("topic_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("partition_key", sa.String(length=1024), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("view", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("control_state_views")
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.drop_index("ix_incidents_episode")
        batch_op.drop_column("episode_key")
