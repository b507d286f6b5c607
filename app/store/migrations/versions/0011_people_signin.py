"""People's sign-in (issue 34): credentials (argon2id password, TOTP, recovery codes), one-time
sign-in tokens (magic link, password reset, invitation, pending step), sessions, WebAuthn authenticators

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_credentials",
        sa.Column("account_id", sa.String(length=40), sa.ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("password_hash", sa.String(length=200), nullable=True),
        sa.Column("password_changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("totp_secret", sa.String(length=64), nullable=True),
        sa.Column("totp_pending_secret", sa.String(length=64), nullable=True),
        sa.Column("totp_last_step", sa.BigInteger(), nullable=False),
        sa.Column("recovery_code_hashes", sa.JSON(), nullable=False),
    )
    op.create_table(
        "signin_tokens",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("token_hash", sa.String(length=64), nullable=False, unique=True),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("account_id", sa.String(length=40), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_signin_tokens_account_id", "signin_tokens", ["account_id"])
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("account_id", sa.String(length=40), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("methods", sa.JSON(), nullable=False),
        sa.Column("access_token_hash", sa.String(length=64), nullable=False, unique=True),
        sa.Column("cookie_hash", sa.String(length=64), nullable=False, unique=True),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("user_agent", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("access_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("end_reason", sa.String(length=40), nullable=True),
    )
    op.create_index("ix_user_sessions_account_id", "user_sessions", ["account_id"])
    op.create_index("ix_user_sessions_organization_id", "user_sessions", ["organization_id"])
    op.create_table(
        "webauthn_credentials",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("account_id", sa.String(length=40), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("credential_id", sa.String(length=1400), nullable=False, unique=True),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_webauthn_credentials_account_id", "webauthn_credentials", ["account_id"])


def downgrade() -> None:
    op.drop_table("webauthn_credentials")
    op.drop_table("user_sessions")
    op.drop_table("signin_tokens")
    op.drop_table("user_credentials")
