"""The OTLP export of the API's ``publish`` spans (app/observability/tracing.py), at a cost a
publish can carry with every publish traced.

The SDK's path cost a traced publish about 35 us of the API's CPU, a third of the publish itself
(``make bench``, section ``tracing``, the in-process figures): an SDK span started as the current
span (~17 us: sampler, attribute cleaning, locks, the processor's queue) and the OTLP encoder, which
builds each span's protobuf message from Python objects field by field (~18 us with its HTTP
share). Here the API's span is a small record (tracing.PublishSpan, ~3 us with its header) that
:meth:`SpanBatcher.append` puts on a deque (thread-safe without a lock of ours); a daemon thread
takes batches of up to ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` (default here 2048) every
``OTEL_BSP_SCHEDULE_DELAY`` ms (or as soon as a batch is full), encodes them into one
``ExportTraceServiceRequest`` with opentelemetry-proto's messages (each span added in place to
the repeated field, what spans share merged in from one serialized copy: :func:`encode`), and
posts it with the OTLP/HTTP exporter's own client (its endpoint, headers, TLS, compression,
timeout and retries from the standard ``OTEL_EXPORTER_OTLP_*`` variables): ~3.5 us a span. Beyond
``OTEL_BSP_MAX_QUEUE_SIZE`` (default here 8192) spans waiting, new ones are dropped and counted,
as the SDK's processor does; a failed export is logged and its spans dropped (tracing never holds
up a publish).

The export runs in the API's process, on its GIL: a separate exporter process fed through a pipe
would take the ~3.5 us a span off the API's CPU but not off the machine's, for a process to start,
watch and restart; not needed for the 10 % target (the figures in README.md, Operations, Tracing).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

log = logging.getLogger(__name__)

STATUS_CODE_ERROR = 2  # opentelemetry.proto.trace.v1.Status.StatusCode
# The span's flags as the SDK's OTLP encoder writes them: "is the parent remote" is known, and set
# when the span continues a caller's traceparent.
FLAGS_HAS_IS_REMOTE = 0x100
FLAGS_IS_REMOTE = 0x200


class ExportedSpan(Protocol):
    """What the encoder reads of a finished span (tracing.PublishSpan)."""

    trace_id: int
    span_id: int
    parent_span_id: int  # 0: a root span
    flags: int  # W3C trace flags
    name: str
    start_ns: int
    end_ns: int
    common: tuple[tuple[str, Any], ...]  # the attributes it started with, shared by many spans
    attributes: dict[str, Any]  # set later
    error: tuple[str, str] | None  # (exception type, message) of a span that failed


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        log.warning("%s=%r is not an integer: %d is used", name, value, default)
        return default


def _set_value(value: Any, target: Any) -> None:
    """Set an AnyValue message from a Python attribute value (as the SDK's encoder maps them)."""
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    else:
        target.string_value = str(value)


# Serialized Span messages of what many spans share (name, kind, flags, the empty status and the
# attributes they start with), merged into each span's message: the concatenation of serialized
# messages is their merge (protobuf's encoding), and one parse in C costs less than setting the same
# fields one by one from Python. Emptied when it grows past _COMMON_MAX (organizations x topics).
_common: dict[tuple[str, bool, tuple[tuple[str, Any], ...]], bytes] = {}
_COMMON_MAX = 4096


def _common_fields(span: ExportedSpan) -> bytes:
    key = (span.name, bool(span.parent_span_id), span.common)
    found = _common.get(key)
    if found is None:
        from opentelemetry.proto.trace.v1.trace_pb2 import Span

        message = Span(
            name=span.name,
            kind=Span.SpanKind.SPAN_KIND_SERVER,
            flags=FLAGS_HAS_IS_REMOTE | FLAGS_IS_REMOTE if span.parent_span_id else FLAGS_HAS_IS_REMOTE,
        )
        message.status.SetInParent()  # present though unset, as the SDK's encoder writes it
        add_attribute = message.attributes.add
        for key_, value in span.common:
            _set_value(value, add_attribute(key=key_).value)
        if len(_common) >= _COMMON_MAX:
            _common.clear()
        found = _common[key] = bytes(message.SerializeToString())
    return found


def encode(spans: Sequence[ExportedSpan], resource: Mapping[str, Any], scope: str) -> bytes:
    """One serialized ``ExportTraceServiceRequest`` of ``spans`` (one resource, one scope)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    add_resource = resource_spans.resource.attributes.add
    for key, value in resource.items():
        _set_value(value, add_resource(key=key).value)
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = scope
    add_span = scope_spans.spans.add
    for span in spans:
        message = add_span(
            trace_id=span.trace_id.to_bytes(16, "big"),
            span_id=span.span_id.to_bytes(8, "big"),
            start_time_unix_nano=span.start_ns,
            end_time_unix_nano=span.end_ns,
        )
        message.MergeFromString(_common_fields(span))
        if span.parent_span_id:
            message.parent_span_id = span.parent_span_id.to_bytes(8, "big")
        if span.attributes:
            add_attribute = message.attributes.add
            for key, value in span.attributes.items():
                _set_value(value, add_attribute(key=key).value)
        if span.error is not None:  # as the SDK records an exception leaving a span
            kind, description = span.error
            event = message.events.add(time_unix_nano=span.end_ns, name="exception")
            event.attributes.add(key="exception.type").value.string_value = kind
            event.attributes.add(key="exception.message").value.string_value = description
            message.status.code = STATUS_CODE_ERROR
            message.status.message = f"{kind}: {description}"
    return bytes(request.SerializeToString())


class SpanBatcher:
    """Finished spans exported in batches by a daemon thread (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        resource: Mapping[str, Any],
        scope: str,
        *,
        exporter: Any = None,
        delay_s: float | None = None,
        batch_size: int | None = None,
        max_queue: int | None = None,
    ) -> None:
        """Settings not given come from the SDK's ``OTEL_BSP_*`` variables (or their defaults)."""
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.resource = dict(resource)
        self.scope = scope
        self.delay_s = delay_s if delay_s is not None else _env_int("OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
        # Larger batches than the SDK's defaults (512 of 2048): a request's HTTP work is shared by more
        # spans (about 1.5 us a span at 512, 0.4 us at 2048; a request of 2048 is about 500 kB).
        self.batch_size = max(1, batch_size or _env_int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 2048))
        self.max_queue = max(self.batch_size, max_queue or _env_int("OTEL_BSP_MAX_QUEUE_SIZE", 8192))
        self._draining = threading.Lock()  # the thread's rounds and flush(): one batch taken at a time
        # It posts the bytes encoded here with the settings and retries the standard
        # OTEL_EXPORTER_OTLP_* variables give (:func:`bytes_exporter`).
        self._exporter = exporter if exporter is not None else bytes_exporter(OTLPSpanExporter, url)
        self._queue: collections.deque[ExportedSpan] = collections.deque()
        self._wake = threading.Event()
        self._stopping = False
        self.dropped = 0  # spans dropped because the queue was full
        self.failed = 0  # spans of exports that failed
        self.exported = 0
        self._thread = threading.Thread(target=self._run, name="tocsin-span-export", daemon=True)
        self._thread.start()

    def append(self, span: ExportedSpan) -> None:
        """Queue a finished span (the publish's hot path: an append and two length checks)."""
        queue = self._queue
        if len(queue) >= self.max_queue:
            self.dropped += 1
            return
        queue.append(span)
        if len(queue) >= self.batch_size and not self._wake.is_set():
            self._wake.set()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(self.delay_s)
            self._wake.clear()
            self._drain()
        self._drain()

    def _drain(self, everything: bool = False) -> None:
        queue, size = self._queue, self.batch_size
        while queue:
            with self._draining:
                batch = [queue.popleft() for _ in range(min(size, len(queue)))]
            if batch:
                self._export(batch)
            if len(queue) < size and not (everything or self._stopping):
                return  # the rest waits for the next round

    def flush(self) -> None:
        """Export everything queued now, in the calling thread (the bench, tests)."""
        self._drain(everything=True)

    def _export(self, batch: list[ExportedSpan]) -> None:
        try:
            result = self._exporter.export_bytes(encode(batch, self.resource, self.scope))
        except Exception:  # a bug of ours or the client's: the spans are lost, the API goes on
            log.exception("exporting %d spans failed", len(batch))
            self.failed += len(batch)
            return
        if result.success:
            self.exported += len(batch)
        else:
            self.failed += len(batch)
            log.warning("exporting %d spans failed: %s", len(batch), result.error)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Export what is left and stop the thread."""
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout_s)
        self._exporter.shutdown()


def bytes_exporter(base: type[Any], url: str) -> Any:
    """The SDK's OTLP/HTTP span exporter (``base``), able to post a request encoded here: its HTTP
    client, a protected attribute of the exporter (hence the version pin in pyproject.toml), applies
    the OTEL_EXPORTER_OTLP_* headers, TLS, compression, timeout and retries."""

    class BytesExporter(base):  # type: ignore[misc]
        def export_bytes(self, data: bytes) -> Any:
            return self._client.export(data)

    return BytesExporter(endpoint=url)
