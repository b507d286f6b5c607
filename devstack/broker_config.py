"""What a local broker is configured with: its server.properties defaults, a cluster's replication,
the SASL_SSL listeners of a node with SCRAM users, its log4j2 config, and the private files (mode 0600)
that hold its secrets."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from devstack.jars import KafkaLocalError
from devstack.tls import BrokerTls

# Root at WARN, broker lifecycle at INFO. shutdownHook=disable keeps logging alive while
# Kafka's own shutdown hook runs (the file appender flushes every line anyway).
_LOG4J2 = """status = warn
name = tocsin-local-kafka
shutdownHook = disable
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log_file}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
"""
# A SASL node (LocalKafka(scram_users=...)) has no listener without a login. Clients and the broker
# itself (inter-broker requests, such as transaction markers) use the SASL_SSL listener: SCRAM
# logins (users created when the storage is formatted; the broker's own is BROKER_USER), TLS with a
# certificate signed by a CA made for this node. The controller listener is SASL_SSL too, with PLAIN
# (KRaft cannot check SCRAM there: the credentials live in the metadata the controller serves). The
# broker's and the controller's passwords are random, made once per data directory, and written
# only to files of mode 0600 (server.properties, and the format's argument file, deleted after it).
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
BROKER_USER = "tocsin-local-broker"
BROKER_MECHANISM = "SCRAM-SHA-512"
_SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
INTERNAL_SECRETS = "internal-logins.json"  # {"broker": password, "controller": password}, mode 0600
SCRAM_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_INFO_LOGGERS = ("KafkaRaftServer", "BrokerServer", "ControllerServer", "SharedServer")

BROKER_DEFAULTS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "auto.create.topics.enable": "false",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}

# A cluster replicates everything three ways (fewer with fewer nodes) and acknowledges an
# acks=all write once two replicas have it, so one node can die without losing a record or
# refusing writes. A dead node is fenced (its partitions get new leaders, ISRs shrink) after
# broker.session.timeout.ms: 9 s by Kafka's default, 4 s here, so writes stall for less time.
_CLUSTER_DEFAULTS = {
    "broker.session.timeout.ms": "4000",
    "broker.heartbeat.interval.ms": "1000",
    "unclean.leader.election.enable": "false",
}


def cluster_properties(replication_factor: int, min_insync_replicas: int) -> dict[str, str]:
    """Broker properties replicating every topic (the internal ones too) ``replication_factor`` ways."""
    rf, isr = str(replication_factor), str(min_insync_replicas)
    return {
        **_CLUSTER_DEFAULTS,
        "default.replication.factor": rf,
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": isr,
    }


def sasl_ssl_properties(
    host: str, port: int, cport: int, tls: BrokerTls, internal: Mapping[str, str]
) -> dict[str, str]:
    """The listeners and security of a SASL node: SASL_SSL only (``internal``: the broker's SCRAM and the
    controller's PLAIN passwords, LocalKafka._internal_secrets)."""
    broker, controller = internal["broker"], internal["controller"]
    props = {
        "listeners": f"SASL_SSL://{host}:{port},CONTROLLER://{host}:{cport}",
        "advertised.listeners": f"SASL_SSL://{host}:{port}",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL",
        "inter.broker.listener.name": "SASL_SSL",
        "sasl.mechanism.inter.broker.protocol": BROKER_MECHANISM,
        "sasl.enabled.mechanisms": ",".join(SCRAM_MECHANISMS),
        "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config": (
            f'{_PLAIN_MODULE} required username="controller" password="{controller}" user_controller="{controller}";'
        ),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": tls.chain_pem,
        "ssl.keystore.key": tls.key_pem,
        # the broker is a TLS client of its own listeners (inter-broker, controller)
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": tls.ca_file.read_text(encoding="utf-8"),
    }
    for mechanism in SCRAM_MECHANISMS:
        props[f"listener.name.sasl_ssl.{mechanism.lower()}.sasl.jaas.config"] = _SCRAM_LOGIN
    # the broker logs in to its own listener as BROKER_USER (the server side ignores these)
    props[f"listener.name.sasl_ssl.{BROKER_MECHANISM.lower()}.sasl.jaas.config"] = (
        f'{_SCRAM_LOGIN[:-1]} username="{BROKER_USER}" password="{broker}";'
    )
    return props


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable and writable by its owner only (from its creation on)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file that existed keeps its mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def argfile_line(arg: str) -> str:
    """``arg`` as one line of a Java launcher argument file: quoted, its backslashes escaped."""
    if any(c in arg for c in '"\n\r'):
        raise KafkaLocalError(f"cannot pass {arg!r} in an argument file")
    return '"' + arg.replace("\\", "\\\\") + '"\n'


def log4j2_config(log_file: Path) -> str:
    """Return a log4j2 properties config sending broker logs to ``log_file`` only."""
    text = _LOG4J2.format(log_file=str(log_file).replace("\\", "\\\\"))
    for i, name in enumerate(_INFO_LOGGERS):
        text += f"logger.l{i}.name = kafka.server.{name}\nlogger.l{i}.level = INFO\n"
    return text
