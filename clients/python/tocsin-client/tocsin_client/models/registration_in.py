from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.registration_in_credential import RegistrationInCredential


T = TypeVar("T", bound="RegistrationIn")


@_attrs_define
class RegistrationIn:
    """
    Attributes:
        ceremony (str):
        credential (RegistrationInCredential): the PublicKeyCredential as JSON (id, rawId, response, type)
        challenge (None | str | Unset): the enrolment step's, if enrolling
        name (str | Unset): the person's name for this authenticator Default: ''.
    """

    ceremony: str
    credential: RegistrationInCredential
    challenge: None | str | Unset = UNSET
    name: str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        ceremony = self.ceremony

        credential = self.credential.to_dict()

        challenge: None | str | Unset
        if isinstance(self.challenge, Unset):
            challenge = UNSET
        else:
            challenge = self.challenge

        name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ceremony": ceremony,
                "credential": credential,
            }
        )
        if challenge is not UNSET:
            field_dict["challenge"] = challenge
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.registration_in_credential import RegistrationInCredential

        d = dict(src_dict)
        ceremony = d.pop("ceremony")

        credential = RegistrationInCredential.from_dict(d.pop("credential"))

        def _parse_challenge(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        challenge = _parse_challenge(d.pop("challenge", UNSET))

        name = d.pop("name", UNSET)

        registration_in = cls(
            ceremony=ceremony,
            credential=credential,
            challenge=challenge,
            name=name,
        )

        return registration_in
