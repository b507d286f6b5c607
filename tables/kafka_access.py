"""The start-up access check of every Kafka client: one connection to the bootstrap brokers, as the
clients will make it (TLS handshake, SASL login), before a process starts them.

It opens a bare broker connection and sends a metadata request, which takes aiokafka's connection
and protocol modules (``aiokafka.conn``, ``aiokafka.protocol``): internals, which only ``tables/``
touches. The entry points pass :func:`check_access` to ``app.kafka.security.start_client`` (an
``AccessCheck``).
"""

from __future__ import annotations

import asyncio
import ssl

from aiokafka.conn import collect_hosts, create_conn
from aiokafka.errors import (
    IllegalSaslStateError,
    KafkaConnectionError,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
)
from aiokafka.protocol.metadata import MetadataRequest

from app.kafka.security import KafkaAccessError, security_args
from app.settings import Settings
from app.settings.kafka_security import SSL_PROTOCOLS, ssl_reason

# How long check_access waits for one broker to answer (connection, TLS handshake, SASL login).
CHECK_TIMEOUT_SECONDS = 10.0


def _refusal(settings: Settings, host: str, port: int, exc: BaseException) -> str | None:
    """A readable reason when ``exc`` means the broker or the client refused the other; None when
    it means the broker is not reachable (yet)."""
    broker = f"Kafka broker {host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        trusted = f"the CA in TOCSIN_KAFKA_SSL_CA_FILE={settings.kafka_security.ssl_ca_file}"
        if settings.kafka_security.ssl_ca_file is None:
            trusted = "the system's CAs (TOCSIN_KAFKA_SSL_CA_FILE is not set)"
        return f"the {broker}'s TLS certificate is not trusted: {exc.verify_message}; checked against {trusted}"
    if isinstance(exc, ssl.SSLError):
        return (
            f"the TLS handshake with the {broker} failed: {ssl_reason(exc)} "
            f"(does that listener speak {settings.kafka_security.security_protocol}? a client certificate refused?)"
        )
    if isinstance(exc, SaslAuthenticationFailed):
        detail = f": {exc.args[0]}" if exc.args and exc.args[0] else ""
        return (
            f"the {broker} refused the SASL {settings.kafka_security.sasl_mechanism} login of user "
            f"{settings.kafka_security.sasl_username!r}{detail} (check TOCSIN_KAFKA_SASL_USERNAME and the password)"
        )
    protocol = f"TOCSIN_KAFKA_SECURITY_PROTOCOL={settings.kafka_security.security_protocol}"
    if isinstance(exc, ConnectionResetError) and settings.kafka_security.security_protocol in SSL_PROTOCOLS:
        # aiokafka's connect: a raw OSError comes from the TCP connect or the TLS handshake, and a
        # listening port resets a connection there when it does not speak TLS
        return f"the {broker} closed the connection during the TLS handshake: does that listener speak {protocol}?"
    if isinstance(exc, IllegalSaslStateError):
        return f"the {broker} takes no SASL login on that listener: does it speak {protocol}?"
    if isinstance(exc, UnsupportedSaslMechanismError):
        return (
            f"the {broker} does not accept TOCSIN_KAFKA_SASL_MECHANISM={settings.kafka_security.sasl_mechanism}: {exc}"
        )
    return None


async def check_access(settings: Settings) -> None:
    """Connect to the bootstrap brokers as every client will (TLS, SASL login) and close again.

    Raises :class:`KafkaAccessError` when a broker refused the login or presented a certificate the
    client does not trust. Returns quietly when a broker answered, and when none could be reached
    (the caller's own wait handles a broker that is down or still starting).
    """
    if settings.kafka_security.security_protocol == "PLAINTEXT":
        return  # nothing to refuse
    args = security_args(settings)
    refused: list[str] = []
    for host, port, _family in collect_hosts(settings.kafka_bootstrap):
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                timeout_ms = int(CHECK_TIMEOUT_SECONDS * 1000)
                conn = await create_conn(host, port, client_id="tocsin-check", request_timeout_ms=timeout_ms, **args)
        except Exception as exc:  # noqa: BLE001 - classified: a refusal is raised below, the rest is "unreachable"
            reason = _refusal(settings, host, port, exc)
            if reason is not None:
                refused.append(reason)
            continue
        try:
            if settings.kafka_security.security_protocol == "SSL":
                # a SASL_SSL listener answers ApiVersions before a login, then drops a client that sends no login
                async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                    await conn.send(MetadataRequest([]))
        except KafkaConnectionError as exc:  # closed on us; a timeout or the like stays "unreachable"
            refused.append(
                f"the Kafka broker {host}:{port} accepted the TLS connection but closed it at the first request "
                f"({exc!r}): does that listener want a SASL login (TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_SSL)?"
            )
            continue
        except (TimeoutError, OSError):
            continue
        finally:
            conn.close()
        return  # one broker let us in: the others' troubles are the clients' to retry
    if refused:
        raise KafkaAccessError(refused[0])
