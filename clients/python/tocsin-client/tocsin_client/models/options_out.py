from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.options_out_public_key import OptionsOutPublicKey


T = TypeVar("T", bound="OptionsOut")


@_attrs_define
class OptionsOut:
    """
    Attributes:
        ceremony (None | str): send it back with the answer (registration only); works once
        expires_in (int):
        public_key (OptionsOutPublicKey): the options for navigator.credentials.create/get, in the WebAuthn JSON form
            (base64url)
    """

    ceremony: None | str
    expires_in: int
    public_key: OptionsOutPublicKey

    def to_dict(self) -> dict[str, Any]:
        ceremony: None | str
        ceremony = self.ceremony

        expires_in = self.expires_in

        public_key = self.public_key.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ceremony": ceremony,
                "expires_in": expires_in,
                "public_key": public_key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.options_out_public_key import OptionsOutPublicKey

        d = dict(src_dict)

        def _parse_ceremony(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        ceremony = _parse_ceremony(d.pop("ceremony"))

        expires_in = d.pop("expires_in")

        public_key = OptionsOutPublicKey.from_dict(d.pop("public_key"))

        options_out = cls(
            ceremony=ceremony,
            expires_in=expires_in,
            public_key=public_key,
        )

        return options_out
