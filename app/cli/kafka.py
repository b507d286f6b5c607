"""``tocsin kafka [--nodes N]``: a local Kafka (devstack/kafka.py), one broker or a cluster.

Development infrastructure, not the product: the import of ``devstack`` is an exception the
import-linter contracts name (pyproject.toml)."""

from __future__ import annotations

import signal
import time

from app.cli.common import say
from app.settings import Settings


def local_kafka(settings: Settings) -> object:
    from devstack.kafka import LocalKafka

    port = settings.kafka_bootstrap.rpartition(":")[2]
    return LocalKafka(settings.var_dir / "kafka", port=int(port), progress=say)


def cmd_kafka(settings: Settings, nodes: int = 1) -> None:
    from devstack.kafka import LocalKafka, LocalKafkaCluster

    kafka: LocalKafka | LocalKafkaCluster
    if nodes > 1:  # ports from the first one of TOCSIN_KAFKA_BOOTSTRAP up: brokers, then controllers
        port = int(settings.kafka_bootstrap.split(",")[0].rpartition(":")[2])
        kafka = LocalKafkaCluster(settings.var_dir / f"kafka-{nodes}", nodes, base_port=port, progress=say)
    else:
        single = local_kafka(settings)
        assert isinstance(single, LocalKafka)
        kafka = single
    kafka.start()
    say(f"kafka on {kafka.bootstrap}; Ctrl-C stops it")
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while kafka.is_running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        say("stopping broker")
    finally:
        kafka.stop()
