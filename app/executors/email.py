"""E-mail executor: one message per delivery over SMTP (aiosmtplib) to the configured relay."""

from __future__ import annotations

import re
import time
from email.message import EmailMessage
from typing import Any

import aiosmtplib

from app.clock import elapsed_ms
from app.domain.delivery.delivery_verdicts import Attempt
from app.domain.delivery.kinds import EMAIL
from app.settings.delivery import EmailConfig

# CR, LF and every other control character a header must not carry: C0, DEL, C1 (NEL among them)
# and Unicode's line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def header_value(text: str) -> str:
    """``text`` as one header line: each run of control characters (a CRLF, a tab) becomes one
    space, and spaces at either end are dropped. A subject rendered from ``event.name`` with a newline
    in it would otherwise make ``EmailMessage`` refuse the header, and the delivery fail for good
    (REFUSED, replay included); long values are folded by the e-mail policy when written."""
    return _CONTROL.sub(" ", text).strip(" ")


class EmailExecutor:
    kind = EMAIL.name

    def __init__(self, config: EmailConfig) -> None:
        self._host, self._port, self._sender, self._timeout = config.host, config.port, config.sender, config.timeout_s
        self._starttls, self._username, self._password = config.starttls, config.username, config.password

    def message(self, item: dict[str, Any]) -> EmailMessage:
        content = item["content"]
        msg = EmailMessage()
        msg["From"] = header_value(self._sender)
        msg["To"] = ", ".join(header_value(str(to)) for to in content["to"])
        msg["Subject"] = header_value(str(content["subject"]))
        # The receiver dedupes on Message-ID: the effect id is stable across retries and replays.
        msg["Message-ID"] = f"<{item['effect_id']}@tocsin>"
        msg["Tocsin-Mode"] = header_value(str(item["mode"]))
        msg.set_content(content["body"])
        return msg

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt:
        started = time.perf_counter()
        try:
            errors, _reply = await aiosmtplib.send(
                self.message(item),
                hostname=self._host,
                port=self._port,
                timeout=self._timeout,
                start_tls=self._starttls,
                username=self._username,
                password=self._password,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            return Attempt(error=f"every recipient refused: {exc}", permanent=True, duration_ms=elapsed_ms(started))
        except aiosmtplib.SMTPResponseException as exc:
            # 5xx replies are permanent (RFC 5321 §4.2.1); 4xx are transient and retried.
            return Attempt(
                status_code=exc.code, error=exc.message, permanent=exc.code >= 500, duration_ms=elapsed_ms(started)
            )
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            return Attempt(error=f"{type(exc).__name__}: {exc}", duration_ms=elapsed_ms(started))
        refused = ", ".join(sorted(errors)) if errors else None
        return Attempt(status_code=250, error=None, duration_ms=elapsed_ms(started), headers={"refused": refused or ""})

    async def aclose(self) -> None:
        return None
