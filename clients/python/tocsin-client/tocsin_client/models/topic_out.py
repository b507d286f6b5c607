from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.topic_out_access_scope import TopicOutAccessScope
from ..models.topic_out_status import TopicOutStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.control_policy_out import ControlPolicyOut
    from ..models.template_variable import TemplateVariable
    from ..models.topic_field import TopicField


T = TypeVar("T", bound="TopicOut")


@_attrs_define
class TopicOut:
    """
    Attributes:
        access_scope (TopicOutAccessScope):
        allowed_organization_ids (list[str]):
        created_at (datetime.datetime):
        description_en (str):
        description_ja (str):
        fields (list[TopicField]):
        id (str):
        key (str):
        name_en (str):
        name_ja (str):
        organization_id (str):
        share_with_allowed_orgs (bool):
        share_with_license_subscribers (bool):
        share_with_partner_orgs (bool):
        share_with_sibling_orgs (bool):
        status (TopicOutStatus):
        template_variables (list[TemplateVariable]):
        control_policy_profile (ControlPolicyOut | None | Unset):
    """

    access_scope: TopicOutAccessScope
    allowed_organization_ids: list[str]
    created_at: datetime.datetime
    description_en: str
    description_ja: str
    fields: list[TopicField]
    id: str
    key: str
    name_en: str
    name_ja: str
    organization_id: str
    share_with_allowed_orgs: bool
    share_with_license_subscribers: bool
    share_with_partner_orgs: bool
    share_with_sibling_orgs: bool
    status: TopicOutStatus
    template_variables: list[TemplateVariable]
    control_policy_profile: ControlPolicyOut | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.control_policy_out import ControlPolicyOut

        access_scope = self.access_scope.value

        allowed_organization_ids = self.allowed_organization_ids

        created_at = self.created_at.isoformat()

        description_en = self.description_en

        description_ja = self.description_ja

        fields = []
        for fields_item_data in self.fields:
            fields_item = fields_item_data.to_dict()
            fields.append(fields_item)

        id = self.id

        key = self.key

        name_en = self.name_en

        name_ja = self.name_ja

        organization_id = self.organization_id

        share_with_allowed_orgs = self.share_with_allowed_orgs

        share_with_license_subscribers = self.share_with_license_subscribers

        share_with_partner_orgs = self.share_with_partner_orgs

        share_with_sibling_orgs = self.share_with_sibling_orgs

        status = self.status.value

        template_variables = []
        for template_variables_item_data in self.template_variables:
            template_variables_item = template_variables_item_data.to_dict()
            template_variables.append(template_variables_item)

        control_policy_profile: dict[str, Any] | None | Unset
        if isinstance(self.control_policy_profile, Unset):
            control_policy_profile = UNSET
        elif isinstance(self.control_policy_profile, ControlPolicyOut):
            control_policy_profile = self.control_policy_profile.to_dict()
        else:
            control_policy_profile = self.control_policy_profile

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "access_scope": access_scope,
                "allowed_organization_ids": allowed_organization_ids,
                "created_at": created_at,
                "description_en": description_en,
                "description_ja": description_ja,
                "fields": fields,
                "id": id,
                "key": key,
                "name_en": name_en,
                "name_ja": name_ja,
                "organization_id": organization_id,
                "share_with_allowed_orgs": share_with_allowed_orgs,
                "share_with_license_subscribers": share_with_license_subscribers,
                "share_with_partner_orgs": share_with_partner_orgs,
                "share_with_sibling_orgs": share_with_sibling_orgs,
                "status": status,
                "template_variables": template_variables,
            }
        )
        if control_policy_profile is not UNSET:
            field_dict["control_policy_profile"] = control_policy_profile

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.control_policy_out import ControlPolicyOut
        from ..models.template_variable import TemplateVariable
        from ..models.topic_field import TopicField

        d = dict(src_dict)
        access_scope = TopicOutAccessScope(d.pop("access_scope"))

        allowed_organization_ids = cast(list[str], d.pop("allowed_organization_ids"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        description_en = d.pop("description_en")

        description_ja = d.pop("description_ja")

        fields = []
        _fields = d.pop("fields")
        for fields_item_data in _fields:
            fields_item = TopicField.from_dict(fields_item_data)

            fields.append(fields_item)

        id = d.pop("id")

        key = d.pop("key")

        name_en = d.pop("name_en")

        name_ja = d.pop("name_ja")

        organization_id = d.pop("organization_id")

        share_with_allowed_orgs = d.pop("share_with_allowed_orgs")

        share_with_license_subscribers = d.pop("share_with_license_subscribers")

        share_with_partner_orgs = d.pop("share_with_partner_orgs")

        share_with_sibling_orgs = d.pop("share_with_sibling_orgs")

        status = TopicOutStatus(d.pop("status"))

        template_variables = []
        _template_variables = d.pop("template_variables")
        for template_variables_item_data in _template_variables:
            template_variables_item = TemplateVariable.from_dict(
                template_variables_item_data
            )

            template_variables.append(template_variables_item)

        def _parse_control_policy_profile(
            data: object,
        ) -> ControlPolicyOut | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                control_policy_profile_type_0 = ControlPolicyOut.from_dict(data)

                return control_policy_profile_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ControlPolicyOut | None | Unset, data)

        control_policy_profile = _parse_control_policy_profile(
            d.pop("control_policy_profile", UNSET)
        )

        topic_out = cls(
            access_scope=access_scope,
            allowed_organization_ids=allowed_organization_ids,
            created_at=created_at,
            description_en=description_en,
            description_ja=description_ja,
            fields=fields,
            id=id,
            key=key,
            name_en=name_en,
            name_ja=name_ja,
            organization_id=organization_id,
            share_with_allowed_orgs=share_with_allowed_orgs,
            share_with_license_subscribers=share_with_license_subscribers,
            share_with_partner_orgs=share_with_partner_orgs,
            share_with_sibling_orgs=share_with_sibling_orgs,
            status=status,
            template_variables=template_variables,
            control_policy_profile=control_policy_profile,
        )

        return topic_out
