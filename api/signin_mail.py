"""Sign-in e-mails (magic link, password reset) through the product's e-mail path: the SMTP relay
of ``TOCSIN_SMTP_*`` with app/executors/email.py, the executor the worker's e-mail actions use.

The work of such a request (finding the user, making the token, sending) runs after the answer:
``202`` comes at once and alike for a known and an unknown address (no user enumeration).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from app.domain.shared.ids import new_id
from app.executors.email import EmailExecutor
from app.settings import Settings

log = logging.getLogger(__name__)

_background: set[asyncio.Task[None]] = set()


def later(work: Awaitable[None]) -> None:
    """Run ``work`` after the answer (kept referenced until done; its failure is logged)."""

    async def run() -> None:
        try:
            await work
        except Exception:
            log.exception("sign-in e-mail work failed")

    task = asyncio.get_running_loop().create_task(run())
    _background.add(task)
    task.add_done_callback(_background.discard)


async def send(settings: Settings, to: str, subject: str, body: str) -> None:
    executor = EmailExecutor(settings.smtp.config())
    item = {"content": {"to": [to], "subject": subject, "body": body}, "effect_id": new_id("sml"), "mode": "ACTUAL"}
    attempt = await executor.send(item, None)
    if attempt.error:
        log.warning("sign-in e-mail not sent: %s", attempt.error)


def link(settings: Settings, path: str, token: str) -> str:
    return f"{settings.public_url.rstrip('/')}{path}?token={token}"
