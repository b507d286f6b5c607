"""retention: an index on the timestamp each purge selects by (app/store/retention.py)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 23:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

INDEXES = [
    ("ix_event_trace_steps_recorded_at", "event_trace_steps", "recorded_at"),
    ("ix_push_created", "push_notifications", "created_at"),
    ("ix_exchange_attempts_at", "exchange_attempts", "at"),
    ("ix_audit_log_at", "audit_log", "at"),
]


def upgrade() -> None:
    for name, table, column in INDEXES:
        op.create_index(name, table, [column])


def downgrade() -> None:
    for name, table, _column in INDEXES:
        op.drop_index(name, table_name=table)
