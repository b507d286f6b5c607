"""The tests' log readers (tests/support/logs.py, scaling.py) on records in both formats: the
teardown check of the workers' ERROR lines must keep failing on one, whatever the format."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from app.observability import logs
from tests.support.scaling import decision_lines, error_lines


@pytest.mark.parametrize("fmt", ["json", "logfmt"])
def test_error_records_are_found_and_allowed_ones_are_not(fmt: str, tmp_path: Path, restore_logging: None) -> None:
    out = io.StringIO()
    logs.configure(fmt, "INFO", out)
    logging.getLogger("faust.tables").info("Stream has not started processing")
    logging.getLogger("streams.control").error("control: a batch of 3 records failed")
    try:
        raise ValueError("bad\nrecord")
    except ValueError:
        logging.getLogger("faust.agents").exception("Agent error")
    logs.write_many("streams.control", "decision", [{"event_id": "evt_1", "decision": "NOTIFY"}])
    log = tmp_path / "worker-1.log"
    log.write_text(out.getvalue() + "Traceback (most recent call last):\n  printed by no logger\n")
    found = error_lines([log])
    assert len(found) == 3, found  # two ERROR records and the stray traceback line, not its indented tail
    assert any("Agent error" in line for line in found) and any("Traceback" in line for line in found)
    assert len(error_lines([log], allowed=[r"a batch of \d+ records failed", "Agent error", "Traceback"])) == 0
    assert decision_lines([log]) == {"evt_1": ["NOTIFY"]}
