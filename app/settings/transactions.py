"""Publishes in Kafka transactions (api/publisher.py), as one group.

On: a 503 means the event is never decided (spec: "any status but 202 means not accepted"). Off: a
503 may still be decided (a record left in a buffer is written later), for a few percent more
throughput (docs: The publish guarantee).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class PublishTransactions(BaseSettings):
    """How the API groups publishes into transactions (variables keep their names)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

    publish_transactions: bool = Field(
        default=True,
        description=(
            "publishes in Kafka transactions, so a publish answered anything but 202 is never decided "
            "(false: a 503 may still be decided)"
        ),
    )
    # The id must be unique per API
    # process and the same after its restart, so that the new process fences the old one's open
    # transaction at once. Empty: <topic prefix>api-<host name>-<api_port>.
    transactional_id: str = Field(
        default="",
        max_length=200,
        description=(
            "the API process's Kafka transactional id (lane n: <id>-n), unique per process "
            "and the same after a restart; empty: <topic prefix>api-<host>-<API port>"
        ),
    )
    # How long an API process that died in a transaction keeps it open before the broker aborts it
    # (the worker's consumers wait that long on its partitions, unless the process comes back first).
    transaction_timeout_seconds: float = Field(
        default=20.0,
        ge=1,
        le=900,
        description="after this long the broker aborts a transaction an API process left open",
    )
    # At most this many publishes in one transaction; this many transactions in progress at once
    # (one producer each, transactional ids <transactional_id>-0, -1, ...).
    publish_transaction_records: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="at most this many publishes in one transaction (a batch publish is never split)",
    )
    publish_transaction_lanes: int = Field(
        default=3, ge=1, le=16, description="transactions in progress at once per API process (one producer each)"
    )
    # A transaction costs the broker about the same whatever it holds: publishes are grouped by time,
    # one lane collecting while the others commit (api/publisher.py; measured in docs/benchmarks.md).
    publish_transaction_window_ms: float = Field(
        default=5.0,
        ge=0,
        le=100,
        description=(
            "a transaction collects publishes for this long after its oldest one arrived (the most a "
            "publish waits for it; 0: whatever is queued when a lane is free)"
        ),
    )
