"""The local SMTP sink ``tocsin run`` starts (aiosmtpd): it accepts every message the worker's
e-mail action sends and keeps it as ``<var>/mail/<n>.eml``, so ``make run`` needs no relay."""

from __future__ import annotations

from email import message_from_bytes
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller


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
        print(f"tocsin: mail to {', '.join(envelope.rcpt_tos)}: {subject!r} -> {path}", flush=True)
        return "250 OK"


class SmtpSink:
    def __init__(self, directory: Path, host: str, port: int) -> None:
        self.controller = Controller(MailDir(directory), hostname=host, port=port)
        self.running = False

    def start(self) -> None:
        self.controller.start()
        self.running = True

    def stop(self) -> None:
        """Stop it if it runs (safe to call after a failed start)."""
        if self.running:
            self.controller.stop()
            self.running = False
