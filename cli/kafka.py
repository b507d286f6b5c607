"""``tocsin kafka [--nodes N | --scram-user NAME:PASSWORD ...]``: a local Kafka (devstack/kafka.py), one
broker or a cluster; with ``--scram-user``, one broker whose listener is SASL_SSL (SCRAM logins, a CA
made for it), to rehearse a managed Kafka's settings (docs/guides/managed-kafka.md).

Development infrastructure, not the product: only cli/ imports ``devstack`` (pyproject.toml's contracts)."""

from __future__ import annotations

import signal
import time

from app.settings import Settings
from cli.common import say


def local_kafka(settings: Settings) -> object:
    from devstack.kafka import LocalKafka

    port = settings.kafka_bootstrap.rpartition(":")[2]
    return LocalKafka(settings.var_dir / "kafka", port=int(port), progress=say)


def scram_kafka(settings: Settings, users: list[str]) -> object:
    """One broker on the port of TOCSIN_KAFKA_BOOTSTRAP, SASL_SSL, with these ``NAME:PASSWORD`` users."""
    from devstack.kafka import LocalKafka

    logins = dict(user.partition(":")[::2] for user in users)
    port = int(settings.kafka_bootstrap.rpartition(":")[2])
    return LocalKafka(settings.var_dir / "kafka-sasl", port=port, progress=say, scram_users=logins)


def cmd_kafka(settings: Settings, nodes: int = 1, scram_users: list[str] | None = None) -> None:
    from devstack.kafka import LocalKafka
    from devstack.kafka_cluster import LocalKafkaCluster

    kafka: LocalKafka | LocalKafkaCluster
    if scram_users:
        if nodes > 1:
            raise SystemExit("tocsin: --scram-user runs one broker (no --nodes)")
        try:
            secure = scram_kafka(settings, scram_users)
        except ValueError as exc:
            raise SystemExit(f"tocsin: {exc}") from None
        assert isinstance(secure, LocalKafka)
        kafka = secure
    elif nodes > 1:  # ports from the first one of TOCSIN_KAFKA_BOOTSTRAP up: brokers, then controllers
        port = int(settings.kafka_bootstrap.split(",")[0].rpartition(":")[2])
        kafka = LocalKafkaCluster(settings.var_dir / f"kafka-{nodes}", nodes, base_port=port, progress=say)
    else:
        single = local_kafka(settings)
        assert isinstance(single, LocalKafka)
        kafka = single
    kafka.start()
    say(f"kafka on {kafka.bootstrap}; Ctrl-C stops it")
    if isinstance(kafka, LocalKafka) and kafka.scram_users:
        user, password = next(iter(kafka.scram_users.items()))
        say("its listener is SASL_SSL (SCRAM-SHA-256 and -512); point Tocsin at it with:")
        print(
            f"export TOCSIN_KAFKA_BOOTSTRAP={kafka.bootstrap} TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_SSL "
            f"TOCSIN_KAFKA_SSL_CA_FILE={kafka.ca_file} TOCSIN_KAFKA_SASL_MECHANISM=SCRAM-SHA-256 "
            f"TOCSIN_KAFKA_SASL_USERNAME={user} TOCSIN_KAFKA_SASL_PASSWORD={password}",
            flush=True,
        )
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while kafka.is_running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        say("stopping broker")
    finally:
        kafka.stop()
