from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="ExchangeAttemptOut")


@_attrs_define
class ExchangeAttemptOut:
    """
    Attributes:
        at (datetime.datetime):
        client_address (None | str):
        count (int): attempts this entry stands for: 1 for an issued token; for refusals, the failures of one source (a
            client address, an IPv6 address's /64) and check in a window (TOCSIN_EXCHANGE_FAILURE_WINDOW_SECONDS)
        failed_check (None | str):
        id (str):
        outcome (str):
        subject (None | str):
    """

    at: datetime.datetime
    client_address: None | str
    count: int
    failed_check: None | str
    id: str
    outcome: str
    subject: None | str

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        client_address: None | str
        client_address = self.client_address

        count = self.count

        failed_check: None | str
        failed_check = self.failed_check

        id = self.id

        outcome = self.outcome

        subject: None | str
        subject = self.subject

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at": at,
                "client_address": client_address,
                "count": count,
                "failed_check": failed_check,
                "id": id,
                "outcome": outcome,
                "subject": subject,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        def _parse_client_address(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        client_address = _parse_client_address(d.pop("client_address"))

        count = d.pop("count")

        def _parse_failed_check(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        failed_check = _parse_failed_check(d.pop("failed_check"))

        id = d.pop("id")

        outcome = d.pop("outcome")

        def _parse_subject(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        subject = _parse_subject(d.pop("subject"))

        exchange_attempt_out = cls(
            at=at,
            client_address=client_address,
            count=count,
            failed_check=failed_check,
            id=id,
            outcome=outcome,
            subject=subject,
        )

        return exchange_attempt_out
