"""The one interface every delivery executor (push, e-mail, webhook) implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(slots=True)
class Attempt:
    """What one attempt gave: ``status_code`` (HTTP, or SMTP reply code) and response headers
    when there was an answer, ``error`` when there was none (timeout, refused target…).
    ``permanent`` marks a failure no retry can fix (an invalid recipient, a refused target);
    ``expired`` a push whose time to live passed before it could be sent; ``gone`` a 410."""

    status_code: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    permanent: bool = False
    expired: bool = False
    duration_ms: int = 0
    record: dict[str, Any] | None = None  # a row the sink stores with the batch (the push outbox)

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300 and self.error is None


class Executor(Protocol):
    """Sends one delivery item (see streams/workflow.py ``_delivery``); never raises for a failed
    delivery, only returns it as an :class:`Attempt`."""

    kind: str

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt: ...

    async def aclose(self) -> None: ...
