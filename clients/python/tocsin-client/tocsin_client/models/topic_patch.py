from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.topic_patch_access_scope import TopicPatchAccessScope
from ..models.topic_patch_status import TopicPatchStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.control_policy_profile import ControlPolicyProfile
    from ..models.template_variable import TemplateVariable
    from ..models.topic_field_in import TopicFieldIn


T = TypeVar("T", bound="TopicPatch")


@_attrs_define
class TopicPatch:
    """Fields a PATCH may change (the key is fixed: paths and keys of publishers use it).

    Attributes:
        access_scope (TopicPatchAccessScope | Unset):
        allowed_organization_ids (list[str] | Unset):
        control_policy_profile (ControlPolicyProfile | None | Unset): null removes the policy
        description_en (str | Unset):
        description_ja (str | Unset):
        fields (list[TopicFieldIn] | Unset):
        name_en (str | Unset):
        name_ja (str | Unset):
        share_with_allowed_orgs (bool | Unset):
        share_with_license_subscribers (bool | Unset):
        share_with_partner_orgs (bool | Unset):
        share_with_sibling_orgs (bool | Unset):
        status (TopicPatchStatus | Unset):
        template_variables (list[TemplateVariable] | Unset):
    """

    access_scope: TopicPatchAccessScope | Unset = UNSET
    allowed_organization_ids: list[str] | Unset = UNSET
    control_policy_profile: ControlPolicyProfile | None | Unset = UNSET
    description_en: str | Unset = UNSET
    description_ja: str | Unset = UNSET
    fields: list[TopicFieldIn] | Unset = UNSET
    name_en: str | Unset = UNSET
    name_ja: str | Unset = UNSET
    share_with_allowed_orgs: bool | Unset = UNSET
    share_with_license_subscribers: bool | Unset = UNSET
    share_with_partner_orgs: bool | Unset = UNSET
    share_with_sibling_orgs: bool | Unset = UNSET
    status: TopicPatchStatus | Unset = UNSET
    template_variables: list[TemplateVariable] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.control_policy_profile import ControlPolicyProfile

        access_scope: str | Unset = UNSET
        if not isinstance(self.access_scope, Unset):
            access_scope = self.access_scope.value

        allowed_organization_ids: list[str] | Unset = UNSET
        if not isinstance(self.allowed_organization_ids, Unset):
            allowed_organization_ids = self.allowed_organization_ids

        control_policy_profile: dict[str, Any] | None | Unset
        if isinstance(self.control_policy_profile, Unset):
            control_policy_profile = UNSET
        elif isinstance(self.control_policy_profile, ControlPolicyProfile):
            control_policy_profile = self.control_policy_profile.to_dict()
        else:
            control_policy_profile = self.control_policy_profile

        description_en = self.description_en

        description_ja = self.description_ja

        fields: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.fields, Unset):
            fields = []
            for fields_item_data in self.fields:
                fields_item = fields_item_data.to_dict()
                fields.append(fields_item)

        name_en = self.name_en

        name_ja = self.name_ja

        share_with_allowed_orgs = self.share_with_allowed_orgs

        share_with_license_subscribers = self.share_with_license_subscribers

        share_with_partner_orgs = self.share_with_partner_orgs

        share_with_sibling_orgs = self.share_with_sibling_orgs

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        template_variables: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.template_variables, Unset):
            template_variables = []
            for template_variables_item_data in self.template_variables:
                template_variables_item = template_variables_item_data.to_dict()
                template_variables.append(template_variables_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if access_scope is not UNSET:
            field_dict["access_scope"] = access_scope
        if allowed_organization_ids is not UNSET:
            field_dict["allowed_organization_ids"] = allowed_organization_ids
        if control_policy_profile is not UNSET:
            field_dict["control_policy_profile"] = control_policy_profile
        if description_en is not UNSET:
            field_dict["description_en"] = description_en
        if description_ja is not UNSET:
            field_dict["description_ja"] = description_ja
        if fields is not UNSET:
            field_dict["fields"] = fields
        if name_en is not UNSET:
            field_dict["name_en"] = name_en
        if name_ja is not UNSET:
            field_dict["name_ja"] = name_ja
        if share_with_allowed_orgs is not UNSET:
            field_dict["share_with_allowed_orgs"] = share_with_allowed_orgs
        if share_with_license_subscribers is not UNSET:
            field_dict["share_with_license_subscribers"] = (
                share_with_license_subscribers
            )
        if share_with_partner_orgs is not UNSET:
            field_dict["share_with_partner_orgs"] = share_with_partner_orgs
        if share_with_sibling_orgs is not UNSET:
            field_dict["share_with_sibling_orgs"] = share_with_sibling_orgs
        if status is not UNSET:
            field_dict["status"] = status
        if template_variables is not UNSET:
            field_dict["template_variables"] = template_variables

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.control_policy_profile import ControlPolicyProfile
        from ..models.template_variable import TemplateVariable
        from ..models.topic_field_in import TopicFieldIn

        d = dict(src_dict)
        _access_scope = d.pop("access_scope", UNSET)
        access_scope: TopicPatchAccessScope | Unset
        if isinstance(_access_scope, Unset):
            access_scope = UNSET
        else:
            access_scope = TopicPatchAccessScope(_access_scope)

        allowed_organization_ids = cast(
            list[str], d.pop("allowed_organization_ids", UNSET)
        )

        def _parse_control_policy_profile(
            data: object,
        ) -> ControlPolicyProfile | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                control_policy_profile_type_0 = ControlPolicyProfile.from_dict(data)

                return control_policy_profile_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ControlPolicyProfile | None | Unset, data)

        control_policy_profile = _parse_control_policy_profile(
            d.pop("control_policy_profile", UNSET)
        )

        description_en = d.pop("description_en", UNSET)

        description_ja = d.pop("description_ja", UNSET)

        _fields = d.pop("fields", UNSET)
        fields: list[TopicFieldIn] | Unset = UNSET
        if _fields is not UNSET:
            fields = []
            for fields_item_data in _fields:
                fields_item = TopicFieldIn.from_dict(fields_item_data)

                fields.append(fields_item)

        name_en = d.pop("name_en", UNSET)

        name_ja = d.pop("name_ja", UNSET)

        share_with_allowed_orgs = d.pop("share_with_allowed_orgs", UNSET)

        share_with_license_subscribers = d.pop("share_with_license_subscribers", UNSET)

        share_with_partner_orgs = d.pop("share_with_partner_orgs", UNSET)

        share_with_sibling_orgs = d.pop("share_with_sibling_orgs", UNSET)

        _status = d.pop("status", UNSET)
        status: TopicPatchStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = TopicPatchStatus(_status)

        _template_variables = d.pop("template_variables", UNSET)
        template_variables: list[TemplateVariable] | Unset = UNSET
        if _template_variables is not UNSET:
            template_variables = []
            for template_variables_item_data in _template_variables:
                template_variables_item = TemplateVariable.from_dict(
                    template_variables_item_data
                )

                template_variables.append(template_variables_item)

        topic_patch = cls(
            access_scope=access_scope,
            allowed_organization_ids=allowed_organization_ids,
            control_policy_profile=control_policy_profile,
            description_en=description_en,
            description_ja=description_ja,
            fields=fields,
            name_en=name_en,
            name_ja=name_ja,
            share_with_allowed_orgs=share_with_allowed_orgs,
            share_with_license_subscribers=share_with_license_subscribers,
            share_with_partner_orgs=share_with_partner_orgs,
            share_with_sibling_orgs=share_with_sibling_orgs,
            status=status,
            template_variables=template_variables,
        )

        return topic_patch
