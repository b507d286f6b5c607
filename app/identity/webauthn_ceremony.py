"""WebAuthn ceremonies (registration and authentication) with the ``webauthn`` library.

The relying party is this installation: its id is ``TOCSIN_PUBLIC_URL``'s host name and the only
origin accepted is that URL's scheme, host and port (a browser refuses an IP address as an RP id:
reach the console by a name; :meth:`RelyingParty.of` says what ``tocsin run``'s loopback address
gives). Attestation is not asked for (``none``): an authenticator proves it holds the key at every
sign-in, not who made it. The sign counter rule is app/domain/iam/webauthn_counter.py's, checked
before the signature.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import (
    base64url_to_bytes,
    bytes_to_base64url,
    parse_authentication_credential_json,
    parse_authenticator_data,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from app.domain.iam.webauthn_counter import sign_count_accepted
from app.errors import TocsinError

RP_NAME = "Tocsin"
_LOOPBACK_ADDRESSES = ("127.0.0.1", "::1")
TIMEOUT_MS = 120_000


class CeremonyFailed(TocsinError):
    """The authenticator's answer does not verify (wrong challenge, origin, RP id, signature, shape)."""


class SignCountRegressed(CeremonyFailed):
    """The assertion's sign counter did not grow: a cloned authenticator or a replay."""

    def __init__(self, stored: int, presented: int) -> None:
        super().__init__(f"sign counter {presented} does not follow the stored {stored}")
        self.stored = stored
        self.presented = presented


@dataclass(frozen=True, slots=True)
class RelyingParty:
    id: str
    origins: tuple[str, ...]

    @property
    def origin(self) -> str:
        return self.origins[0]

    @classmethod
    def of(cls, public_url: str) -> RelyingParty:
        """This installation as a relying party. A loopback IP address (``tocsin run``'s public URL)
        cannot be an RP id, so there the id is ``localhost`` and the console is reached by that name
        (the address ``make run`` prints); an answer from the IP address's origin is still taken."""
        parts = urlsplit(public_url)
        host = parts.hostname or "localhost"
        origin = f"{parts.scheme}://{parts.netloc}"
        if host in _LOOPBACK_ADDRESSES:
            port = f":{parts.port}" if parts.port else ""
            return cls(id="localhost", origins=(f"{parts.scheme}://localhost{port}", origin))
        return cls(id=host, origins=(origin,))


@dataclass(frozen=True, slots=True)
class Registered:
    credential_id: str  # base64url
    public_key: str  # base64url COSE key
    sign_count: int


def _json(options: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(options_to_json(options))
    return out


def registration_options(
    rp: RelyingParty, user_handle: str, user_name: str, display_name: str, existing: list[str]
) -> tuple[dict[str, Any], str]:
    """``navigator.credentials.create``'s options (JSON form) and the challenge (base64url) to keep."""
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=RP_NAME,
        user_id=user_handle.encode(),
        user_name=user_name,
        user_display_name=display_name,
        timeout=TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.DISCOURAGED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in existing],
    )
    return _json(options), bytes_to_base64url(options.challenge)


def verify_registration(rp: RelyingParty, credential: dict[str, Any], challenge: str) -> Registered:
    try:
        done = verify_registration_response(
            credential=credential,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise CeremonyFailed(str(exc)) from exc
    return Registered(
        credential_id=bytes_to_base64url(done.credential_id),
        public_key=bytes_to_base64url(done.credential_public_key),
        sign_count=done.sign_count,
    )


def authentication_options(rp: RelyingParty, allowed: list[str]) -> tuple[dict[str, Any], str]:
    """``navigator.credentials.get``'s options for the user's authenticators, and the challenge."""
    options = generate_authentication_options(
        rp_id=rp.id,
        timeout=TIMEOUT_MS,
        allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in allowed],
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    return _json(options), bytes_to_base64url(options.challenge)


def credential_id_of(credential: dict[str, Any]) -> str:
    """The credential id an answer names (not yet verified), or "" when it names none."""
    value = credential.get("id")
    return value if isinstance(value, str) and 0 < len(value) <= 1400 else ""


def verify_authentication(
    rp: RelyingParty, credential: dict[str, Any], challenge: str, public_key: str, stored_count: int
) -> int:
    """The assertion's new sign counter once the answer verifies; :class:`SignCountRegressed` when
    its counter does not follow ``stored_count``, :class:`CeremonyFailed` for anything else."""
    try:
        parsed = parse_authentication_credential_json(credential)
        presented = parse_authenticator_data(parsed.response.authenticator_data).sign_count
    except (WebAuthnException, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CeremonyFailed(f"malformed assertion: {exc}") from exc
    if not sign_count_accepted(stored_count, presented):
        raise SignCountRegressed(stored_count, presented)
    try:
        done = verify_authentication_response(
            credential=parsed,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
            credential_public_key=base64url_to_bytes(public_key),
            credential_current_sign_count=stored_count,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise CeremonyFailed(str(exc)) from exc
    return int(done.new_sign_count)
