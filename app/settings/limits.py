"""``TOCSIN_MAX_*``: the input limits of the API, as one group that builds the domain's limits.

Beyond a limit the API answers 422 VAL-001 with the failing field in details (413 VAL-002 for a body);
the checks themselves are app/domain/events/limits.py.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.events.limits import ConfigLimits, PublishLimits


class InputLimits(BaseSettings):
    """The largest request bodies, publishes, batches, workflows and bindings the API accepts."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_MAX_", extra="ignore")

    body_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        description=(
            "the largest request body on every route but the batch publish (its own "
            "TOCSIN_MAX_PUBLISH_BATCH_BYTES), chunked included (else 413 VAL-002; the token exchange and "
            "/v2/enqueue refuse it in their own formats, 400); each request of a batch is also within it"
        ),
    )
    publish_data_bytes: int = Field(
        default=64 * 1024,
        ge=2,
        le=16 * 1024 * 1024,
        description="a publish's `data` as compact JSON (else 422, field `data`)",
    )
    publish_data_depth: int = Field(
        default=32,
        ge=1,
        le=150,  # below the JSON parser's own 200
        description=(
            "nesting of `data` and `notification.data` (else 422 with the path); other JSON "
            "bodies may nest one level more"
        ),
    )
    publish_string_chars: int = Field(
        default=16_384,
        ge=1,
        le=1024 * 1024,
        description="any string or key inside `data` / `notification.data` (else 422 with the path)",
    )
    publish_array_items: int = Field(
        default=1000,
        ge=1,
        le=10_000,
        description=("arrays in `data`, `event_control.areas`, `attributes.target_organization_ids` (else 422)"),
    )
    publish_metrics: int = Field(
        default=100, ge=1, le=1000, description="entries of `event_control.metrics` (else 422)"
    )
    # A batch publish (POST .../publish:batch): at most this many publish requests, and a body of at
    # most this many bytes (each request still within body_bytes): 422 / 413 beyond (docs/api.md).
    publish_batch_items: int = Field(
        default=1000, ge=1, le=10_000, description="a batch publish's most requests (else 422)"
    )
    publish_batch_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description=(
            "a batch publish's largest body, declared or chunked (else 413 VAL-002); each request also "
            "within TOCSIN_MAX_BODY_BYTES"
        ),
    )
    workflow_actions: int = Field(
        default=20, ge=1, le=100, description="actions per workflow (else 422, field `actions`)"
    )
    filter_conditions: int = Field(
        default=100, ge=1, le=100, description="conditions in a workflow filter (else 422 with the filter path)"
    )
    filter_values: int = Field(
        default=1000, ge=1, le=1000, description="values in a filter's IN / NOT IN list (else 422 with the filter path)"
    )
    bindings_per_subject: int = Field(
        default=200, ge=1, le=10_000, description="bindings in one `PUT …/iam` (else 422, field `bindings`)"
    )
    bindings_per_organization: int = Field(
        default=10_000, ge=1, description="resource bindings in an organization (else 422, field `bindings`)"
    )
    workflows_per_organization: int = Field(default=1000, ge=1, description="workflows per organization (else 422)")
    workflows_per_topic: int = Field(
        default=100,
        ge=1,
        description=(
            "an organization's own workflows on one topic (else 422); receivers of a shared topic count their own"
        ),
    )

    def publish_limits(self) -> PublishLimits:
        """What one publish request may hold."""
        return PublishLimits(
            data_bytes=self.publish_data_bytes,
            data_depth=self.publish_data_depth,
            string_chars=self.publish_string_chars,
            array_items=self.publish_array_items,
            metrics=self.publish_metrics,
        )

    def config_limits(self) -> ConfigLimits:
        """What the configuration of one organization may hold."""
        return ConfigLimits(
            workflow_actions=self.workflow_actions,
            filter_conditions=self.filter_conditions,
            filter_values=self.filter_values,
            bindings_per_subject=self.bindings_per_subject,
            bindings_per_organization=self.bindings_per_organization,
            workflows_per_organization=self.workflows_per_organization,
            workflows_per_topic=self.workflows_per_topic,
        )
