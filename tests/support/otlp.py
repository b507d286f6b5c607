"""An OTLP/HTTP trace receiver on loopback: what the processes' exporters (http/protobuf) send to
``POST /v1/traces``, decoded with opentelemetry-proto, kept as flat spans."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.receiver import QuietHandler, loopback_server


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_span_id: str  # "" for a root span
    kind: int
    attributes: dict[str, Any]
    error: bool
    status_message: str
    trace_state: str


@dataclass
class Received:
    """The requests' bodies as they came, decoded when asked for (:meth:`snapshot`): decoding
    thousands of spans a second would take CPU from the processes the bench measures on the same
    two cores, as no collector elsewhere does."""

    bodies: list[bytes] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)  # of the bodies decoded so far
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[Span]:
        with self.lock:
            for body in self.bodies:
                self.spans.extend(decode(body))
            self.bodies.clear()
            return list(self.spans)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def decode(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(
                    Span(
                        service=str(resource.get("service.name", "")),
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        kind=span.kind,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        error=span.status.code == 2,  # STATUS_CODE_ERROR
                        status_message=span.status.message,
                        trace_state=span.trace_state,
                    )
                )
    return out


@contextmanager
def otlp_receiver() -> Iterator[tuple[Received, str]]:
    """Yields what was received and the base URL (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
    got = Received()

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a collector serves it

        def do_POST(self) -> None:
            raw = self.read_body()
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.answer_empty(404)
                return
            ExportTraceServiceRequest.FromString(raw)  # a body that does not parse fails the export
            with got.lock:
                got.bodies.append(raw)
                got.requests += 1
            body = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with loopback_server(Handler) as url:
        yield got, url
