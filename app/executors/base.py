"""The one interface every delivery executor (push, e-mail, webhook) implements; what an attempt
gave (:class:`Attempt`) is a domain value (app/domain/delivery/delivery_verdicts.py)."""

from __future__ import annotations

from typing import Any, Protocol

from app.domain.delivery.delivery_verdicts import Attempt


class Executor(Protocol):
    """Sends one delivery item (app/domain/workflows/workflow_stage.py ``_delivery``); never raises for a failed
    delivery, only returns it as an :class:`Attempt`."""

    kind: str

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt: ...

    async def aclose(self) -> None: ...
