"""The organization authentication policy: the spec's fields, defaults and bounds."""

from __future__ import annotations

from pydantic import Field

from app.domain.shared.strict_model import StrictModel

MIN_RESET_SECONDS = 60
MAX_RESET_SECONDS = 2_592_000


class AuthenticationPolicy(StrictModel):
    """PUT replaces the whole policy; a missing field takes its default."""

    password_login_enabled: bool = True
    password_self_reset_enabled: bool = False
    password_reset_token_expires_in_seconds: int = Field(default=900, ge=MIN_RESET_SECONDS, le=MAX_RESET_SECONDS)
    enforce_mfa: bool = False
    totp_enabled: bool = True
    webauthn_enabled: bool = True
    magic_link_enabled: bool = False
