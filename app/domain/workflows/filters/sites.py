"""A workflow's sites: whether an event's site field holds one of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.domain.workflows.filters.fields import ABSENT, reader


def site_matches(
    sites: Sequence[str] | None, fields: Sequence[Mapping[str, Any]], data: Any
) -> tuple[bool, dict[str, Any]]:
    """Whether the value at the topic's site field (``"site": true``) is one of ``sites``.

    No sites (``None`` or empty) always matches. With sites, a topic without a site field never
    does (the detail says why). Only a string value equal to one of the ids matches. The detail
    is ``{site_field, value, sites, result}`` for the event trace; ``value`` is left out when absent.
    """
    if not sites:
        return True, {"sites": None}
    site_field = next((f for f in fields if f.get("site") is True), None)
    if site_field is None:
        reason = "the topic declares no site field"
        return False, {"site_field": None, "sites": list(sites), "result": False, "reason": reason}
    value = reader(str(site_field.get("path", "")))(data)
    result = isinstance(value, str) and value in sites
    detail: dict[str, Any] = {"site_field": site_field.get("id")}
    if value is not ABSENT:
        detail["value"] = value
    detail.update(sites=list(sites), result=result)
    return result, detail
