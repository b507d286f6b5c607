"""TOTP second factor (RFC 6238 with pyotp): enrolment URI and QR code, verification with a one-step
window where each time step is accepted once (a replayed code is refused), and recovery codes."""

from __future__ import annotations

import hashlib
import io
import secrets
import time

import pyotp
import qrcode
import qrcode.image.svg

ISSUER = "Tocsin"
STEP = 30
WINDOW = 1  # one step either side: clocks a little apart, a code typed at the turn of a step
RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, account_name: str) -> str:
    return pyotp.TOTP(secret, interval=STEP).provisioning_uri(name=account_name, issuer_name=ISSUER)


def qr_svg(uri: str) -> str:
    """The URI as an SVG QR code (no image library needed)."""
    image = qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage)
    out = io.BytesIO()
    image.save(out)
    return out.getvalue().decode()


def matching_step(secret: str, code: str, last_step: int, now: float | None = None) -> int | None:
    """The time step ``code`` belongs to, within the window and after ``last_step`` (the newest step
    already used: a code of that step or an earlier one is a replay), else None."""
    code = code.strip().replace(" ", "")
    if not (code.isascii() and code.isdigit() and len(code) == 6):
        return None
    totp = pyotp.TOTP(secret, interval=STEP)
    current = int((time.time() if now is None else now) // STEP)
    found = None
    for step in range(current - WINDOW, current + WINDOW + 1):
        if secrets.compare_digest(totp.at(step * STEP), code) and step > last_step:
            found = step
    return found


def new_recovery_codes() -> list[str]:
    """Ten codes like ``k7fm-2xq9-tbw4`` (60 bits each), shown once; only their hashes are kept."""
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(12))
        codes.append(f"{raw[:4]}-{raw[4:8]}-{raw[8:]}")
    return codes


def recovery_hash(code: str) -> str:
    normal = code.strip().lower().replace("-", "").replace(" ", "")
    return hashlib.sha256(normal.encode()).hexdigest()
