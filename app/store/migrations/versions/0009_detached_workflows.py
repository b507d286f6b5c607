"""workflows: ``topic_id`` may be null — a receiving organization's workflow detached (and made
INACTIVE) when the organization owning its shared topic deleted the topic (api/routes/topics.py)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 07:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workflows") as batch:
        batch.alter_column("topic_id", existing_type=sa.String(length=40), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM workflows WHERE topic_id IS NULL")  # detached ones have nothing to run on
    with op.batch_alter_table("workflows") as batch:
        batch.alter_column("topic_id", existing_type=sa.String(length=40), nullable=False)
