from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.answers_in_answers import AnswersInAnswers


T = TypeVar("T", bound="AnswersIn")


@_attrs_define
class AnswersIn:
    """
    Attributes:
        answers (AnswersInAnswers):
    """

    answers: AnswersInAnswers

    def to_dict(self) -> dict[str, Any]:
        answers = self.answers.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "answers": answers,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.answers_in_answers import AnswersInAnswers

        d = dict(src_dict)
        answers = AnswersInAnswers.from_dict(d.pop("answers"))

        answers_in = cls(
            answers=answers,
        )

        return answers_in
