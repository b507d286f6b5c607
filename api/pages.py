"""The list envelope: ``{"items": [...], "next_cursor": ...}``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Page(BaseModel):
    items: list[dict[str, Any]]
    next_cursor: str | None


def page(items: list[dict[str, Any]], next_cursor: str | None) -> Page:
    return Page(items=items, next_cursor=next_cursor)
