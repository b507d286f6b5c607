"""The delivery kinds: the one list that routes, runs and limits deliveries. A workflow action of
``action`` becomes an item of its kind (app/domain/workflows/workflow_stage.py), sent to the kind's
``topic`` (app/kafka/topics.py), where the kind's delivery stage (``stage``, streams/worker.py)
attempts it with the kind's executor (streams/resources.py). A new kind is a line here and an
executor; everything else follows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeliveryKind:
    name: str  # PUSH, EMAIL, WEBHOOK: the items' and executors' kind
    action: str  # the workflow action type that makes such items
    topic: str  # the short name of its action topic
    # attempts take the slots of the receiver's host (scheme and port included), not of the kind
    per_host: bool = False
    signed: bool = False  # each attempt is signed with its endpoint's secret (which may be disabled)

    @property
    def stage(self) -> str:
        """Its delivery stage's name (and the last part of that stage's consumer group)."""
        return f"deliveries.{self.name.lower()}"


PUSH = DeliveryKind("PUSH", "SEND_PUSH_NOTIFICATION", "actions.push")
EMAIL = DeliveryKind("EMAIL", "SEND_EMAIL", "actions.email")
WEBHOOK = DeliveryKind("WEBHOOK", "SEND_WEBHOOK", "actions.webhook", per_host=True, signed=True)
KINDS = (PUSH, EMAIL, WEBHOOK)
BY_NAME = {kind.name: kind for kind in KINDS}
BY_ACTION = {kind.action: kind for kind in KINDS}
