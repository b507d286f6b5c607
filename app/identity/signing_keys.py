"""The keys that sign and verify the exchange's access tokens (``tcf_…``).

Every installation signs with a secret of its own. The key comes from, in this order:

1. ``TOCSIN_TOKEN_SIGNING_KEY`` (several replicas: give each the same value);
2. ``TOCSIN_TOKEN_SIGNING_KEY_FILE``, a file the operator provides (a mounted secret);
3. ``<TOCSIN_VAR_DIR>/token-signing.key``, created with a random key (mode 0600) on first start.

Creating the file is race-free, so processes sharing a data directory (replicas started
together, ``tocsin run``, the tests' stacks) end up with the one key: each writes a complete
candidate to a private temporary file (``O_EXCL``, 0600) and hard-links it to the final name,
which fails for every process but the first; all then read the file that won.

Tokens are verified against the current key and ``TOCSIN_TOKEN_PREVIOUS_KEYS`` (comma-separated)
or ``TOCSIN_TOKEN_PREVIOUS_KEYS_FILE`` (one per line), so a rotation does not cut off tokens
already issued (docs/guides/rotating-keys.md). A key known to be public, or shorter than
:data:`MIN_KEY_CHARS`, is refused wherever it comes from.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.domain.iam.signing_secrets import MIN_KEY_CHARS, key_problem
from app.errors import TocsinError

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_KEY_FILE = "token-signing.key"


class SigningKeyError(TocsinError):
    """The token signing key is unusable. Set ``TOCSIN_TOKEN_SIGNING_KEY`` (or
    ``TOCSIN_TOKEN_SIGNING_KEY_FILE``) to a random secret of at least 32 characters, e.g. the
    output of ``python -c 'import secrets; print(secrets.token_urlsafe(32))'``, or unset both and
    let the service create one in its data directory."""


@dataclass(frozen=True, slots=True)
class SigningKeys:
    """``current`` signs; ``current`` and then ``previous`` verify."""

    current: bytes
    previous: tuple[bytes, ...] = ()
    source: str = ""  # where the current key came from, for the start-up line (never the key)
    created: bool = False  # this process created the key file

    @property
    def verifying(self) -> tuple[bytes, ...]:
        return (self.current, *self.previous)


def generate_key() -> str:
    """A new random key: 32 bytes, base64url (43 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def _checked(value: str, source: str) -> bytes:
    problem = key_problem(value)
    if problem is not None:
        raise SigningKeyError(
            f"the token signing key from {source} {problem}: replace it with a random secret of at least "
            f"{MIN_KEY_CHARS} characters (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return value.encode()


def _read_key_file(path: Path) -> str:
    try:
        info = path.stat()
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SigningKeyError(f"cannot read the token signing key file {path}: {exc.strerror or exc}") from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning(
            "the token signing key file %s is accessible to other users (mode %o): chmod 600 it",
            path,
            info.st_mode & 0o777,
        )
    return value


def read_or_create_key_file(path: Path) -> tuple[str, bool]:
    """The key in ``path``, creating the file with a random key first if it does not exist;
    ``(key, created by this call)``. Safe when several processes call it at once."""
    if path.exists():
        return _read_key_file(path), False
    path.parent.mkdir(parents=True, exist_ok=True)
    candidate = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(generate_key() + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(candidate, path)  # atomic, and refused if the name exists: readers never see a partial key
            created = True
        except FileExistsError:
            created = False  # another process was first: use its key
    finally:
        with contextlib.suppress(FileNotFoundError):
            candidate.unlink()
    return _read_key_file(path), created


def _previous(settings: Settings) -> Iterable[tuple[str, str]]:
    if settings.token_previous_keys is not None:
        for value in settings.token_previous_keys.get_secret_value().split(","):
            if value.strip():
                yield value.strip(), "TOCSIN_TOKEN_PREVIOUS_KEYS"
    if settings.token_previous_keys_file is not None:
        path = settings.token_previous_keys_file
        for line in _read_key_file(path).splitlines():
            if line.strip():
                yield line.strip(), str(path)


def load_signing_keys(settings: Settings) -> SigningKeys:
    """The keys this process signs and verifies with (creating the default key file on first start).

    Raises :class:`SigningKeyError` with what to change when a key is missing, public or short.
    """
    created = False
    if settings.token_signing_key is not None:
        value, source = settings.token_signing_key.get_secret_value(), "TOCSIN_TOKEN_SIGNING_KEY"
    elif settings.token_signing_key_file is not None:
        source = str(settings.token_signing_key_file)
        value = _read_key_file(settings.token_signing_key_file)  # the operator's file: never created here
    else:
        path = settings.var_dir / DEFAULT_KEY_FILE
        source = str(path)
        value, created = read_or_create_key_file(path)
    current = _checked(value, source)
    previous = tuple(dict.fromkeys(_checked(v, where) for v, where in _previous(settings)))
    return SigningKeys(current, tuple(k for k in previous if k != current), source, created)
