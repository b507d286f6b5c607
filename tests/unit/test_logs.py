"""The one log format (app/observability/logs.py): both renderers, for the standard library's
records (the libraries') and structlog's own lines, each line one record that parses back."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
import structlog
from pydantic import ValidationError

from app.observability import logs
from app.settings import Settings


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _write_everything() -> None:
    """A line of each kind: a library's (with %-args), a library's exception, uvicorn's access
    line, a project line with extra fields, structlog's own line, and a batch of decision lines."""
    structlog.contextvars.bind_contextvars(request_id="req_1", organization_id="org_1")
    logging.getLogger("faust.worker").info("[^Worker]: Starting %s...", "app")
    try:
        raise RuntimeError("broken\nacross lines")
    except RuntimeError:
        logging.getLogger("aiokafka.conn").exception("Unable connect to %s", "127.0.0.1:1")
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/readyz", "1.1", 200, extra={"color_message": "x"}
    )
    logging.getLogger("app.store.retention").info("retention_purge", extra={"traces": 7, "ms": 1.5})
    logs.get_logger("tocsin.access").info("request", method="POST", status=202, ms=3.25, event_id="evt_1")
    logs.write_many(
        "streams.control",
        "decision",
        [{"event_id": "evt_1", "decision": "NOTIFY", "reason": None}, {"event_id": "evt_2", "reason": 'a "b" c'}],
    )
    logging.getLogger("streams.control").debug("not written at INFO")


@pytest.mark.parametrize("fmt", ["json", "logfmt"])
def test_every_kind_of_line_is_one_record_that_parses_back(fmt: str, restore_logging: None) -> None:
    out = io.StringIO()
    assert logs.configure(fmt, "INFO", out) == fmt
    _write_everything()
    lines = out.getvalue().splitlines()
    assert len(lines) == 7, lines  # the exception is one line, the DEBUG line is left out
    assert all(line.startswith("{") == (fmt == "json") for line in lines)
    records = [logs.parse_line(line) for line in lines]
    for record in records:
        assert list(record)[:4] == ["timestamp", "level", "logger", "event"], record
        assert record["request_id"] == "req_1" and record["organization_id"] == "org_1", record
        assert record["timestamp"].endswith("Z")
    faust, failure, access, retention, request, first, second = records
    assert (faust["logger"], faust["level"], faust["event"]) == ("faust.worker", "info", "[^Worker]: Starting app...")
    assert failure["level"] == "error" and failure["event"] == "Unable connect to 127.0.0.1:1"
    assert failure["exception"].startswith("Traceback") and "RuntimeError: broken\nacross lines" in failure["exception"]
    assert access["event"] == '127.0.0.1:5 - "GET /readyz HTTP/1.1" 200' and "color_message" not in access
    assert str(retention["traces"]) == "7" and str(retention["ms"]) == "1.5"
    assert request["logger"] == "tocsin.access" and str(request["status"]) == "202"
    assert request["event_id"] == "evt_1"
    assert (first["logger"], first["event"], first["event_id"], first["decision"]) == (
        "streams.control",
        "decision",
        "evt_1",
        "NOTIFY",
    )
    assert second["reason"] == 'a "b" c'
    if fmt == "json":  # JSON keeps the types
        assert retention["traces"] == 7 and request["ms"] == 3.25 and first["reason"] is None


def test_the_level_setting_filters_both_kinds_of_line(restore_logging: None) -> None:
    out = io.StringIO()
    logs.configure("json", "WARNING", out)
    logging.getLogger("faust").info("hidden")
    logs.get_logger("tocsin.access").info("hidden")
    logs.write_many("streams.control", "decision", [{"event_id": "evt_1"}])
    logs.get_logger("tocsin.access").warning("shown")
    logging.getLogger("faust").warning("shown too")
    assert [logs.parse_line(line)["event"] for line in out.getvalue().splitlines()] == ["shown", "shown too"]


def test_auto_is_logfmt_on_a_terminal_and_json_elsewhere(restore_logging: None) -> None:
    assert logs.configure("auto", "INFO", _Terminal()) == "logfmt"
    assert logs.configure("auto", "INFO", io.StringIO()) == "json"
    assert logs.choose_format("json", _Terminal()) == "json"
    assert logs.choose_format("logfmt", io.StringIO()) == "logfmt"


def test_python_warnings_are_records_too(restore_logging: None) -> None:
    import warnings

    out = io.StringIO()
    logs.configure("json", "INFO", out)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # not the test run's "error"
        warnings.warn("old api", UserWarning, stacklevel=1)
    (record,) = [logs.parse_line(line) for line in out.getvalue().splitlines()]
    assert record["logger"] == "py.warnings" and "old api" in record["event"]


def test_settings_take_any_case_and_refuse_unknown_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOCSIN_LOG_FORMAT", "LogFmt")
    monkeypatch.setenv("TOCSIN_LOG_LEVEL", "debug")
    settings = Settings()
    assert (settings.log_format, settings.log_level) == ("logfmt", "DEBUG")
    monkeypatch.setenv("TOCSIN_LOG_FORMAT", "xml")
    with pytest.raises(ValidationError):
        Settings()


@pytest.mark.parametrize(
    "line",
    ["", "just words", 'k="unterminated', "[1, 2]"],
)
def test_a_line_that_is_not_a_record_is_refused(line: str) -> None:
    with pytest.raises(ValueError):
        logs.parse_line(line)


def test_logfmt_values_round_trip() -> None:
    out = io.StringIO()
    values: dict[str, Any] = {"plain": "a.b:c/d", "spaced": "two words", "quoted": 'say "hi"', "eq": "a=b"}
    out.write(str(logs.renderer("logfmt")(None, "info", {"event": "e", **values})))
    assert logs.parse_line(out.getvalue()) == {"event": "e", **values}


# What a caller controls reaches the log (a request path, a partition key): terminal escapes (ESC,
# BEL), C1 controls (NEL) and Unicode line separators must not reach the output raw, where they
# would retitle or clear an operator's terminal or start a forged line for a reader that splits on
# them (an outside attacker's finding: unauthenticated, through the request line).
HOSTILE = "/x\x1b]0;PWNED\x07\x1b[2J\u2028level=error event=FORGED\x85\r\x00\x7f\u2029end"
UNSAFE = set(map(chr, [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]))


@pytest.mark.parametrize("fmt", ["json", "logfmt"])
def test_caller_controlled_values_cannot_forge_lines_or_reach_the_terminal(fmt: str, restore_logging: None) -> None:
    out = io.StringIO()
    logs.configure(fmt, "INFO", out)
    logs.get_logger("tocsin.access").info("request", path=HOSTILE)
    logging.getLogger("faust.worker").info("key %s", HOSTILE, extra={"partition_key": HOSTILE})
    logs.write_many("streams.control", "decision", [{"partition_key": HOSTILE}])
    text = out.getvalue()
    assert text.count("\n") == 3 and text.endswith("\n")
    assert not UNSAFE & set(text.replace("\n", "")), sorted(UNSAFE & set(text.replace("\n", "")))
    assert len(text.splitlines()) == 3  # str.splitlines breaks on NEL and U+2028 too
    records = [logs.parse_line(line) for line in text.splitlines()]
    assert all(record["level"] == "info" for record in records)
    if fmt == "json":  # escaped, not dropped: the value reads back whole
        assert [records[0]["path"], records[1]["partition_key"], records[2]["partition_key"]] == [HOSTILE] * 3
