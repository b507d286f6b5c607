"""Kafka security: the one place that turns the TOCSIN_KAFKA_* security settings into client arguments.

Every Kafka client of the API, the worker and the CLI is built from :func:`client_args` (aiokafka's
producers, consumers and admin clients) or :func:`faust_credentials` (the worker's Faust app), so TLS
and SASL apply to all of them alike. An :data:`AccessCheck` (tables/kafka_access.py) makes one
connection (TLS handshake, SASL login) before a process starts its clients: a refused login or an
untrusted certificate stops the process with one readable line (:class:`KafkaAccessError`) instead of
retrying forever.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from app.errors import TocsinError
from app.settings.kafka_security import SASL_PROTOCOLS, SSL_PROTOCOLS

if TYPE_CHECKING:
    import faust

    from app.settings import Settings


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


# Connects once to the bootstrap brokers as every client will (TLS, SASL login) and raises
# :class:`KafkaAccessError` when one refused the other: tables/kafka_access.py's ``check_access``, which
# reaches aiokafka's connection internals. The entry points (cli/, streams/worker.py) pass it in.
AccessCheck = Callable[["Settings"], Awaitable[None]]


async def start_client(client: Any, settings: Settings, check: AccessCheck) -> None:
    """``await client.start()`` after ``check(settings)``, so that a refusal is one clear error."""
    await check(settings)
    await client.start()
