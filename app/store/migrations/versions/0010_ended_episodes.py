"""ended_episodes: a control episode whose RESOLVE reached the incident sink before its NOTIFY, so
that the NOTIFY opens the episode's incident RESOLVED (app/domain/workflows/episodes.py)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ended_episodes",
        sa.Column("episode_key", sa.String(length=64), primary_key=True),
        sa.Column("workflow_id", sa.String(length=40), primary_key=True),
        sa.Column("effect_id", sa.String(length=40), nullable=False),
        sa.Column("server_event_id", sa.String(length=40), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ended_episodes")
