"""Bases of the request and response models of the routes.

:class:`Out`, the base of response models: a route's ``response_model`` lists every field it
answers. ``extra="forbid"``: a field a route adds without declaring it fails the response check
(a 500, which the API tests' schema fuzzing finds) instead of going out undocumented.
Timestamps stay the ISO 8601 strings the routes write (``format: date-time`` in the schema).

:class:`In`, the base of request bodies: unknown fields and values of another JSON type than
the schema's (``0`` for a boolean, ``"5"`` for an integer) are refused with 422, as documented.
:func:`omittable` is a PATCH field that may be left out but not sent as ``null``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.domain.shared.strict_model import StrictModel


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class In(StrictModel):
    """A request body (see the module's docstring)."""


Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def omittable(**constraints: Any) -> Any:
    """A PATCH field: absent means "unchanged"; ``null`` is refused (422) where the type has no null.

    Declare it with its non-null type (``name: str = omittable(max_length=200)``); the handler
    reads only the fields that were sent (``model_dump(exclude_unset=True)``).
    """
    return Field(default=None, json_schema_extra=_no_default, validate_default=False, **constraints)
