"""The WebAuthn sign counter rule (issue 34): pure.

An authenticator counts its signatures; a counter that does not grow past the stored one means the
credential's key is used by two devices (a cloned authenticator) or an assertion is replayed, so the
sign-in is refused. Authenticators that keep no counter (passkeys synced between devices) always
send 0: a credential whose stored and presented counters are both 0 is accepted.
"""

from __future__ import annotations


def sign_count_accepted(stored: int, presented: int) -> bool:
    """Whether an assertion's counter ``presented`` may follow the credential's ``stored`` one."""
    if stored == 0 and presented == 0:
        return True
    return presented > stored
