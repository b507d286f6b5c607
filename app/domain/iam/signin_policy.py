"""What the organization's authentication policy allows a person's sign-in (issue 34): pure.

A sign-in has one first factor (``password`` or ``magic_link``) and at most one second factor
(``totp``, ``webauthn``, or a ``recovery_code`` of the TOTP enrolment). The policy is read at every
sign-in and every time a session is presented, so a change applies at the next sign-in and ends
the sessions that no longer satisfy it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from app.domain.iam.auth_policy import AuthenticationPolicy

FIRST_FACTORS = ("password", "magic_link")
SECOND_FACTORS = ("totp", "webauthn")
RECOVERY_CODE = "recovery_code"

# the policy field that turns each method on
POLICY_FIELD = {
    "password": "password_login_enabled",
    "magic_link": "magic_link_enabled",
    "totp": "totp_enabled",
    "webauthn": "webauthn_enabled",
    RECOVERY_CODE: "totp_enabled",  # the TOTP enrolment's backup codes
    "password_reset": "password_self_reset_enabled",
}


def method_enabled(policy: AuthenticationPolicy, method: str) -> bool:
    field = POLICY_FIELD.get(method)
    return field is not None and bool(getattr(policy, field))


def enabled_second_factors(policy: AuthenticationPolicy) -> list[str]:
    return [m for m in SECOND_FACTORS if method_enabled(policy, m)]


@dataclass(frozen=True, slots=True)
class NextStep:
    """After a first factor: ``session`` (done), ``second_factor`` (prove one of ``methods``) or
    ``enrolment`` (enforce_mfa and no usable second factor yet: enrol one of ``methods``)."""

    kind: Literal["session", "second_factor", "enrolment", "refused"]
    methods: tuple[str, ...] = ()


def after_first_factor(policy: AuthenticationPolicy, enrolled: Collection[str], recovery_codes_left: int) -> NextStep:
    """A user who enrolled a second factor the policy allows always proves it; one without is led
    to enrol when the policy enforces MFA, else signed in."""
    usable = [m for m in SECOND_FACTORS if m in enrolled and method_enabled(policy, m)]
    if usable:
        if "totp" in usable and recovery_codes_left > 0:
            usable.append(RECOVERY_CODE)
        return NextStep("second_factor", tuple(usable))
    if policy.enforce_mfa:
        choices = enabled_second_factors(policy)
        return NextStep("enrolment", tuple(choices)) if choices else NextStep("refused")
    return NextStep("session")


def session_satisfies(policy: AuthenticationPolicy, methods: Sequence[str]) -> bool:
    """Whether a session made with ``methods`` (first factor first) may still be used."""
    if not methods or methods[0] not in FIRST_FACTORS:
        return False
    if not all(method_enabled(policy, m) for m in methods):
        return False
    return not policy.enforce_mfa or any(m in (*SECOND_FACTORS, RECOVERY_CODE) for m in methods[1:])
