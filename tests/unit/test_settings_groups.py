"""Settings groups (app/settings/): each reads the same TOCSIN_* variables as the flat settings did,
and builds what its users take in one method."""

from __future__ import annotations

import pytest

from app.domain.events.limits import ConfigLimits, PublishLimits
from app.domain.shared.retry_schedule import RetrySchedule
from app.settings import Settings
from app.settings.delivery import EmailConfig, WebhookConfig


def test_a_group_reads_its_variables_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOCSIN_RETRY_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("TOCSIN_SMTP_FROM", "alerts@example.com")
    monkeypatch.setenv("TOCSIN_MAX_PUBLISH_DATA_DEPTH", "7")
    monkeypatch.setenv("TOCSIN_LOOPBACK_TARGETS", "127.0.0.1:9000")
    monkeypatch.setenv("TOCSIN_EXCHANGE_BURST", "9")
    settings = Settings()
    assert settings.retry.max_attempts == 3
    assert settings.smtp.sender == "alerts@example.com"
    assert settings.limits.publish_data_depth == 7
    assert settings.outbound.loopback_ports == frozenset({9000})
    assert settings.exchange.burst == 9


def test_a_group_given_by_its_variables_names_is_built_from_them() -> None:
    """What a process's environment holds, less TOCSIN_ and lower-cased (the tests' stacks), or keywords."""
    settings = Settings.model_validate({"smtp_port": "2525", "kafka_sasl_mechanism": None, "retry_jitter": "0"})
    assert settings.smtp.port == 2525 and settings.retry.jitter == 0
    assert Settings(publish_transaction_lanes=2).transactions.publish_transaction_lanes == 2


def test_each_group_builds_what_its_users_take() -> None:
    settings = Settings(retry_base_seconds=2, smtp_host="relay", webhook_timeout_seconds=3, max_workflow_actions=4)
    assert settings.retry.schedule() == RetrySchedule(base_s=2.0, factor=6.0, max_delay_s=36_000.0)
    assert settings.limits.publish_limits() == PublishLimits()
    assert settings.limits.config_limits() == ConfigLimits(workflow_actions=4)
    assert settings.smtp.config() == EmailConfig(host="relay", port=8025, sender="tocsin@localhost", timeout_s=15.0)
    assert settings.outbound.webhook_config() == WebhookConfig(timeout_s=3.0)
