"""Issue 16, item 8: a templated e-mail header that renders CR, LF or another control character
(``event.name`` in the subject) is delivered with the header on one line, never refused for good."""

from __future__ import annotations

import asyncio
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
import uvloop

from app.domain.workflows.workflow import render_template
from app.executors.email import EmailExecutor, header_value
from app.settings.delivery import EmailConfig
from devstack.ports import free_port
from devstack.smtp_sink import MailDir, SinkController

CONTROLS = [
    "\r",
    "\n",
    "\r\n",
    "\n\r",
    "\x00",
    "\x07",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\t",
]


def _item(subject: str, mode: str = "ACTUAL") -> dict[str, Any]:
    return {
        "effect_id": "act_1",
        "mode": mode,
        "content": {"to": ["ops@example.com"], "subject": subject, "body": "line 1\nline 2"},
    }


@pytest.mark.parametrize("control", CONTROLS)
def test_every_templated_header_is_one_line_whatever_event_name_holds(control: str) -> None:
    name = f"Quake{control}Bcc: victim@example.com{control}"
    subject = render_template("[{event.name}] M{data.m}", {"event": {"name": name}, "data": {"m": 6}})
    executor = EmailExecutor(EmailConfig(host="127.0.0.1", port=1, sender="tocsin@example.com", timeout_s=1))
    raw = executor.message(_item(subject, mode=f"ACTUAL{control}")).as_bytes()
    parsed = message_from_bytes(raw)
    assert parsed["Bcc"] is None, "no header injected"
    assert parsed["Subject"] == "[Quake Bcc: victim@example.com ] M6"
    assert parsed["Tocsin-Mode"] == "ACTUAL"
    assert not any(c in str(parsed["Subject"]) for c in CONTROLS)
    assert parsed.get_payload() == "line 1\nline 2\n", "the body keeps its lines"


def test_header_value_keeps_text_and_removes_only_controls() -> None:
    assert header_value("  Quake  M6 ") == "Quake  M6"
    assert header_value("a\r\n\tb") == "a b"
    assert header_value("地震\u2028速報") == "地震 速報"
    assert header_value("") == ""


def test_a_subject_with_a_newline_is_delivered(tmp_path: Path) -> None:
    """Against a real SMTP server: before, the newline made the delivery fail (REFUSED)."""
    port = free_port()
    sink = SinkController(MailDir(tmp_path), hostname="127.0.0.1", port=port, loop=uvloop.new_event_loop())
    sink.start()
    try:
        executor = EmailExecutor(EmailConfig(host="127.0.0.1", port=port, sender="tocsin@example.com", timeout_s=10))
        attempt = asyncio.run(executor.send(_item("Quake\r\nnear the coast\x00"), None))
        assert attempt.error is None and attempt.status_code == 250, attempt
    finally:
        sink.stop()
    [mail] = sorted(tmp_path.glob("*.eml"))
    assert message_from_bytes(mail.read_bytes())["Subject"] == "Quake near the coast"
