"""The list envelope: ``{"items": [...], "next_cursor": ...}``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """A route declares ``response_model=Page[ItemOut]``; its items are checked against ``ItemOut``."""

    model_config = ConfigDict(extra="forbid")
    items: list[T]
    next_cursor: str | None


def page(items: list[dict[str, Any]], next_cursor: str | None) -> Page[Any]:
    return Page[Any](items=items, next_cursor=next_cursor)
