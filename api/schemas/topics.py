"""The request and response bodies of the workflow topic routes (api/routes/topics.py): a topic, its
fields and template variables, its event-control policy, and a partition's control state."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from api.models import In, Out, Timestamp, omittable
from app.domain.workflows.filters.operators import operator_problem


class FieldValue(In):
    value_source: str = "value"
    type: Literal["number", "string", "boolean", "any"]
    operators: list[str] = Field(default_factory=list, max_length=20)


class FieldValueIn(FieldValue):
    """A ``values`` entry as a create or update sends it: only the field operators, each for a type
    that allows it (type ``any`` takes every operator; docs/api.md, "Topic field operators")."""

    @model_validator(mode="after")
    def _spec_operators(self) -> FieldValueIn:
        problems = [p for op in self.operators if (p := operator_problem(op, self.type)) is not None]
        if problems:
            raise ValueError("; ".join(problems))
        if len(set(self.operators)) != len(self.operators):
            raise ValueError("an operator may be listed once")
        return self


class TopicField(In):
    id: str = Field(min_length=1, max_length=100)
    name_ja: str = ""
    name_en: str = ""
    description_ja: str = ""
    description_en: str = ""
    path: str = Field(min_length=1, max_length=500)
    values: list[FieldValue] = Field(default_factory=list, max_length=10)
    site: bool = False


class TopicFieldIn(TopicField):
    values: list[FieldValueIn] = Field(default_factory=list, max_length=10)  # type: ignore[assignment]  # narrower on input


class TemplateVariable(In):
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    path: str = Field(min_length=1, max_length=500)
    description: str = ""


class MetricRuleIn(In):
    metric_name: str = Field(min_length=1, max_length=100)
    mode: Literal["ABSOLUTE", "DELTA"] = "ABSOLUTE"
    threshold: float = Field(allow_inf_nan=False, ge=-1e15, le=1e15)


class ControlPolicyProfile(In):
    """A topic's event-control policy: BYPASS, METRIC or SET, and its bounds (docs/concepts/event-control.md)."""

    type: Literal["BYPASS", "METRIC", "SET"] = "BYPASS"
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    rules: list[MetricRuleIn] = Field(default_factory=list, max_length=20)
    peak_hold_duration: float = Field(default=0, ge=0, le=10_080, allow_inf_nan=False)  # minutes, ≤ a week
    exit_stable_limit: int = Field(default=0, ge=0, le=10_000)
    auto_resolve_duration: float = Field(default=0, ge=0, le=43_200, allow_inf_nan=False)  # minutes, ≤ 30 days

    @model_validator(mode="after")
    def _consistent(self) -> ControlPolicyProfile:
        given = self.model_fields_set
        if self.type == "METRIC":
            if not self.rules:
                raise ValueError("a METRIC policy needs at least one rule")
            names = [r.metric_name for r in self.rules]
            if len(set(names)) != len(names):
                raise ValueError("each metric_name may appear in one rule only")
            if any(r.mode == "DELTA" and r.threshold <= 0 for r in self.rules):
                raise ValueError("a DELTA rule's threshold must be greater than 0")
        elif self.type == "SET":
            if extra := sorted(given & {"rules", "peak_hold_duration", "exit_stable_limit"}):
                raise ValueError(f"a SET policy uses only auto_resolve_duration and status, not {extra}")
        elif extra := sorted(given - {"type", "status"}):
            raise ValueError(f"a BYPASS policy takes no {extra}")
        return self


class TopicIn(In):
    key: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    name_ja: str = Field(default="", max_length=500)
    name_en: str = Field(default="", max_length=500)
    description_ja: str = Field(default="", max_length=5000)
    description_en: str = Field(default="", max_length=5000)
    access_scope: Literal["private", "restricted", "public"] = "private"
    share_with_partner_orgs: bool = False
    share_with_license_subscribers: bool = False
    share_with_allowed_orgs: bool = False
    share_with_sibling_orgs: bool = False
    allowed_organization_ids: list[str] = Field(default_factory=list, max_length=1000)
    fields: list[TopicFieldIn] = Field(default_factory=list, max_length=200)
    template_variables: list[TemplateVariable] = Field(default_factory=list, max_length=100)
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    control_policy_profile: ControlPolicyProfile | None = None

    @field_validator("key")
    @classmethod
    def _not_an_id(cls, value: str) -> str:
        # A key may stand where an id does in paths, so it must never look like one.
        if value.startswith("wtp_"):
            raise ValueError("a key must not start with 'wtp_' (the prefix of topic ids)")
        return value


class ControlPolicyOut(Out):
    """A stored event-control policy (checked as a ControlPolicyProfile when it was saved)."""

    type: Literal["BYPASS", "METRIC", "SET"]
    status: Literal["ACTIVE", "INACTIVE"]
    rules: list[MetricRuleIn]
    peak_hold_duration: float
    exit_stable_limit: int
    auto_resolve_duration: float


class SharedTopicOut(Out):
    """A topic as an organization it is shared with sees it."""

    id: str
    organization_id: str
    key: str
    status: Literal["ACTIVE", "INACTIVE"]
    created_at: Timestamp
    name_ja: str
    name_en: str
    description_ja: str
    description_en: str
    access_scope: Literal["private", "restricted", "public"]
    fields: list[TopicField]
    template_variables: list[TemplateVariable]
    control_policy_profile: ControlPolicyOut | None = None


class TopicOut(SharedTopicOut):
    share_with_partner_orgs: bool
    share_with_license_subscribers: bool
    share_with_allowed_orgs: bool
    share_with_sibling_orgs: bool
    allowed_organization_ids: list[str]


class ControlStateOut(Out):
    partition_key: str
    status: Literal["ACTUAL", "DRILL", "TEST"]
    policy_type: Literal["BYPASS", "METRIC", "SET"]
    episode_open: bool
    peak: dict[str, Any]
    last_values: dict[str, Any]
    stable_count: int
    set_members: list[Any]
    last_decision: str | None
    auto_resolve_at: Timestamp | None
    updated_at: Timestamp | None


class TopicPatch(In):
    """Fields a PATCH may change (the key is fixed: paths and keys of publishers use it)."""

    name_ja: str = omittable(max_length=500)
    name_en: str = omittable(max_length=500)
    description_ja: str = omittable(max_length=5000)
    description_en: str = omittable(max_length=5000)
    access_scope: Literal["private", "restricted", "public"] = omittable()
    share_with_partner_orgs: bool = omittable()
    share_with_license_subscribers: bool = omittable()
    share_with_allowed_orgs: bool = omittable()
    share_with_sibling_orgs: bool = omittable()
    allowed_organization_ids: list[str] = omittable(max_length=1000)
    fields: list[TopicFieldIn] = omittable(max_length=200)
    template_variables: list[TemplateVariable] = omittable(max_length=100)
    status: Literal["ACTIVE", "INACTIVE"] = omittable()
    control_policy_profile: ControlPolicyProfile | None = Field(default=None, description="null removes the policy")
