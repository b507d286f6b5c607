"""The API's span of a publish request (:class:`PublishSpan`): a small record with its ids, W3C headers
and encoded OTLP fields, current in its task from its start to its end, handed to a sink when it ends
(the API's span_batcher.SpanBatcher). Made and named by tracing.py (``server_span``, ``publish_span``),
which also makes new traces' spans ahead."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from random import getrandbits
from types import TracebackType
from typing import Any

from app.observability import span_export
from app.observability.trace_context import HEADER, Parent


def _span_id() -> int:
    """A random span id (never all zero)."""
    span_id = getrandbits(64)
    while not span_id:  # all zero is invalid (W3C)
        span_id = getrandbits(64)
    return span_id


def _drop(span: PublishSpan) -> None:
    """The sink without an exporter (tests that look at the span only)."""


_sink: Callable[[PublishSpan], None] = _drop


def set_sink(sink: Callable[[PublishSpan], None] | None) -> None:
    """Where finished publish spans go (the API's SpanBatcher; a list in tests); None: nowhere."""
    global _sink
    _sink = sink if sink is not None else _drop


class PublishSpan:
    """The API's span of one publish request (single or batch): a SERVER span continuing the
    caller's trace (if any), current in its task from :meth:`start` to :meth:`end` (its headers are
    what :func:`publish_headers` gives), its trace id bound to the log lines. Exported as the SDK
    would export its span (same ids, kind, attributes, trace state, resource and scope), but
    without the SDK's per-span machinery: ids drawn as its RandomIdGenerator draws them,
    attributes set as they are, and the finished span handed to the sink
    (app/observability/span_export.py) -- the cost a publish carries with every publish traced
    (``make bench``, section ``tracing``).

    Its outcome follows OpenTelemetry's HTTP conventions for a server span: the response's status
    code as ``http.response.status_code``, an error status only for a 5xx, described by the error's
    type and the message the caller got (never the request's content). A request refused for its
    credentials (401) is not exported: nobody unauthenticated writes spans into a trace."""

    __slots__ = (
        "attributes",
        "common",
        "encoded_common",
        "end_ns",
        "error",
        "flags",
        "headers",
        "ids",
        "name",
        "parent_span_id",
        "start_ns",
        "trace_state",
    )

    def __init__(
        self,
        name: str,
        common: tuple[tuple[str, Any], ...],
        parent: Parent | None,
        encoded_common: bytes | None = None,
    ) -> None:
        """A span starting now, continuing ``parent`` or a new trace; ``common``: the attributes it
        starts with, shared by many spans, encoded (``encoded_common``, span_export.common_fields)
        once. The API's publishes take theirs made ahead (:func:`server_span`)."""
        if parent is None:
            trace_id = getrandbits(128)
            while not trace_id:  # all zero is invalid (W3C)
                trace_id = getrandbits(128)
            self.identify(trace_id, _span_id(), 0, 1, "")  # sampled
        else:
            trace_id, parent_span_id, flags, state = parent
            self.identify(trace_id, _span_id(), parent_span_id, flags, state)
        self.name, self.common, self.encoded_common = name, common, encoded_common
        self.start_ns = time.time_ns()

    def identify(self, trace_id: int, span_id: int, parent_span_id: int, flags: int, trace_state: str) -> None:
        """Its ids and trace, with the record headers and encoded fields that carry them; no
        attribute set, not ended."""
        self.parent_span_id = parent_span_id
        self.flags, self.trace_state = flags, trace_state
        self.ids = span_export.encoded_ids(trace_id, span_id, trace_state, parent_span_id)
        headers: tuple[tuple[str, bytes], ...] = ((HEADER, b"00-%032x-%016x-%02x" % (trace_id, span_id, flags)),)
        if trace_state:
            headers += (("tracestate", trace_state.encode("latin-1")),)
        self.headers = headers
        self.attributes: dict[str, Any] = {}  # set after it starts
        self.error: tuple[str, str] | None = None
        self.end_ns = 0

    @property
    def trace_id(self) -> int:
        """Its trace id, read from its encoded ids."""
        return int.from_bytes(self.ids[span_export.TRACE_ID_AT])

    @property
    def span_id(self) -> int:
        """Its span id, read from its encoded ids."""
        return int.from_bytes(self.ids[span_export.SPAN_ID_AT])

    def link(self, caller: Parent) -> None:
        """Record a link to the caller's span (its trace id and span id, as the SDK's encoder writes a
        remote link), in a span that starts a trace of ours; before it ends."""
        trace_id, span_id, _flags, _state = caller
        self.ids += span_export.link_field(trace_id, span_id)

    def start(self) -> PublishSpan:
        """Make it the current publish span of this task (its record headers) and the trace of the
        log lines (a caller's unsampled trace too: the lines name the caller's trace)."""
        current.set(self)
        return self

    def end(self, status: int, error: tuple[str, str] | None = None) -> None:
        """End it with the response's ``status``; ``error``: the type and public message of what
        failed, recorded for a 5xx."""
        self.end_ns = time.time_ns()
        self.attributes["http.response.status_code"] = status
        if status >= 500:
            self.error = error or ("Error", f"status {status}")
        if self.flags & 1 and status != 401:  # a caller's unsampled trace is continued, not recorded
            _sink(self)

    def __enter__(self) -> PublishSpan:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None:
            self.end(200)
        else:  # only its type: an exception's text may hold the request's content
            self.end(500, (kind.__qualname__, "internal error"))

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def is_recording(self) -> bool:
        return bool(self.flags & 1) and not self.end_ns

    def get_span_context(self) -> Any:
        from opentelemetry.trace import SpanContext, TraceFlags, TraceState

        state = TraceState.from_header([self.trace_state]) if self.trace_state else None
        return SpanContext(
            self.trace_id, self.span_id, is_remote=False, trace_flags=TraceFlags(self.flags), trace_state=state
        )


# The API's publish span of this task (PublishSpan), from its start to the request's end: its record
# headers until it ends (publish_headers), its trace id in the log lines until the request ends (the
# access line comes after the span; formatted as a line is written, not for every publish). The span
# holds no token of it: nothing refers back to this context.
current: contextvars.ContextVar[PublishSpan | None] = contextvars.ContextVar("tocsin_publish_span", default=None)
