"""``TOCSIN_EXCHANGE_*``: the token exchange's rate limits, per API replica, as one group.

Exchanges refused before the subject token proved anything (malformed, bad signature, unknown key,
unknown or inactive credential) are limited per client address, then answered 429 for that address,
and logged as one row per credential, address and check per window (with a count), not a row each.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ExchangeLimits(BaseSettings):
    """How often a credential and a client address may exchange tokens, and be refused."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_EXCHANGE_", extra="ignore")

    rate_per_credential: float = Field(
        default=50.0, gt=0, description="token exchanges per second per credential, per API replica"
    )
    rate_per_client: float = Field(
        default=20.0, gt=0, description="token exchanges per second per client address, per API replica"
    )
    burst: int = Field(default=40, ge=1, description="the burst of the token-exchange rate limits")
    failure_rate_per_client: float = Field(
        default=0.5, gt=0, description="refused exchanges per second per client address before 429 for that address"
    )
    failure_burst: int = Field(default=20, ge=1, description="the burst of that refusal limit")
    failure_window_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description=(
            "refused exchanges are logged as one row per credential, address and check per this window, with a count"
        ),
    )
