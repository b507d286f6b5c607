"""Kafka security: the one place that turns the TOCSIN_KAFKA_* security settings into client arguments.

Every Kafka client of the API, the worker and the CLI is built from :func:`client_args` (aiokafka's
producers, consumers and admin clients) or :func:`faust_credentials` (the worker's Faust app), so TLS
and SASL apply to all of them alike. :func:`check_access` makes one connection (TLS handshake, SASL
login) before a process starts its clients: a refused login or an untrusted certificate stops the
process with one readable line (:class:`KafkaAccessError`) instead of retrying forever.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING, Any

from app.errors import TocsinError
from app.settings.kafka_security import SASL_PROTOCOLS, SSL_PROTOCOLS, ssl_reason

if TYPE_CHECKING:
    import faust

    from app.settings import Settings

# How long check_access waits for one broker to answer (connection, TLS handshake, SASL login).
CHECK_TIMEOUT_SECONDS = 10.0


class KafkaAccessError(TocsinError):
    """The broker refused this client (SASL login) or the client refused the broker (its certificate).

    Not a KafkaError nor an OSError: the callers that wait for an unreachable broker do not retry it,
    since waiting does not change a wrong password or an untrusted certificate.
    """


def security_args(settings: Settings) -> dict[str, Any]:
    """aiokafka's security arguments (security_protocol, ssl_context, sasl_*)."""
    protocol = settings.kafka_security.security_protocol
    args: dict[str, Any] = {"security_protocol": protocol}
    if protocol in SSL_PROTOCOLS:
        args["ssl_context"] = settings.kafka_security.ssl_context()
    if protocol in SASL_PROTOCOLS:
        args["sasl_mechanism"] = settings.kafka_security.sasl_mechanism
        args["sasl_plain_username"] = settings.kafka_security.sasl_username
        args["sasl_plain_password"] = settings.kafka_security.sasl_password_value
    return args


def client_args(settings: Settings) -> dict[str, Any]:
    """What every aiokafka client is built with: the bootstrap servers and :func:`security_args`."""
    return {"bootstrap_servers": settings.kafka_bootstrap, **security_args(settings)}


def faust_credentials(settings: Settings) -> faust.SSLCredentials | faust.SASLCredentials | None:
    """The Faust app's ``broker_credentials`` for the same settings (None: PLAINTEXT).

    Faust passes them to every client it builds (its consumers, producers, transactional producers):
    SASL credentials carry the TLS context for SASL_SSL, SSL credentials the context alone.
    """
    import faust

    protocol = settings.kafka_security.security_protocol
    if protocol == "PLAINTEXT":
        return None
    context = settings.kafka_security.ssl_context()
    if protocol == "SSL":
        assert context is not None
        return faust.SSLCredentials(context)
    return faust.SASLCredentials(
        username=settings.kafka_security.sasl_username,
        password=settings.kafka_security.sasl_password_value,
        ssl_context=context,
        mechanism=settings.kafka_security.sasl_mechanism,
    )


def _refusal(settings: Settings, host: str, port: int, exc: BaseException) -> str | None:
    """A readable reason when ``exc`` means the broker or the client refused the other; None when
    it means the broker is not reachable (yet)."""
    from aiokafka.errors import (
        IllegalSaslStateError,
        SaslAuthenticationFailed,
        UnsupportedSaslMechanismError,
    )

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
    from aiokafka.conn import collect_hosts, create_conn
    from aiokafka.errors import KafkaConnectionError
    from aiokafka.protocol.metadata import MetadataRequest

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


async def start_client(client: Any, settings: Settings) -> None:
    """``await client.start()`` after :func:`check_access`, so that a refusal is one clear error."""
    await check_access(settings)
    await client.start()
