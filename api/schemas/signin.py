"""The request and response bodies of the sign-in and session routes (api/routes/signin.py,
signin_links.py, sessions.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from api.models import In, Out, Timestamp
from app.identity import passwords


class PasswordIn(In):
    organization_id: str = Field(min_length=1, max_length=40)
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    device_token: str | None = Field(
        default=None, max_length=100, description="from an earlier sign-in (else the tocsin_device cookie)"
    )


class SecondFactorIn(In):
    challenge: str = Field(min_length=1, max_length=100)
    method: Literal["totp", "recovery_code"]
    code: str = Field(min_length=1, max_length=40)


class ChallengeIn(In):
    challenge: str | None = Field(
        default=None, max_length=100, description="an enrolment step's challenge; without it, the caller's session"
    )


class TotpConfirmIn(ChallengeIn):
    code: str = Field(min_length=1, max_length=40)


class AddressIn(In):
    organization_id: str = Field(min_length=1, max_length=40)
    email: str = Field(min_length=1, max_length=320)


class OneTimeTokenIn(In):
    token: str = Field(min_length=1, max_length=100)
    device_token: str | None = Field(default=None, max_length=100)


class NewPasswordIn(In):
    token: str = Field(min_length=1, max_length=100)
    new_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


class MethodsOut(Out):
    password: bool
    magic_link: bool
    password_reset: bool
    totp: bool
    webauthn: bool
    enforce_mfa: bool


class SessionCreatedOut(Out):
    id: str
    account_id: str
    organization_id: str
    methods: list[str]
    access_token: str = Field(description="the API access token (Bearer); returned only here")
    token_type: Literal["Bearer"]
    expires_in: int = Field(description="seconds the access token lasts")
    session_expires_at: Timestamp
    csrf_token: str = Field(description="send it in X-CSRF-Token with the cookie on every change")


class SignInOut(Out):
    status: Literal["signed_in", "second_factor_required", "enrolment_required"]
    methods: list[str] = Field(description="the second factors to prove (or to enrol); the session's when signed in")
    challenge: str | None = Field(description="the pending step's secret, for the next call")
    expires_in: int | None = Field(description="seconds the challenge lasts")
    session: SessionCreatedOut | None
    device_token: str | None = Field(description="a new device's token: failures of others do not slow it")


class AcceptedOut(Out):
    status: Literal["accepted"]


class TotpEnrolmentOut(Out):
    secret: str
    otpauth_uri: str
    qr_svg: str


class TotpConfirmedOut(Out):
    recovery_codes: list[str] = Field(description="shown only here; each works once")
    signin: SignInOut | None


class SessionOut(Out):
    id: str
    methods: list[str]
    address: str
    user_agent: str
    created_at: Timestamp
    expires_at: Timestamp
    current: bool


class MeOut(Out):
    account_id: str
    organization_id: str
    email: str | None
    display_name: str
    session_id: str
    methods: list[str]
    csrf_token: str | None


class RefreshedOut(Out):
    access_token: str
    token_type: Literal["Bearer"]
    expires_in: int


class InvitationOut(Out):
    url: str
    token: str
    expires_at: Timestamp
