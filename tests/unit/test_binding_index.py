"""The compiled binding index answers exactly as evaluate, for any bindings and names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.iam.binding_index import BindingIndex
from app.domain.iam.evaluation import Binding, evaluate
from app.domain.iam.resource_names import organization_name, resource_name
from app.domain.iam.roles import SYSTEM_ROLES, Role

ORGS = ["org_1", "org_12", "org_2"]
TYPES = ["incidents", "workflow_topics", "operation_books", "incidents_archive"]
TAILS = ["", "<(/.*)?$>", "<.*>", "</.*>", "<(:.*)?>"]
ROLES = {
    **SYSTEM_ROLES,
    "custom": Role("custom", "c", "", ("organization.incident:*", "organization.event:get")),
}

names = st.builds(
    lambda org, kind, ident, sub: resource_name(org, kind, ident) + sub if kind else organization_name(org),
    st.sampled_from(ORGS),
    st.sampled_from([None, *TYPES]),
    st.sampled_from(["a", "ab", "x1"]),
    st.sampled_from(["", "/events", "/forms/1"]),
)
binding_names = st.one_of(
    st.builds(lambda n, t: n + t, names, st.sampled_from(TAILS)),
    st.builds(
        lambda o, k, t: f"crn:tocsin:organizations:{o}:{k}{t}",
        st.sampled_from(ORGS),
        st.sampled_from(TYPES),
        st.sampled_from(TAILS),
    ),
    st.text(max_size=30),
)
bindings = st.lists(st.builds(Binding, binding_names, st.sampled_from([*ROLES, "missing"])), max_size=12)
permissions = st.sampled_from(
    [
        "organization.incident:get",
        "organization.incident:fullaccess",
        "organization.workflow_topic:publish",
        "organization.event:get",
        "organization.asset_item:update",  # no route names it: only the owner's every permission grants it
        "organization.incident:*",
        "bogus",
    ]
)
resources = st.one_of(
    names, st.builds(lambda o, k: f"crn:tocsin:organizations:{o}:{k}", st.sampled_from(ORGS), st.sampled_from(TYPES))
)


@settings(max_examples=1500)
@given(bindings, permissions, resources)
def test_index_grant_equals_evaluate(bound: list[Binding], permission: str, resource: str) -> None:
    assert BindingIndex(bound, ROLES).grant(permission, resource) == evaluate(bound, ROLES, permission, resource)
