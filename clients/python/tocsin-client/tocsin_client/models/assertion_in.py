from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.assertion_in_credential import AssertionInCredential


T = TypeVar("T", bound="AssertionIn")


@_attrs_define
class AssertionIn:
    """
    Attributes:
        challenge (str): the pending second step's challenge
        credential (AssertionInCredential): the PublicKeyCredential as JSON (id, rawId, response, type)
    """

    challenge: str
    credential: AssertionInCredential

    def to_dict(self) -> dict[str, Any]:
        challenge = self.challenge

        credential = self.credential.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "challenge": challenge,
                "credential": credential,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.assertion_in_credential import AssertionInCredential

        d = dict(src_dict)
        challenge = d.pop("challenge")

        credential = AssertionInCredential.from_dict(d.pop("credential"))

        assertion_in = cls(
            challenge=challenge,
            credential=credential,
        )

        return assertion_in
