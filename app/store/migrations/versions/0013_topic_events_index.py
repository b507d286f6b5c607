"""event_trace_steps: a partial index on the accepted steps by organization, topic and time, for the
list of a topic's events (GET …/workflow_topics/{topic}/events, app/store/topic_events.py; issue 39)

The topic is inside the step's JSON detail: the index is on the expression, written as the list's
query writes it on each database (a query must repeat an indexed expression exactly to use it).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

NAME = "ix_event_trace_steps_topic"
TOPIC = {
    "postgresql": "(detail ->> 'topic_id')",
    "sqlite": "json_extract(detail, '$.topic_id')",
}


def upgrade() -> None:
    topic = TOPIC[op.get_bind().dialect.name]
    op.execute(
        f"CREATE INDEX {NAME} ON event_trace_steps (organization_id, {topic}, recorded_at, event_id) "
        "WHERE step = 'accepted'"
    )


def downgrade() -> None:
    op.execute(f"DROP INDEX {NAME}")
