"""The local SMTP sink ``tocsin run`` starts (aiosmtpd): it accepts every message the worker's
e-mail action sends and keeps it as ``<var>/mail/<n>.eml``, so ``make run`` needs no relay."""

from __future__ import annotations

import logging
from email import message_from_bytes
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

log = logging.getLogger("devstack.smtp_sink")


class MailDir:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.count = len(list(self.directory.glob("*.eml")))

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd's hook name
        self.count += 1
        path = self.directory / f"{self.count:06d}.eml"
        path.write_bytes(envelope.content)
        subject = message_from_bytes(envelope.content).get("Subject", "")
        log.info("mail to %s: %r -> %s", ", ".join(envelope.rcpt_tos), subject, path)
        return "250 OK"


class SinkController(Controller):
    """aiosmtpd's Controller that closes its open SMTP sessions when it stops.

    The plain one cancels the sessions' tasks and closes its loop with their connections still
    open: a client that stays connected (a worker keeps its SMTP connection between messages;
    a killed worker's may not be seen closed yet) makes uvloop refuse to close the loop
    (``OSError: [Errno 16] Device or resource busy`` in the controller's thread) and leaves
    unclosed transports behind. Closing each session's transport first lets the loop close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sessions: list[Any] = []

    def factory(self) -> Any:
        session = super().factory()  # type: ignore[no-untyped-call]  # aiosmtpd leaves it unannotated
        # one per connection; those whose connection is gone are dropped (a long-running sink)
        self.sessions = [s for s in self.sessions if s.transport is not None]
        self.sessions.append(session)
        return session

    def cancel_tasks(self, stop_loop: bool = True) -> None:  # runs in the controller's loop
        for session in self.sessions:
            if session.transport is not None:
                session.transport.close()
        self.sessions.clear()
        super().cancel_tasks(stop_loop)


class SmtpSink:
    def __init__(self, directory: Path, host: str, port: int) -> None:
        self.controller = SinkController(MailDir(directory), hostname=host, port=port)
        self.running = False

    def start(self) -> None:
        self.controller.start()
        self.running = True

    def stop(self) -> None:
        """Stop it if it runs (safe to call after a failed start)."""
        if self.running:
            self.controller.stop()
            self.running = False
