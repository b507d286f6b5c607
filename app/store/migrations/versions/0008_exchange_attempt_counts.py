"""exchange attempts: a count, so failures before a subject token proved anything are one row per
source and failing check in a window instead of a row each (app/identity/federation.py)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("exchange_attempts") as batch:
        batch.add_column(sa.Column("count", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("exchange_attempts") as batch:
        batch.drop_column("count")
