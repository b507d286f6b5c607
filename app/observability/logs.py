"""One structured log format for the API, the worker and the CLI (structlog).

Every line is one record: JSON (one object per line) or logfmt (``key=value``), chosen by
``TOCSIN_LOG_FORMAT`` (``auto``: logfmt on a terminal, JSON otherwise: a container, a file, a
pipe). Each has ``timestamp`` (UTC, ISO 8601), ``level``, ``logger`` and ``event`` (the message),
then its fields; an exception is one field (``exception``, the traceback with its line breaks
escaped), never a block of lines.

- The project's own lines go through the standard library with their fields in ``extra=``
  (:class:`structlog.stdlib.ExtraAdder` renders them), or, on the hot paths (the access line,
  the decision lines), through :func:`get_logger` (structlog's own logger: no ``LogRecord``).
- The libraries' lines (Faust, mode, aiokafka, uvicorn, SQLAlchemy...) use the standard library;
  one :class:`structlog.stdlib.ProcessorFormatter` on the root handler renders them the same way.
- ``request_id``, ``event_id``, ``organization_id`` and ``trace_id`` are bound with
  :func:`structlog.contextvars.bind_contextvars` (in the API's request, in the worker per event
  and per delivery) and appear on every line written meanwhile, whichever logger wrote it.

Callers log only what is safe at INFO: ids, names, codes, counts, timings — never a token, a
secret or an event body.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TextIO, cast

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from app.observability import tracing

Format = Literal["json", "logfmt"]

# logfmt: these first, in this order; then the fields in the order they were given
KEY_ORDER = ["timestamp", "level", "logger", "event"]

# What the standard library's records carry besides the message: never rendered as fields
# (uvicorn's ``color_message`` is its message again, with terminal colours).
_RECORD_ATTRS = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "color_message",
}
# Library loggers whose INFO lines say nothing an operator needs: alembic lists its plugins at
# import; httpx logs every request (``tocsin run`` polls the API's readiness with it).
QUIET_LOGGERS = {"alembic.runtime.plugins": logging.WARNING, "httpx": logging.WARNING}


def choose_format(setting: str, stream: TextIO) -> Format:
    """``json`` or ``logfmt`` for a ``TOCSIN_LOG_FORMAT`` value (``auto``: logfmt on a terminal)."""
    if setting in ("json", "logfmt"):
        return setting  # type: ignore[return-value]
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: not a terminal
        tty = False
    return "logfmt" if tty else "json"


def _json_dumps(event_dict: Any, **_kw: Any) -> str:
    """The object with ``timestamp``, ``level``, ``logger`` and ``event`` first, as logfmt has them."""
    ordered = {key: event_dict[key] for key in KEY_ORDER if key in event_dict}
    ordered.update(event_dict)
    return orjson.dumps(ordered, default=str).decode()


# Control characters (C0, DEL, C1) and Unicode line separators: what a caller sends (a request
# path, a partition key) must never reach the output raw, where an escape sequence would retitle
# or clear an operator's terminal and a line separator would start a forged line for a reader that
# splits on it. orjson escapes C0 only; structlog's logfmt renderer only line breaks and quotes.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"  # inside a JSON string, the same character read back


def renderer(fmt: Format) -> Processor:
    """The processor that turns an event dict into the line (without its line break), every
    control character and line separator escaped as ``\\uXXXX``."""
    if fmt == "json":
        render: Processor = structlog.processors.JSONRenderer(serializer=_json_dumps)
    else:
        render = structlog.processors.LogfmtRenderer(key_order=KEY_ORDER, drop_missing=True)

    def safe(logger: WrappedLogger, method: str, event_dict: EventDict) -> str:
        line = cast(str, render(logger, method, event_dict))  # both renderers give a str
        return _UNSAFE.sub(_escape, line) if _UNSAFE.search(line) else line

    return safe


def _level_name(_logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
    """``level`` in lower case for both kinds of line (``warn`` written as ``warning``)."""
    level = event_dict.get("level")
    if isinstance(level, str):
        event_dict["level"] = "warning" if level in ("warn", "WARN") else level.lower()
    return event_dict


def _extra_fields(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """The ``extra=`` fields of a standard library record (structlog's ExtraAdder, without the
    attributes the record always has, and never overwriting the line's own keys)."""
    record: logging.LogRecord | None = event_dict.get("_record")
    if record is not None:
        for key, value in record.__dict__.items():
            if key not in _RECORD_ATTRS and not key.startswith("_") and key not in event_dict:
                event_dict[key] = value
    return event_dict


def _trace_id(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """The trace of the API's publish span current in this task (tracing.log_trace_id), unless the
    line names one already (the worker binds its spans' ids)."""
    if "trace_id" not in event_dict:
        trace_id = tracing.log_trace_id()
        if trace_id is not None:
            event_dict["trace_id"] = trace_id
    return event_dict


_TIMESTAMP = structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp")

# Shared by both kinds of line, before the exception and the renderer.
_COMMON: list[Processor] = [structlog.contextvars.merge_contextvars, _trace_id, _TIMESTAMP]

_configured: dict[str, Any] = {}


def formatter(fmt: Format) -> structlog.stdlib.ProcessorFormatter:
    """The formatter of the standard library's records (the libraries' and the project's own)."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            *_COMMON,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            _extra_fields,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _level_name,
            structlog.processors.format_exc_info,
            renderer(fmt),
        ],
    )


def native_processors(fmt: Format) -> list[Processor]:
    """The chain of structlog's own loggers (:func:`get_logger`)."""
    return [
        *_COMMON,
        structlog.processors.add_log_level,
        _level_name,
        structlog.processors.format_exc_info,
        renderer(fmt),
    ]


def configure(log_format: str = "auto", level: str = "INFO", stream: TextIO | None = None) -> Format:
    """Send every line of the process, in one format, to ``stream`` (stderr): a root handler for
    the standard library's records and structlog's own loggers. Called once by each command before
    anything logs; calling it again replaces the previous set-up. The format chosen."""
    out = stream if stream is not None else sys.stderr
    fmt = choose_format(log_format, out)
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise ValueError(f"unknown log level {level!r}")
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(number)
    logging.captureWarnings(True)  # Python's warnings too, as records of the ``py.warnings`` logger
    for name, quiet in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(max(quiet, number))
    # uvicorn's loggers keep their own handlers when it configures them; here they go to the root
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        named = logging.getLogger(name)
        named.handlers.clear()
        named.propagate = True
    structlog.configure(
        processors=native_processors(fmt),
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.WriteLoggerFactory(file=out),
        cache_logger_on_first_use=True,
    )
    generation = _configured.get("generation", 0) + 1
    _configured.update(
        format=fmt, stream=out, level=number, chain=native_processors(fmt), generation=generation, handler=handler
    )
    return fmt


class NamedLogger:
    """structlog's own logger, its lines named (``logger`` field) like the standard library's; made
    on first use after each :func:`configure`, so a module may take one at import time."""

    __slots__ = ("_bound", "_generation", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._bound: Any = None
        self._generation = -1

    def _logger(self) -> Any:
        generation = _configured.get("generation", 0)
        if self._generation != generation:
            self._bound, self._generation = structlog.get_logger().bind(logger=self.name), generation
        return self._bound

    def debug(self, event: str, **fields: Any) -> None:
        self._logger().debug(event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self._logger().info(event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._logger().warning(event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._logger().error(event, **fields)


def get_logger(name: str) -> NamedLogger:
    """structlog's own logger (no ``LogRecord``: for the hot paths), its lines named ``name``."""
    return NamedLogger(name)


def enabled(level: int = logging.INFO) -> bool:
    """Whether lines of ``level`` are written (the configured level; INFO before :func:`configure`)."""
    configured: int = _configured.get("level", logging.INFO)
    return level >= configured


def write_many(name: str, event: str, rows: Iterable[Mapping[str, Any]]) -> None:
    """One INFO line per row (``event`` with the row's fields), all written with one ``write``:
    the control agent's decision lines, one per decided event, cost one call per batch (a logging
    call per line cost more than the decision itself when it was measured)."""
    if not enabled(logging.INFO):
        return
    chain: list[Processor] | None = _configured.get("chain")
    if chain is None:  # not configured (a library use, a test): the standard library's logger
        named = logging.getLogger(name)
        for row in rows:
            named.info(event, extra=dict(row))
        return
    # What every line shares (the task's context, its trace, the time, the level) is made once; each
    # row is then only rendered, its own fields winning over the shared ones as they would in the chain.
    shared: Any = {"logger": name, "event": event}
    for processor in chain[:-1]:
        shared = processor(None, "info", shared)
    render = chain[-1]
    lines = [cast(str, render(None, "info", {**shared, **row})) for row in rows]  # the renderer gives a str
    if lines:
        out: TextIO = _configured["stream"]
        handler: logging.Handler = _configured["handler"]
        handler.acquire()  # not between the lines of a library's record written from another thread
        try:
            out.write("\n".join(lines) + "\n")
            out.flush()
        finally:
            handler.release()


def parse_line(line: str) -> dict[str, Any]:
    """One rendered line back into its fields (JSON or logfmt); ``ValueError`` when it is neither.
    For tests and tools that read the logs."""
    text = line.rstrip("\n")
    if text.startswith("{"):
        value = orjson.loads(text)
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        return value
    return _parse_logfmt(text)


def _parse_logfmt(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            break
        start = i
        while i < n and text[i] not in "= ":
            i += 1
        key = text[start:i]
        if not key or i >= n or text[i] != "=":
            raise ValueError(f"not logfmt at {start}: {text[start : start + 40]!r}")
        i += 1
        if i < n and text[i] == '"':
            i += 1
            chars = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    nxt = text[i + 1]
                    chars.append("\n" if nxt == "n" else nxt)
                    i += 2
                else:
                    chars.append(text[i])
                    i += 1
            if i >= n:
                raise ValueError("unterminated quoted value")
            i += 1
            out[key] = "".join(chars)
        else:
            start = i
            while i < n and text[i] != " ":
                i += 1
            out[key] = text[start:i].replace("\\n", "\n")
    if not out:
        raise ValueError("empty line")
    return out
