"""A real local HTTPS OIDC issuer for the tests: own test CA, discovery, JWKS, rotation, tokens.

One :class:`OidcIssuer` serves several issuers by path prefix on ``https://localhost:PORT``
(``issuer_url(name)``; the tenant v1.0 form ends in ``/``). It is a threaded ``http.server``
behind ``ssl`` in a background thread, so a separate API process can fetch from it too.
:class:`TestCA` and :class:`TlsHttpServer` (from :mod:`tests.support.tls_server`) are re-exported.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import shutil
import tempfile
import threading
import time
from base64 import urlsafe_b64encode
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.support.tls_server import Handler, HttpReply, TestCA, TlsHttpServer

__all__ = [
    "Handler",
    "HttpReply",
    "OidcIssuer",
    "SigningKey",
    "TestCA",
    "TlsHttpServer",
    "b64url",
    "cloud_service_account_claims",
    "compact",
    "corrupt_segment",
    "key_confusion_token",
    "managed_identity_claims",
    "padded",
    "repository_workflow_claims",
    "role_arn_claims",
    "sign_jws",
    "unsigned_token",
]

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
_kid_counter = itertools.count(1)


def b64url(data: bytes) -> str:
    """Unpadded base64url, as JOSE uses."""
    return urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _json_reply(doc: Any, status: int = 200) -> HttpReply:
    return status, {"Content-Type": "application/json"}, json.dumps(doc).encode()


@dataclass
class SigningKey:
    """One published signing key."""

    kid: str
    alg: str
    private: PrivateKey

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.algorithms.RSAAlgorithm if self.alg.startswith(("RS", "PS")) else jwt.algorithms.ECAlgorithm
        doc: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**doc, "kid": self.kid, "alg": self.alg, "use": "sig"}


@dataclass
class _IssuerState:
    name: str
    trailing_slash: bool
    current: dict[str, SigningKey] = field(default_factory=dict)  # by family: "RSA" / "EC"
    published: list[SigningKey] = field(default_factory=list)
    jwks_down: bool = False
    discovery_down: bool = False
    discovery_overrides: dict[str, Any] = field(default_factory=dict)
    jwks_fetches: int = 0
    discovery_fetches: int = 0


def _family(alg: str) -> str:
    return "EC" if alg.startswith("ES") else "RSA"


def _new_keys(name: str) -> dict[str, SigningKey]:
    serial = next(_kid_counter)
    return {
        "RSA": SigningKey(f"{name}-rsa-{serial}", "RS256", rsa.generate_private_key(65537, 2048)),
        "EC": SigningKey(f"{name}-ec-{serial}", "ES256", ec.generate_private_key(ec.SECP256R1())),
    }


class OidcIssuer:
    """Several OIDC issuers on one local HTTPS server (``with OidcIssuer(dir) as idp: ...``); thread-safe."""

    def __init__(
        self, directory: Path | None = None, *, issuers: Iterable[str] = ("default",), extra_names: Iterable[str] = ()
    ) -> None:
        self._tempdir = None if directory is not None else Path(tempfile.mkdtemp(prefix="oidc-"))
        self.directory = Path(directory) if directory is not None else self._tempdir
        assert self.directory is not None
        self.ca = TestCA(self.directory)
        cert, key = self.ca.issue(("localhost", "127.0.0.1", *extra_names))
        self.server = TlsHttpServer(cert, key, self._route)
        self._lock = threading.RLock()
        self._issuers: dict[str, _IssuerState] = {}
        for name in issuers:
            self.add_issuer(name)

    # lifecycle ---------------------------------------------------------------------------
    @property
    def ca_file(self) -> str:
        return str(self.ca.ca_file)

    @property
    def port(self) -> int:
        return self.server.port

    def start(self) -> Self:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # issuers -----------------------------------------------------------------------------
    def add_issuer(self, name: str, *, trailing_slash: bool = False) -> str:
        """Register issuer ``name`` (may contain ``/``) and return it; ``trailing_slash``: v1.0 tenant form."""
        with self._lock:
            state = _IssuerState(name.strip("/"), trailing_slash, current=_new_keys(name))
            state.published = list(state.current.values())
            self._issuers[state.name] = state
        return state.name

    def add_managed_identity_tenant(self, tenant_id: str) -> tuple[str, str]:
        """Both tenant issuer forms: names ``(f"{tenant}/v2.0", tenant)``, the second ending in ``/``."""
        self.add_issuer(f"{tenant_id}/v2.0")
        self.add_issuer(tenant_id, trailing_slash=True)
        return f"{tenant_id}/v2.0", tenant_id

    def _state(self, name: str) -> _IssuerState:
        return self._issuers[name.strip("/")]

    def base_url(self, name: str) -> str:
        """The issuer URL without any trailing ``/`` (where discovery and JWKS live under)."""
        return f"https://localhost:{self.port}/{self._state(name).name}"

    def issuer_url(self, name: str) -> str:
        """The exact ``iss`` value: ``https://localhost:PORT/<name>`` (plus ``/`` for the v1.0 form)."""
        return self.base_url(name) + ("/" if self._state(name).trailing_slash else "")

    def discovery_url(self, name: str) -> str:
        return f"{self.base_url(name)}/.well-known/openid-configuration"

    def jwks_url(self, name: str) -> str:
        return f"{self.base_url(name)}/.well-known/jwks.json"

    # knobs -------------------------------------------------------------------------------
    def rotate(self, name: str, *, keep_old: bool = False) -> dict[str, str]:
        """Publish new RSA and EC keys (mint signs with them); old keys stay only with ``keep_old``."""
        with self._lock:
            state = self._state(name)
            state.current = _new_keys(state.name)
            state.published = [*state.current.values(), *(state.published if keep_old else [])]
            return {family: key.kid for family, key in state.current.items()}

    def current_key(self, name: str, alg: str = "RS256") -> SigningKey:
        with self._lock:
            return self._state(name).current[_family(alg)]

    def current_kid(self, name: str, alg: str = "RS256") -> str:
        return self.current_key(name, alg).kid

    def public_pem(self, name: str, alg: str = "RS256") -> bytes:
        """The current public key as PEM (the secret of a key-confusion HS256 token)."""
        public = self.current_key(name, alg).private.public_key()
        return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def set_jwks_down(self, name: str, down: bool = True) -> None:
        with self._lock:
            self._state(name).jwks_down = down

    def set_discovery_down(self, name: str, down: bool = True) -> None:
        with self._lock:
            self._state(name).discovery_down = down

    def set_discovery(self, name: str, **overrides: Any) -> None:
        """Override discovery fields, e.g. ``issuer="https://wrong"`` or ``jwks_uri="http://..."``; none resets."""
        with self._lock:
            self._state(name).discovery_overrides = dict(overrides)

    def jwks_fetches(self, name: str) -> int:
        with self._lock:
            return self._state(name).jwks_fetches

    def discovery_fetches(self, name: str) -> int:
        with self._lock:
            return self._state(name).discovery_fetches

    def jwks(self, name: str) -> dict[str, Any]:
        with self._lock:
            return {"keys": [key.jwk() for key in self._state(name).published]}

    def discovery(self, name: str) -> dict[str, Any]:
        with self._lock:
            doc = {
                "issuer": self.issuer_url(name),
                "jwks_uri": self.jwks_url(name),
                "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            }
            return {**doc, **self._state(name).discovery_overrides}

    def _route(self, method: str, path: str) -> HttpReply:
        with self._lock:
            for state in self._issuers.values():
                if path == f"/{state.name}/.well-known/openid-configuration":
                    state.discovery_fetches += 1
                    return (
                        _json_reply({"error": "down"}, 503)
                        if state.discovery_down
                        else _json_reply(self.discovery(state.name))
                    )
                if path == f"/{state.name}/.well-known/jwks.json":
                    state.jwks_fetches += 1
                    return (
                        _json_reply({"error": "down"}, 503) if state.jwks_down else _json_reply(self.jwks(state.name))
                    )
        return _json_reply({"error": "not found"}, 404)

    # tokens ------------------------------------------------------------------------------
    def mint(
        self,
        name: str,
        claims: dict[str, Any] | None = None,
        *,
        alg: str = "RS256",
        kid: str | None = None,
        key: PrivateKey | None = None,
        headers: dict[str, Any] | None = None,
        lifetime: int = 300,
        omit: Iterable[str] = (),
        now: float | None = None,
    ) -> str:
        """A compact JWS from issuer ``name``: ``iss``/``iat``/``nbf``/``exp`` defaulted, ``claims`` win.

        Signed with the current key of ``alg``'s family (or ``key``, then no ``kid`` unless given).
        ``headers`` are merged last; a header set to ``None`` is removed. ``omit`` drops claims.
        """
        issued = int(time.time() if now is None else now)
        payload: dict[str, Any] = {"iss": self.issuer_url(name), "iat": issued, "nbf": issued, "exp": issued + lifetime}
        payload.update(claims or {})
        for claim in omit:
            payload.pop(claim, None)
        if key is None:
            current = self.current_key(name, alg)
            key, kid = current.private, kid if kid is not None else current.kid
        header: dict[str, Any] = {"alg": alg, "typ": "JWT", **({"kid": kid} if kid is not None else {})}
        header.update(headers or {})
        return sign_jws({k: v for k, v in header.items() if v is not None}, payload, key, alg)


# raw token builders -----------------------------------------------------------------------
def _json_segment(part: dict[str, Any] | bytes) -> str:
    return b64url(part if isinstance(part, bytes) else json.dumps(part, separators=(",", ":")).encode())


def compact(header: dict[str, Any] | bytes, payload: dict[str, Any] | bytes, signature: bytes = b"") -> str:
    """Assemble a compact JWS from arbitrary parts (no signing): for malformed tokens."""
    return f"{_json_segment(header)}.{_json_segment(payload)}.{b64url(signature)}"


def sign_jws(header: dict[str, Any], payload: dict[str, Any], key: Any, alg: str) -> str:
    """Sign with PyJWT's algorithm ``alg`` whatever the header says (so headers can lie)."""
    algorithm = jwt.get_algorithm_by_name(alg)
    signing_input = f"{_json_segment(header)}.{_json_segment(payload)}"
    signature = algorithm.sign(signing_input.encode(), algorithm.prepare_key(key))
    return f"{signing_input}.{b64url(signature)}"


def unsigned_token(claims: dict[str, Any], *, headers: dict[str, Any] | None = None) -> str:
    """``alg: none`` with an empty signature."""
    return compact({"alg": "none", "typ": "JWT", **(headers or {})}, claims)


def key_confusion_token(
    public_pem: bytes, claims: dict[str, Any], *, kid: str | None = None, alg: str = "HS256"
) -> str:
    """HMAC-signed with the issuer's public key PEM as the secret (the RS/HS key-confusion attack)."""
    digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[alg]
    header = {"alg": alg, "typ": "JWT", **({"kid": kid} if kid else {})}
    signing_input = f"{_json_segment(header)}.{_json_segment(claims)}"
    return f"{signing_input}.{b64url(hmac.new(public_pem, signing_input.encode(), digest).digest())}"


def corrupt_segment(token: str, index: int, replacement: str = "!!not*base64!!") -> str:
    """Replace segment ``index`` (0 header, 1 payload, 2 signature) with invalid base64url."""
    parts = token.split(".")
    parts[index] = replacement
    return ".".join(parts)


def padded(claims: dict[str, Any], size: int) -> dict[str, Any]:
    """``claims`` plus a ``pad`` claim of ``size`` characters (oversize tokens)."""
    return {**claims, "pad": "x" * size}


# provider shapes ---------------------------------------------------------------------------
def repository_workflow_claims(
    repository: str = "o/r",
    *,
    ref: str = "refs/heads/main",
    environment: str | None = None,
    pull_request: bool = False,
) -> dict[str, Any]:
    """A CI workflow token: ``repo:o/r:ref:<ref>``, ``repo:o/r:environment:<env>`` or ``repo:o/r:pull_request``."""
    if pull_request:
        sub, ref = f"repo:{repository}:pull_request", "refs/pull/1/merge"
    elif environment is not None:
        sub = f"repo:{repository}:environment:{environment}"
    else:
        sub = f"repo:{repository}:ref:{ref}"
    claims = {"sub": sub, "repository": repository, "repository_owner": repository.split("/")[0], "ref": ref}
    claims["event_name"] = "pull_request" if pull_request else "push"
    return {**claims, **({"environment": environment} if environment is not None else {})}


def cloud_service_account_claims(
    unique_id: str = "104857392019283746501", *, email: str | None = None
) -> dict[str, Any]:
    """A cloud service account: numeric 21-digit ``sub``; ``email`` only in the full token format."""
    claims: dict[str, Any] = {"sub": unique_id, "azp": unique_id}
    return {**claims, "email": email, "email_verified": True} if email is not None else claims


def managed_identity_claims(
    object_id: str = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", tenant_id: str = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
) -> dict[str, Any]:
    """A managed identity: ``sub`` and ``oid`` are its object id, ``tid`` its tenant."""
    return {"sub": object_id, "oid": object_id, "tid": tenant_id, "appid": object_id}


def role_arn_claims(
    account: str = "123456789012", role: str = "deploy", *, tags: dict[str, str] | None = None
) -> dict[str, Any]:
    """A cloud role identity: ``sub`` is ``arn:aws:iam::<account>:role/<role>``; tags under a namespace."""
    claims: dict[str, Any] = {"sub": f"arn:aws:iam::{account}:role/{role}"}
    return {**claims, "https://aws.amazon.com/tags": {"principal_tags": tags}} if tags else claims
