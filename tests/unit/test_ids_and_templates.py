"""Ids, effect ids, publish keys and templates."""

from __future__ import annotations

import time

import pytest

import app.domain.shared.ids as ids_module
from app.domain.events.publish import state_key
from app.domain.shared.ids import effect_id, new_id, new_ids
from app.domain.shared.milliseconds import to_ms
from app.domain.workflows.workflow import action_effect_id, mode_matches, render_template


def test_new_ids_are_prefixed_and_sort_by_time() -> None:
    first = new_id("evt", now_ms=1_000)
    later = new_id("evt", now_ms=2_000)
    assert first.startswith("evt_") and len(first) == 30
    assert first < later


def test_effect_ids_are_deterministic_per_event_workflow_action_and_decision() -> None:
    assert action_effect_id("evt_1", "wfl_1", 0, "NOTIFY") == action_effect_id("evt_1", "wfl_1", 0, "NOTIFY")
    variants = {
        action_effect_id("evt_1", "wfl_1", 0, "NOTIFY"),
        action_effect_id("evt_2", "wfl_1", 0, "NOTIFY"),
        action_effect_id("evt_1", "wfl_2", 0, "NOTIFY"),
        action_effect_id("evt_1", "wfl_1", 1, "NOTIFY"),
        action_effect_id("evt_1", "wfl_1", 0, "RESOLVE"),
    }
    assert len(variants) == 5
    # Parts are separated, so shifting characters between parts changes the id.
    assert effect_id("x", "ab", "c") != effect_id("x", "a", "bc")


def test_effect_ids_keep_their_encoding() -> None:
    """Sinks dedupe on effect ids already stored: the unrolled encoding of an effect id's 128 bits
    is the generic one, and a known id stays as it was."""
    assert effect_id("act", "evt_1", "wfl_1", "0", "NOTIFY") == "act_0y43h1zpwq3qn8zgb242jnzcv7"
    for value in (0, 1, 2**127, 2**128 - 1, *(int.from_bytes(bytes([i] * 16), "big") for i in range(256))):
        assert ids_module._base32_128(value) == ids_module._base32(value, 26)


def test_publish_key_separates_status_so_drills_never_share_actual_state() -> None:
    assert state_key("org", "tp", "ACTUAL", "site-1") != state_key("org", "tp", "DRILL", "site-1")


def test_mode_rule_runs_workflows_only_for_their_own_status() -> None:
    for mode in ("ACTUAL", "DRILL", "TEST"):
        for status in ("ACTUAL", "DRILL", "TEST"):
            assert mode_matches(mode, status) is (mode == status)
    assert not mode_matches("BOGUS", "BOGUS")


def test_templates_fill_known_names_and_keep_unknown_ones() -> None:
    context = {"event": {"name": "M6"}, "data": {"site": {"id": "s1"}}, "decision": "NOTIFY"}
    assert render_template("{event.name} at {data.site.id} ({decision})", context) == "M6 at s1 (NOTIFY)"
    assert render_template("{data.missing} {nope}", context) == "{data.missing} {nope}"


def test_new_ids_in_bulk_have_the_layout_of_one_with_the_time_of_the_call() -> None:
    before = to_ms(time.time())
    ids = new_ids("evt", 1000)
    after = to_ms(time.time())
    assert len(set(ids)) == 1000
    assert all(len(i) == 30 and i.startswith("evt_") for i in ids)
    assert {i[:14] for i in ids} == {ids[0][:14]}  # one time part
    assert new_id("evt", now_ms=before)[:14] <= ids[0][:14] <= new_id("evt", now_ms=after)[:14]


def test_new_ids_in_bulk_encode_their_random_bytes_as_new_id_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk encoding (base32 of the whole read, cut every 16 characters) is new_id's digit for digit."""
    raw = bytes(range(256)) * 4  # every byte value, so every 5-bit group and letter occurs
    monkeypatch.setattr(ids_module.os, "urandom", lambda n: raw[:n])
    bulk = new_ids("evt", 100)
    assert [i[14:] for i in bulk] == [
        ids_module._base32(int.from_bytes(raw[k : k + 10], "big"), 16) for k in range(0, 1000, 10)
    ]
    assert set("".join(bulk)[4:]) <= set(ids_module._CROCKFORD + "evt_")


def test_an_id_has_the_form_of_the_ids_made_here_or_none() -> None:
    from app.domain.shared.ids import effect_id, has_id_form, new_id, new_ids

    assert has_id_form(new_id("evt"), "evt") and all(has_id_form(i, "evt") for i in new_ids("evt", 3))
    assert has_id_form(effect_id("evt", "a", "b"), "evt")
    refused = ("evt_", "evt_" + "0" * 25, "evt_" + "0" * 27, "inc_" + "0" * 26, "evt_" + "i" * 26, "EVT_" + "0" * 26)
    for value in refused:
        assert not has_id_form(value, "evt"), value
