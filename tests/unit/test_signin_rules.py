"""The sign-in's pure rules (issue 34): what the policy asks after a first factor, which sessions it
keeps, the throttle's backoff, TOTP steps and recovery codes."""

from __future__ import annotations

import pyotp
import pytest

from api.signin_flow import MAIL_RULE
from app.domain.iam.auth_policy import AuthenticationPolicy
from app.domain.iam.signin_policy import after_first_factor, session_satisfies
from app.domain.iam.signin_throttle import (
    ACCOUNT_RULE,
    ADDRESS_RULE,
    DEVICE_RULE,
    Backoff,
    BackoffRule,
    SignInThrottle,
)
from app.domain.iam.webauthn_counter import sign_count_accepted
from app.identity import passwords, totp


def policy(**fields: object) -> AuthenticationPolicy:
    return AuthenticationPolicy.model_validate(fields)


def test_after_first_factor() -> None:
    assert after_first_factor(policy(), set(), 0).kind == "session"
    step = after_first_factor(policy(), {"totp"}, 3)
    assert step.kind == "second_factor" and step.methods == ("totp", "recovery_code")
    assert after_first_factor(policy(), {"totp"}, 0).methods == ("totp",)
    assert after_first_factor(policy(totp_enabled=False), {"totp"}, 3).kind == "session"
    enrol = after_first_factor(policy(enforce_mfa=True), set(), 0)
    assert enrol.kind == "enrolment" and enrol.methods == ("totp", "webauthn")
    assert after_first_factor(policy(enforce_mfa=True, webauthn_enabled=False), set(), 0).methods == ("totp",)
    assert after_first_factor(policy(enforce_mfa=True, totp_enabled=False, webauthn_enabled=False), set(), 0).kind == (
        "refused"
    )
    assert after_first_factor(policy(enforce_mfa=True), {"webauthn"}, 0).methods == ("webauthn",)


@pytest.mark.parametrize(
    ("fields", "methods", "kept"),
    [
        ({}, ["password"], True),
        ({"password_login_enabled": False}, ["password"], False),
        ({"enforce_mfa": True}, ["password"], False),
        ({"enforce_mfa": True}, ["password", "totp"], True),
        ({"enforce_mfa": True}, ["password", "recovery_code"], True),
        ({"enforce_mfa": True, "totp_enabled": False}, ["password", "totp"], False),
        ({"webauthn_enabled": False}, ["password", "webauthn"], False),
        ({}, ["magic_link"], False),  # magic_link_enabled defaults to false
        ({"magic_link_enabled": True}, ["magic_link"], True),
        ({}, [], False),
        ({}, ["totp"], False),  # a second factor is no first one
    ],
)
def test_session_satisfies(fields: dict[str, object], methods: list[str], kept: bool) -> None:
    assert session_satisfies(policy(**fields), methods) is kept


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_backoff_doubles_is_capped_and_forgets() -> None:
    clock = Clock()
    backoff = Backoff(BackoffRule(free=2, base=5, cap=30, forget_after=100), clock)
    backoff.failed("k")
    assert backoff.wait("k") == 0
    waits = []
    for _ in range(5):
        backoff.failed("k")
        waits.append(backoff.wait("k"))
    assert waits == [5, 10, 20, 30, 30]  # from the second (the free-th) failure on
    clock.now += 30
    assert backoff.wait("k") == 0
    clock.now += 101
    backoff.failed("k")  # forgotten: free again
    assert backoff.wait("k") == 0


@pytest.mark.parametrize(
    ("rule", "documented"),
    [(ADDRESS_RULE, 20), (ACCOUNT_RULE, 5), (DEVICE_RULE, 5), (MAIL_RULE, 3)],
    ids=["address", "account", "device", "mail"],
)
def test_each_throttle_allows_exactly_the_documented_failures_then_waits(rule: BackoffRule, documented: int) -> None:
    """docs/api.md, Throttling: "20 free failures" per address, 5 per account (and device, and a second
    factor's codes), 3 sign-in e-mails; the attempt after them is 429. Each let one more through
    (21 / 6 / 4): the wait started only at the failure after the free ones."""
    backoff = Backoff(rule, Clock())
    for _ in range(documented - 1):
        backoff.failed("k")
    assert backoff.wait("k") == 0
    backoff.failed("k")
    assert backoff.wait("k") == rule.base


def test_backoff_wait_stays_capped_after_thousands_of_failures() -> None:
    """The exponent of the doubling is bounded: 2**1024 times a float overflowed (a 500)."""
    clock = Clock()
    backoff = Backoff(BackoffRule(free=1, base=5.0, cap=300.0, forget_after=10**9), clock)
    for _ in range(1100):
        backoff.failed("k")
        clock.now += 301
    assert backoff.wait("k") == 0
    backoff.failed("k")
    assert backoff.wait("k") == 300


def test_throttle_spares_the_device_of_the_real_user() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock)
    account = throttle.account_key("org", " Person@Example.com ")
    assert account == ("org", "person@example.com")
    for i in range(5):
        throttle.failed(f"10.0.0.{i}", account, None)
    assert throttle.wait("10.0.0.99", account, None) > 0  # a stranger from anywhere waits
    assert throttle.wait("10.0.0.99", account, "device-of-the-user") == 0  # the user's device does not
    throttle.succeeded(account, "device-of-the-user")
    assert throttle.wait("10.0.0.99", account, None) == 0


def test_throttle_max_keys_evicts_the_oldest() -> None:
    backoff = Backoff(BackoffRule(free=0, base=5, cap=5, forget_after=100), Clock(), max_keys=2)
    for key in ("a", "b", "c"):
        backoff.failed(key)
    assert backoff.wait("a") == 0 and backoff.wait("c") == 5


def test_totp_steps_and_replay() -> None:
    secret = totp.new_secret()
    now = 1_700_000_015.0
    step = int(now // 30)
    code = pyotp.TOTP(secret).at(now)
    assert totp.matching_step(secret, code, 0, now) == step
    assert totp.matching_step(secret, code, step, now) is None  # used
    assert totp.matching_step(secret, pyotp.TOTP(secret).at(now - 30), 0, now) == step - 1
    assert totp.matching_step(secret, pyotp.TOTP(secret).at(now + 60), 0, now) is None
    assert totp.matching_step(secret, "12345", 0, now) is None
    assert totp.matching_step(secret, "\uff11\uff12\uff13\uff14\uff15\uff16", 0, now) is None  # fullwidth digits


def test_recovery_codes_and_passwords() -> None:
    codes = totp.new_recovery_codes()
    assert len(set(codes)) == 10
    assert totp.recovery_hash(codes[0].upper()) == totp.recovery_hash(codes[0].replace("-", ""))
    assert passwords.password_problem("short") is not None
    assert passwords.password_problem("long enough password") is None
    stored = passwords.hash_password("long enough password")
    assert stored.startswith("$argon2id$")


async def test_password_check() -> None:
    stored = passwords.hash_password("long enough password")
    assert await passwords.verify_password(stored, "long enough password")
    assert not await passwords.verify_password(stored, "another password")
    assert not await passwords.verify_password(None, "long enough password")
    assert not await passwords.verify_password("not a hash", "x")


# ---------------------------------------------------------------- WebAuthn sign counter


@pytest.mark.parametrize(
    ("stored", "presented", "accepted"),
    [
        (0, 0, True),  # an authenticator that keeps no counter (a synced passkey)
        (0, 1, True),
        (5, 6, True),
        (5, 5, False),  # equal: a replay or a clone
        (5, 3, False),  # lower: a clone used behind the real one's back
        (5, 0, False),  # a counter that stops counting after it counted
    ],
)
def test_webauthn_sign_count_must_grow(stored: int, presented: int, accepted: bool) -> None:
    assert sign_count_accepted(stored, presented) is accepted
