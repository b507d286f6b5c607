from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="RunOperationBook")


@_attrs_define
class RunOperationBook:
    """
    Attributes:
        operation_book_id (str):
        type_ (Literal['RUN_OPERATION_BOOK']):
    """

    operation_book_id: str
    type_: Literal["RUN_OPERATION_BOOK"]

    def to_dict(self) -> dict[str, Any]:
        operation_book_id = self.operation_book_id

        type_ = self.type_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "operation_book_id": operation_book_id,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        operation_book_id = d.pop("operation_book_id")

        type_ = cast(Literal["RUN_OPERATION_BOOK"], d.pop("type"))
        if type_ != "RUN_OPERATION_BOOK":
            raise ValueError(
                f"type must match const 'RUN_OPERATION_BOOK', got '{type_}'"
            )

        run_operation_book = cls(
            operation_book_id=operation_book_id,
            type_=type_,
        )

        return run_operation_book
