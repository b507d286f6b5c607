#!/opt/tocsin/bin/python
"""The compose deployment's stand-in e-mail relay: the SMTP sink ``make run`` uses
(devstack/smtp_sink.py) on TOCSIN_SMTP_HOST:TOCSIN_SMTP_PORT, keeping each message as
``$TOCSIN_VAR_DIR/mail/<n>.eml`` and logging one line per message. Replace it with your relay
(TOCSIN_SMTP_* on the worker) in production."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from devstack.smtp_sink import SmtpSink


def main() -> None:
    host = os.environ.get("TOCSIN_SMTP_HOST", "127.0.0.1")
    port = int(os.environ.get("TOCSIN_SMTP_PORT", "8025"))
    mail = Path(os.environ.get("TOCSIN_VAR_DIR", "var")) / "mail"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    sink = SmtpSink(mail, host, port)
    sink.start()
    print(f"smtp-sink: listening on {host}:{port}, mail kept in {mail}", flush=True)
    try:
        stop.wait()
    finally:
        sink.stop()
        print("smtp-sink: stopped", flush=True)


if __name__ == "__main__":
    main()
