"""Retention (days; 0 keeps forever), as one group: purged by the API process every
``retention_interval_seconds`` (0: never; ``tocsin purge`` runs one pass) in batches of
``retention_batch_size`` rows (app/store/retention.py)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetentionSettings(BaseSettings):
    """How long stored results are kept, and how the purge runs (variables keep their names)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

    trace_retention_days: float = Field(
        default=30.0, ge=0, description="how long event trace steps are kept (0: forever)"
    )
    push_outbox_retention_days: float = Field(
        default=30.0, ge=0, description="how long the push outbox is kept (0: forever)"
    )
    exchange_retention_days: float = Field(
        default=90.0, ge=0, description="how long token-exchange records are kept (0: forever)"
    )
    audit_retention_days: float = Field(default=365.0, ge=0, description="how long the audit log is kept (0: forever)")
    retention_interval_seconds: float = Field(
        default=3600.0,
        ge=0,
        description=(
            "how often each API replica purges past retention (0: never; `tocsin purge` runs "
            "one pass; on PostgreSQL one replica at a time)"
        ),
    )
    retention_batch_size: int = Field(
        default=1000, ge=1, le=100_000, description="rows the purge deletes per short transaction"
    )

    def days(self) -> dict[str, float]:
        """Days kept, by what the purge deletes (0: forever)."""
        return {
            "traces": self.trace_retention_days,
            "push_outbox": self.push_outbox_retention_days,
            "exchanges": self.exchange_retention_days,
            "audit_log": self.audit_retention_days,
        }
