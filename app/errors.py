"""Exception hierarchy. Only ``api/`` maps these to HTTP responses.

Every class the product raises on purpose, where it lives when not here, and what it says:

TocsinError [500 SYS-000]: the root; its ``http_status``, ``code`` and ``retriable`` are the defaults
 ├── AuthenticationError [401 AUT-002|AUT-003|AUT-004]: no or malformed token, unknown or revoked, expired
 ├── PermissionDenied [403 IAM-001]: the caller lacks the permission on the resource
 ├── ChangeRefused [403 IAM-002]: a change that would hand out a permission the caller lacks
 ├── NotFound [404 RES-001]: no such resource in this organization
 ├── Conflict [409 RES-002]: duplicate key or name, still referenced, or an inactive topic
 ├── BodyTooLarge [413 VAL-002]: a body over TOCSIN_MAX_BODY_BYTES (a batch publish: TOCSIN_MAX_PUBLISH_BATCH_BYTES)
 ├── UnsupportedMediaType [415 VAL-003]: a body not declared JSON, in UTF-8, unencoded
 ├── InvalidInput [422 VAL-001]: the failing fields in ``details``
 │    └── InvalidEvent (app/domain/formats/pagerduty.py) [422 VAL-001]: a PagerDuty event refused (answered as a 400)
 ├── RateLimited [429 RATE-001] retriable: publishes per account and topic, token exchanges
 ├── Unavailable [503 SYS-001] retriable: broker or database not reachable; nothing was accepted
 ├── InvalidCredential (also ValueError): a federated credential's subject filter or condition
 ├── InvalidName (app/domain/iam/resource_names.py, also ValueError): a malformed resource name or tail
 ├── InvalidFilter (app/domain/workflows/filters/validation.py, also ValueError): a filter the topic's fields refuse
 ├── ExchangeFailure (app/identity/exchange.py): a refused token exchange, answered in the RFC 6749 §5.2 form
 ├── SigningKeyError (app/identity/signing_keys.py): no usable token signing key; stops the process at start
 ├── CeremonyFailed (app/identity/webauthn_ceremony.py): a WebAuthn answer that does not verify
 │    └── SignCountRegressed (app/identity/webauthn_ceremony.py): its sign counter did not grow (a cloned key, a replay)
 ├── FetchRefused (app/net/errors.py) [422 VAL-001] retriable: an outbound fetch (discovery, JWKS) failed
 │    └── TargetRefused (app/net/errors.py) [422 VAL-001]: the target itself is refused (scheme, address)
 ├── BrokerNotReady (app/kafka/topics.py, also KafkaError) retriable: the cluster cannot create the topics yet
 ├── PartitionMismatch (app/kafka/topics.py): existing topics with another partition count; no start
 ├── KafkaAccessError (app/kafka/security.py): a refused SASL login or an untrusted broker certificate
 ├── Refused (cli/partitions.py): ``tocsin partitions`` cannot grow the deployment now
 ├── PublishedDuringGrow (cli/partitions.py): records arrived while ``tocsin partitions`` ran
 ├── ProfileError (cli/profile.py): the CLI's API address, token or organization missing, or its profile file unusable
 ├── UnreadableValue (tables/codecs.py, also ValueError): a stored table value that cannot be decoded
 └── Revoked (tables/batch_stage.py): a batch stage's partitions revoked before its commit; the batch is dropped

How to read a line: ``[status code]`` is what the API answers for it (absent: the class is never
answered as such; an unexpected error is ``500 SYS-000``); ``retriable`` is the class's attribute:
the caller may send the same request again later and it may succeed, where any class without it
fails the same way until something changes. The API adds ``Retry-After`` to a retriable answer of
429 or 503, the statuses HTTP gives it a meaning for (RFC 9110 §10.2.3, RFC 6585 §4); a retriable
422 (a fetch that timed out) carries none: it says the request is not to be repeated unchanged
right away. A module in parentheses is
where the class lives when not here. ``tests/unit/test_error_tree.py`` fails when this drawing and
the classes differ, and ``docs/reference/errors.md`` is generated from the same classes.

Where a class also derives from a built-in or library error, that is so every ``except`` written
for it before it joined the root still catches it. The development stack's errors (devstack/,
tests/support/) are not the product's and stay outside the root.
"""

from __future__ import annotations

from typing import Any


class TocsinError(Exception):
    """Root of every error the service raises on purpose."""

    http_status = 500
    code = "SYS-000"
    retriable = False

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class AuthenticationError(TocsinError):
    """The bearer token is missing, malformed, unknown, revoked or expired."""

    http_status = 401

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class PermissionDenied(TocsinError):
    """The caller lacks the permission on the resource: grant a role that carries it."""

    http_status = 403
    code = "IAM-001"


class ChangeRefused(TocsinError):
    """The change is not allowed (system role, privilege escalation)."""

    http_status = 403
    code = "IAM-002"


class NotFound(TocsinError):
    """No such resource in this organization."""

    http_status = 404
    code = "RES-001"


class Conflict(TocsinError):
    """Duplicate key or name, or the resource is still referenced."""

    http_status = 409
    code = "RES-002"


class InvalidInput(TocsinError):
    """The body failed validation; ``details`` lists the failing fields."""

    http_status = 422
    code = "VAL-001"


class BodyTooLarge(TocsinError):
    http_status = 413
    code = "VAL-002"


class UnsupportedMediaType(TocsinError):
    http_status = 415
    code = "VAL-003"


class RateLimited(TocsinError):
    """Too many requests for one limit (e.g. publishes of one service account to one topic)."""

    http_status = 429
    code = "RATE-001"
    retriable = True

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message, details={"retry_after_seconds": round(retry_after, 3)})
        self.retry_after = retry_after


class Unavailable(TocsinError):
    """Broker or database unreachable; nothing was accepted, the caller may retry.

    Operators: check that Kafka (``TOCSIN_KAFKA_BOOTSTRAP``) and the database
    (``TOCSIN_DATABASE_URL``) are up.
    """

    http_status = 503
    code = "SYS-001"
    retriable = True


class InvalidCredential(TocsinError, ValueError):
    """A federated-credential field that cannot be accepted; ``field`` names it.

    Raised by the pure rules (``app/domain/iam/subject_filter.py``, ``conditions.py``); a
    ``ValueError`` too, as it always was, so validators that catch those still do.
    """

    def __init__(self, field: str, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.position = position
