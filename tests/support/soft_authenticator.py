"""A software WebAuthn authenticator for the API's tests: an EC P-256 key per credential,
attestation ``none`` on registration, ECDSA-SHA256 assertions with a sign counter the test controls
(so that a cloned authenticator's regressed counter can be presented)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SoftCredential:
    credential_id: bytes
    key: ec.EllipticCurvePrivateKey
    user_handle: bytes
    sign_count: int = 0

    def cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})


@dataclass
class SoftAuthenticator:
    rp_id: str
    origin: str
    credentials: list[SoftCredential] = field(default_factory=list)

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps(
            {"type": kind, "challenge": challenge, "origin": origin or self.origin, "crossOrigin": False}
        ).encode()

    def _rp_hash(self, rp_id: str | None) -> bytes:
        return hashlib.sha256((rp_id or self.rp_id).encode()).digest()

    def create(self, options: dict[str, Any], origin: str | None = None) -> tuple[dict[str, Any], SoftCredential]:
        """``navigator.credentials.create`` for these options: the answer (JSON form) and the new credential."""
        cred = SoftCredential(os.urandom(32), ec.generate_private_key(ec.SECP256R1()), unb64url(options["user"]["id"]))
        attested = bytes(16) + len(cred.credential_id).to_bytes(2, "big") + cred.credential_id + cred.cose_key()
        auth_data = self._rp_hash(options["rp"]["id"]) + bytes([0x41]) + (0).to_bytes(4, "big") + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        self.credentials.append(cred)
        answer = {
            "id": b64url(cred.credential_id),
            "rawId": b64url(cred.credential_id),
            "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation)},
            "clientExtensionResults": {},
        }
        return answer, cred

    def get(
        self, options: dict[str, Any], cred: SoftCredential | None = None, *, sign_count: int | None = None
    ) -> dict[str, Any]:
        """``navigator.credentials.get``: an assertion by ``cred`` (else the first allowed one); the
        counter goes up by one unless ``sign_count`` is given."""
        if cred is None:
            allowed = {unb64url(c["id"]) for c in options.get("allowCredentials", [])}
            cred = next(c for c in self.credentials if c.credential_id in allowed)
        cred.sign_count = cred.sign_count + 1 if sign_count is None else sign_count
        auth_data = self._rp_hash(options.get("rpId")) + bytes([0x01]) + cred.sign_count.to_bytes(4, "big")
        client_data = self._client_data("webauthn.get", options["challenge"], None)
        signature = cred.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(cred.credential_id),
            "rawId": b64url(cred.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
                "userHandle": b64url(cred.user_handle),
            },
            "clientExtensionResults": {},
        }
