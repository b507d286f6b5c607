"""The one strict model base: unknown fields, and values of another JSON type than the schema's
(``0`` for a boolean, ``"5"`` for an integer, ``false`` for a metric), are refused — a 422 at the
API — never coerced.

Request bodies (``api.models.In``) and the authentication policy derive from
:class:`StrictModel`; the publish request and the notification object, values that travel to the
agents, from :class:`FrozenStrictModel`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FrozenStrictModel(StrictModel):
    model_config = ConfigDict(frozen=True)
