from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.form_answer_out_answers import FormAnswerOutAnswers


T = TypeVar("T", bound="FormAnswerOut")


@_attrs_define
class FormAnswerOut:
    """
    Attributes:
        account_id (str):
        answers (FormAnswerOutAnswers):
        created_at (datetime.datetime | None):
        id (str):
    """

    account_id: str
    answers: FormAnswerOutAnswers
    created_at: datetime.datetime | None
    id: str

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        answers = self.answers.to_dict()

        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account_id": account_id,
                "answers": answers,
                "created_at": created_at,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.form_answer_out_answers import FormAnswerOutAnswers

        d = dict(src_dict)
        account_id = d.pop("account_id")

        answers = FormAnswerOutAnswers.from_dict(d.pop("answers"))

        def _parse_created_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        created_at = _parse_created_at(d.pop("created_at"))

        id = d.pop("id")

        form_answer_out = cls(
            account_id=account_id,
            answers=answers,
            created_at=created_at,
            id=id,
        )

        return form_answer_out
