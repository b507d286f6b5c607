"""Kafka security: the one place that turns the TOCSIN_KAFKA_* security settings into client arguments.

Every Kafka client of the API, the worker and the CLI is built from :func:`client_args` (aiokafka's
producers, consumers and admin clients) or :func:`faust_credentials` (the worker's Faust app), so TLS
and SASL apply to all of them alike. :func:`check_access` makes one connection (TLS handshake, SASL
login) before a process starts its clients: a refused login or an untrusted certificate stops the
process with one readable line (:class:`KafkaAccessError`) instead of retrying forever.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import TYPE_CHECKING, Any

from app.errors import TocsinError

if TYPE_CHECKING:
    import faust

    from app.settings import Settings

SSL_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
# How long check_access waits for one broker to answer (connection, TLS handshake, SASL login).
CHECK_TIMEOUT_SECONDS = 10.0


class KafkaAccessError(TocsinError):
    """The broker refused this client (SASL login) or the client refused the broker (its certificate).

    Not a KafkaError nor an OSError: the callers that wait for an unreachable broker do not retry it,
    since waiting does not change a wrong password or an untrusted certificate.
    """


def _readable_file(name: str, path: os.PathLike[str] | None) -> str | None:
    if path is None:
        return None
    if not os.path.isfile(path):
        return f"{name}: no such file {os.fspath(path)!r}"
    if not os.access(path, os.R_OK):
        return f"{name}: {os.fspath(path)!r} is not readable by this process"
    return None


def security_problem(settings: Settings) -> str | None:
    """What is wrong with the security settings (one sentence naming the variables), or None."""
    protocol = settings.kafka_security_protocol
    set_tls = [
        f"TOCSIN_{name.upper()}"
        for name in ("kafka_ssl_ca_file", "kafka_ssl_cert_file", "kafka_ssl_key_file", "kafka_ssl_key_password")
        if getattr(settings, name) is not None
    ]
    set_sasl = [
        f"TOCSIN_{name.upper()}"
        for name in ("kafka_sasl_mechanism", "kafka_sasl_username", "kafka_sasl_password", "kafka_sasl_password_file")
        if getattr(settings, name) is not None
    ]
    where = f"TOCSIN_KAFKA_SECURITY_PROTOCOL={protocol}"
    if protocol not in SSL_PROTOCOLS and set_tls:
        return f"{', '.join(set_tls)} set, but TLS is off with {where} (use SSL or SASL_SSL)"
    if protocol not in SASL_PROTOCOLS and set_sasl:
        return f"{', '.join(set_sasl)} set, but SASL is off with {where} (use SASL_PLAINTEXT or SASL_SSL)"
    if protocol in SASL_PROTOCOLS:
        if settings.kafka_sasl_mechanism is None:
            return f"{where} needs TOCSIN_KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"
        if not settings.kafka_sasl_username:
            return f"{where} needs TOCSIN_KAFKA_SASL_USERNAME"
        if (settings.kafka_sasl_password is None) == (settings.kafka_sasl_password_file is None):
            return f"{where} needs one of TOCSIN_KAFKA_SASL_PASSWORD or TOCSIN_KAFKA_SASL_PASSWORD_FILE"
        if problem := _readable_file("TOCSIN_KAFKA_SASL_PASSWORD_FILE", settings.kafka_sasl_password_file):
            return problem
        if not settings.kafka_sasl_password_value:
            return "the Kafka SASL password is empty (TOCSIN_KAFKA_SASL_PASSWORD or its _FILE)"
    if protocol in SSL_PROTOCOLS:
        if settings.kafka_ssl_key_file is not None and settings.kafka_ssl_cert_file is None:
            return "TOCSIN_KAFKA_SSL_KEY_FILE needs TOCSIN_KAFKA_SSL_CERT_FILE (the client certificate)"
        if settings.kafka_ssl_key_password is not None and settings.kafka_ssl_cert_file is None:
            return "TOCSIN_KAFKA_SSL_KEY_PASSWORD needs TOCSIN_KAFKA_SSL_CERT_FILE (the client certificate)"
        for name in ("kafka_ssl_ca_file", "kafka_ssl_cert_file", "kafka_ssl_key_file"):
            if problem := _readable_file(f"TOCSIN_{name.upper()}", getattr(settings, name)):
                return problem
        try:
            ssl_context(settings)
        except ssl.SSLError as exc:
            return f"the Kafka TLS files cannot be used: {_ssl_reason(exc)} ({_tls_files(settings)})"
    return None


def _ssl_reason(exc: ssl.SSLError) -> str:
    return str(exc.reason or exc.strerror or exc).replace("_", " ").lower()


def _tls_files(settings: Settings) -> str:
    names = ("kafka_ssl_ca_file", "kafka_ssl_cert_file", "kafka_ssl_key_file")
    return ", ".join(f"TOCSIN_{n.upper()}={getattr(settings, n)}" for n in names if getattr(settings, n) is not None)


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of SSL and SASL_SSL (None otherwise): verifies the broker's certificate chain
    and host name against the CA file, or the system's CAs without one; presents the client
    certificate when one is set."""
    if settings.kafka_security_protocol not in SSL_PROTOCOLS:
        return None
    from aiokafka.helpers import create_ssl_context

    password = settings.kafka_ssl_key_password
    context: ssl.SSLContext = create_ssl_context(
        cafile=settings.kafka_ssl_ca_file,
        certfile=settings.kafka_ssl_cert_file,
        keyfile=settings.kafka_ssl_key_file,
        password=password.get_secret_value() if password is not None else None,
    )
    return context


def security_args(settings: Settings) -> dict[str, Any]:
    """aiokafka's security arguments (security_protocol, ssl_context, sasl_*)."""
    protocol = settings.kafka_security_protocol
    args: dict[str, Any] = {"security_protocol": protocol}
    if protocol in SSL_PROTOCOLS:
        args["ssl_context"] = ssl_context(settings)
    if protocol in SASL_PROTOCOLS:
        args["sasl_mechanism"] = settings.kafka_sasl_mechanism
        args["sasl_plain_username"] = settings.kafka_sasl_username
        args["sasl_plain_password"] = settings.kafka_sasl_password_value
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

    protocol = settings.kafka_security_protocol
    if protocol == "PLAINTEXT":
        return None
    context = ssl_context(settings)
    if protocol == "SSL":
        assert context is not None
        return faust.SSLCredentials(context)
    return faust.SASLCredentials(
        username=settings.kafka_sasl_username,
        password=settings.kafka_sasl_password_value,
        ssl_context=context,
        mechanism=settings.kafka_sasl_mechanism,
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
        trusted = f"the CA in TOCSIN_KAFKA_SSL_CA_FILE={settings.kafka_ssl_ca_file}"
        if settings.kafka_ssl_ca_file is None:
            trusted = "the system's CAs (TOCSIN_KAFKA_SSL_CA_FILE is not set)"
        return f"the {broker}'s TLS certificate is not trusted: {exc.verify_message}; checked against {trusted}"
    if isinstance(exc, ssl.SSLError):
        return (
            f"the TLS handshake with the {broker} failed: {_ssl_reason(exc)} "
            f"(does that listener speak {settings.kafka_security_protocol}? a client certificate refused?)"
        )
    if isinstance(exc, SaslAuthenticationFailed):
        detail = f": {exc.args[0]}" if exc.args and exc.args[0] else ""
        return (
            f"the {broker} refused the SASL {settings.kafka_sasl_mechanism} login of user "
            f"{settings.kafka_sasl_username!r}{detail} (check TOCSIN_KAFKA_SASL_USERNAME and the password)"
        )
    protocol = f"TOCSIN_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol}"
    if isinstance(exc, ConnectionResetError) and settings.kafka_security_protocol in SSL_PROTOCOLS:
        # aiokafka's connect: a raw OSError comes from the TCP connect or the TLS handshake, and a
        # listening port resets a connection there when it does not speak TLS
        return f"the {broker} closed the connection during the TLS handshake: does that listener speak {protocol}?"
    if isinstance(exc, IllegalSaslStateError):
        return f"the {broker} takes no SASL login on that listener: does it speak {protocol}?"
    if isinstance(exc, UnsupportedSaslMechanismError):
        return f"the {broker} does not accept TOCSIN_KAFKA_SASL_MECHANISM={settings.kafka_sasl_mechanism}: {exc}"
    return None


async def check_access(settings: Settings) -> None:
    """Connect to the bootstrap brokers as every client will (TLS, SASL login) and close again.

    Raises :class:`KafkaAccessError` when a broker refused the login or presented a certificate the
    client does not trust. Returns quietly when a broker answered, and when none could be reached
    (the caller's own wait handles a broker that is down or still starting).
    """
    if settings.kafka_security_protocol == "PLAINTEXT":
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
            if settings.kafka_security_protocol == "SSL":
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
