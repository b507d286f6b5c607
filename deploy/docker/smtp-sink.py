#!/opt/tocsin/bin/python
"""The compose deployment's stand-in e-mail relay: the SMTP sink ``make run`` uses
(devstack/smtp_sink.py) on TOCSIN_SMTP_HOST:TOCSIN_SMTP_PORT, keeping each message as
``$TOCSIN_VAR_DIR/mail/<n>.eml`` and logging one line per message. Replace it with your relay
(TOCSIN_SMTP_* on the worker) in production."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path

from app.observability.logs import configure
from devstack.smtp_sink import SmtpSink

log = logging.getLogger("smtp-sink")


def main() -> None:
    # the project's one log format (JSON in a container), so the sink's line per message is written
    configure(os.environ.get("TOCSIN_LOG_FORMAT", "auto"), os.environ.get("TOCSIN_LOG_LEVEL", "INFO"))
    host = os.environ.get("TOCSIN_SMTP_HOST", "127.0.0.1")
    port = int(os.environ.get("TOCSIN_SMTP_PORT", "8025"))
    mail = Path(os.environ.get("TOCSIN_VAR_DIR", "var")) / "mail"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    sink = SmtpSink(mail, host, port)
    sink.start()
    log.info("smtp-sink: listening on %s:%d, mail kept in %s", host, port, mail)
    try:
        stop.wait()
    finally:
        sink.stop()
        log.info("smtp-sink: stopped")


if __name__ == "__main__":
    main()
