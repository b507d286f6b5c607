"""Identity and IAM: resource names, permissions, roles, the IAM decision and each principal's
compiled bindings, topic sharing, the organization authentication policy, static access tokens,
and the federated credentials' subject filters and attribute conditions."""
