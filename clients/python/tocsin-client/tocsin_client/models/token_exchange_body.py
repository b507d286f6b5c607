from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.token_exchange_body_grant_type import TokenExchangeBodyGrantType
from ..models.token_exchange_body_subject_token_type import (
    TokenExchangeBodySubjectTokenType,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="TokenExchangeBody")


@_attrs_define
class TokenExchangeBody:
    """
    Attributes:
        grant_type (TokenExchangeBodyGrantType):
        subject_token (str): the external OIDC JWT
        subject_token_type (TokenExchangeBodySubjectTokenType):
        audience (str | Unset):
        requested_token_type (str | Unset):
        resource (str | Unset):
        scope (str | Unset):
    """

    grant_type: TokenExchangeBodyGrantType
    subject_token: str
    subject_token_type: TokenExchangeBodySubjectTokenType
    audience: str | Unset = UNSET
    requested_token_type: str | Unset = UNSET
    resource: str | Unset = UNSET
    scope: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        grant_type = self.grant_type.value

        subject_token = self.subject_token

        subject_token_type = self.subject_token_type.value

        audience = self.audience

        requested_token_type = self.requested_token_type

        resource = self.resource

        scope = self.scope

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "grant_type": grant_type,
                "subject_token": subject_token,
                "subject_token_type": subject_token_type,
            }
        )
        if audience is not UNSET:
            field_dict["audience"] = audience
        if requested_token_type is not UNSET:
            field_dict["requested_token_type"] = requested_token_type
        if resource is not UNSET:
            field_dict["resource"] = resource
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        grant_type = TokenExchangeBodyGrantType(d.pop("grant_type"))

        subject_token = d.pop("subject_token")

        subject_token_type = TokenExchangeBodySubjectTokenType(
            d.pop("subject_token_type")
        )

        audience = d.pop("audience", UNSET)

        requested_token_type = d.pop("requested_token_type", UNSET)

        resource = d.pop("resource", UNSET)

        scope = d.pop("scope", UNSET)

        token_exchange_body = cls(
            grant_type=grant_type,
            subject_token=subject_token,
            subject_token_type=subject_token_type,
            audience=audience,
            requested_token_type=requested_token_type,
            resource=resource,
            scope=scope,
        )

        token_exchange_body.additional_properties = d
        return token_exchange_body

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
