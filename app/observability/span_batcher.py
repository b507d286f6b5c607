"""The API's span export: finished publish spans encoded as they end (span_export.py) and sent in
batches by a daemon thread through the SDK's OTLP/HTTP exporter, sized by the SDK's own ``OTEL_BSP_*``
variables (span_export.py's docstring tells why the API does not use the SDK's span processor)."""

from __future__ import annotations

import collections
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from app.observability.span_export import ExportedSpan, encode_span, export_request, request_head

log = logging.getLogger(__name__)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        log.warning("%s=%r is not an integer: %d is used", name, value, default)
        return default


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

        self._head = request_head(resource, scope)
        self.delay_s = delay_s if delay_s is not None else _env_int("OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
        # Larger batches than the SDK's defaults (512 of 2048): a request's HTTP work is shared by more
        # spans (about 1.5 us a span at 512, 0.4 us at 2048; a request of 2048 is about 500 kB).
        self.batch_size = max(1, batch_size or _env_int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 2048))
        self.max_queue = max(self.batch_size, max_queue or _env_int("OTEL_BSP_MAX_QUEUE_SIZE", 8192))
        self._draining = threading.Lock()  # the thread's rounds and flush(): one batch taken at a time
        # It posts the bytes encoded here with the settings and retries the standard
        # OTEL_EXPORTER_OTLP_* variables give (:func:`bytes_exporter`).
        self._exporter = exporter if exporter is not None else bytes_exporter(OTLPSpanExporter, url)
        self._queue: collections.deque[bytes] = collections.deque()  # encoded spans (encode_span)
        self._wake = threading.Event()
        self._stopping = False
        self.dropped = 0  # spans dropped because the queue was full
        self.failed = 0  # spans of exports that failed
        self.exported = 0
        self._thread = threading.Thread(target=self._run, name="tocsin-span-export", daemon=True)
        self._thread.start()

    def append(self, span: ExportedSpan) -> None:
        """Encode a finished span and queue it (the publish's hot path: about 0.5 us in a loop)."""
        queue = self._queue
        if len(queue) >= self.max_queue:
            self.dropped += 1
            return
        try:
            encoded = encode_span(span)
        except Exception:  # a bug of ours: the span is lost, the publish goes on
            log.exception("encoding a %r span failed", span.name)
            self.failed += 1
            return
        queue.append(encoded)
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

    def _export(self, batch: list[bytes]) -> None:
        try:
            result = self._exporter.export_bytes(export_request(self._head, batch))
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
