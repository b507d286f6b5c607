"""The start-up partition check's message, the topics it covers, and the value a moved key gets
(tests/e2e/test_partitions.py runs them against the broker)."""

from __future__ import annotations

from app.domain.events.control import ControlState
from app.domain.pipeline import StoredControl
from app.kafka import topics
from app.kafka.topics import keyed_topics, mismatch_message, topic_specs
from app.settings import Settings
from cli.partitions import relocated
from tables.codecs import StoredKey, dump_control, dump_key, load_control, load_key

SETTINGS = Settings(topic_prefix="p.", worker_id="w", publish_partitions=12)


def test_the_default_lets_a_dozen_workers_share_the_work() -> None:
    assert Settings.model_fields["publish_partitions"].default == 12


def test_the_check_covers_every_topic_created_with_the_setting() -> None:
    keyed = {s.name for s in topic_specs(SETTINGS) if s.num_partitions == SETTINGS.publish_partitions}
    assert set(keyed_topics(SETTINGS)) == keyed
    assert {"p.publish", "p.idempotency", "p.w.control-state-changelog", "p.w.idempotency-changelog"} <= keyed
    assert "p.config-changes" not in keyed and "p.dead-letter" not in keyed


def test_matching_counts_pass() -> None:
    assert mismatch_message(SETTINGS, dict.fromkeys(keyed_topics(SETTINGS), 12)) is None
    assert mismatch_message(SETTINGS, {}) is None  # nothing created yet


def test_fewer_partitions_than_the_setting_name_both_ways_out() -> None:
    message = mismatch_message(SETTINGS, {"p.publish": 4, "p.w.control-state-changelog": 4})
    assert message is not None
    assert "TOCSIN_PUBLISH_PARTITIONS is 12" in message
    assert "p.publish has 4" in message and "p.w.control-state-changelog has 4" in message
    assert "set TOCSIN_PUBLISH_PARTITIONS=4" in message and "`tocsin partitions --count 12`" in message


def test_more_partitions_than_the_setting_cannot_be_grown_down() -> None:
    message = mismatch_message(SETTINGS, {"p.publish": 16})
    assert message is not None and "set TOCSIN_PUBLISH_PARTITIONS=16" in message
    assert "cannot take partitions away" in message and "tocsin partitions" not in message


def test_topics_that_disagree_point_to_finishing_the_grow() -> None:
    message = mismatch_message(SETTINGS, {"p.publish": 12, "p.traces": 4, "p.idempotency": 8})
    assert message is not None and "disagree" in message and "`tocsin partitions --count 12` again" in message
    assert "p.publish" not in message.split("(")[1].split(")")[0]  # only those that differ are listed


def test_a_moved_value_keeps_everything_but_its_source_offset() -> None:
    state = ControlState(
        policy_type="METRIC",
        episode_open=True,
        episode_seq=3,
        peaks=(("level", 15.0, 1000),),
        last_values=(("level", 3.0),),
        stable_count=2,
        set_members=(),
        last_decision="SUPPRESS",
        last_notify_ms=1000,
        episode_workflows=("wf_1",),
    )
    stored = StoredControl(state, offset=5000, seq=7, due_ms=None)
    moved = load_control(relocated(topics.CONTROL_CHANGELOG, dump_control(stored)))
    assert moved == StoredControl(state, offset=-1, seq=7, due_ms=None)

    key = StoredKey("evt_1", 1234, 77)
    assert load_key(relocated(topics.IDEMPOTENCY_CHANGELOG, dump_key(key))) == StoredKey("evt_1", 1234, -1)
