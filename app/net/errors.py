"""Errors of outbound requests.

``TocsinError`` → :class:`FetchRefused` (a request failed or was refused; a retry may succeed:
timeouts, failed connections, bad answers; ``retriable``) → :class:`TargetRefused` (the target
itself is refused: scheme, credentials, malformed URL, a forbidden address; no retry can change
that; not ``retriable``).
``str()`` is the same for every one of them, so nothing internal reaches an API body; ``reason``
says why, for logs and admins.
"""

from __future__ import annotations

from app.errors import TocsinError

UNIFORM_MESSAGE = "the document could not be fetched: the URL must be a reachable public https endpoint serving JSON"


class FetchRefused(TocsinError):
    """An outbound fetch was refused or failed; the same fetch later may succeed (a timeout, a failed
    connection, a bad answer). ``str()`` is uniform; ``reason`` says why."""

    http_status = 422
    code = "VAL-001"
    retriable = True

    def __init__(self, reason: str) -> None:
        super().__init__(UNIFORM_MESSAGE)
        self.reason = reason

    def __repr__(self) -> str:
        return f"FetchRefused(reason={self.reason!r})"


class TargetRefused(FetchRefused):
    """The target itself is refused (scheme, credentials, malformed URL, a forbidden address):
    no retry can change that, unlike a timeout or a connection failure."""

    retriable = False
