#!/opt/tocsin/bin/python
"""The compose deployment's broker: the node ``tocsin kafka`` runs (devstack/kafka.py, the same
configuration as ``make run``'s, on the port of TOCSIN_KAFKA_BOOTSTRAP, data in the volume), but
without ``tocsin kafka``'s 90 s start deadline: a container that gives up on a slow start (a loaded
host, a first format) only restarts, so readiness is left to the health check
(``tocsin-healthcheck kafka``). It stops the broker on SIGTERM and exits non-zero, with the end of
the broker's log, if the JVM exits by itself."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

from app.settings import get_settings
from cli.kafka import local_kafka
from devstack.kafka import LocalKafka


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


def main() -> int:
    settings = get_settings()
    Path(settings.var_dir).mkdir(parents=True, exist_ok=True)
    kafka = local_kafka(settings)
    assert isinstance(kafka, LocalKafka)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    kafka.launch()
    print(f"tocsin-kafka: broker starting on {kafka.bootstrap}; its log: {kafka.log_file}", flush=True)
    while not stop.wait(1.0):
        if not kafka.is_running():
            print(f"tocsin-kafka: the broker exited; its log ends with:\n{tail(kafka.log_file)}", flush=True)
            return 1
    print("tocsin-kafka: stopping the broker", flush=True)
    kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
