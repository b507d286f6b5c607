"""People's sign-in: their credentials (password, TOTP), one-time sign-in tokens, sessions and
WebAuthn credentials."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ForeignKey,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class UserCredential(Base):
    """A person's sign-in secrets (issue 34): never returned, never logged."""

    __tablename__ = "user_credentials"
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    password_hash: Mapped[str | None] = mapped_column(String(200))
    password_changed_at: Mapped[datetime | None]
    totp_secret: Mapped[str | None] = mapped_column(String(64))  # confirmed second factor
    totp_pending_secret: Mapped[str | None] = mapped_column(String(64))  # enrolment not yet confirmed
    totp_last_step: Mapped[int] = mapped_column(BigInteger, default=0)  # a code's time step is used once
    recovery_code_hashes: Mapped[list[Any]] = mapped_column(default=list)


class SignInToken(Base):
    """A one-time secret: magic link, password reset, invitation, or a sign-in's pending step."""

    __tablename__ = "signin_tokens"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(20))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class UserSession(Base):
    """A completed sign-in: its access token and its console cookie are stored as SHA-256 only."""

    __tablename__ = "user_sessions"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    methods: Mapped[list[Any]] = mapped_column(default=list)  # e.g. ["password", "totp"]
    access_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    cookie_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    address: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime]
    access_expires_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]
    end_reason: Mapped[str | None] = mapped_column(String(40))


class WebAuthnCredential(Base):
    """A user's authenticator (several per user); its sign counter only grows."""

    __tablename__ = "webauthn_credentials"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    credential_id: Mapped[str] = mapped_column(String(1400), unique=True)  # base64url
    public_key: Mapped[str] = mapped_column(Text)  # base64url COSE key
    sign_count: Mapped[int] = mapped_column(BigInteger, default=0)
    name: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
