"""The OTLP export of the API's ``publish`` spans (app/observability/tracing.py), at a cost a
publish can carry with every publish traced.

The SDK's path cost a traced publish about 35 us of the API's CPU, a third of the publish itself
(``make bench``, section ``tracing``, the in-process figures): an SDK span started as the current
span (~17 us: sampler, attribute cleaning, locks, the processor's queue) and the OTLP encoder, which
builds each span's protobuf message from Python objects field by field (~18 us with its HTTP
share). Here the API's span is a small record (publish_spans.PublishSpan, made ahead with its ids and
header: ~1.5 us a publish in a loop) which, as it ends, ``span_batcher.SpanBatcher.append`` encodes
(:func:`encode_span`: the protobuf written here, field for field what the SDK's encoder writes; an
accepted publish's span from a template in one ``struct`` call, ~0.4 us) and puts on a deque
(thread-safe without a lock of ours); a daemon thread takes batches of up to ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` (default
here 2048) every ``OTEL_BSP_SCHEDULE_DELAY`` ms (or as soon as a batch is full), joins them into
one ``ExportTraceServiceRequest`` (:func:`export_request`) and posts it with the OTLP/HTTP
exporter's own client (its endpoint, headers, TLS, compression, timeout and retries from the
standard ``OTEL_EXPORTER_OTLP_*`` variables): ~0.5-1 us a span, most of it the kernel's. Beyond
``OTEL_BSP_MAX_QUEUE_SIZE`` (default here 8192) spans waiting, new ones are dropped and counted,
as the SDK's processor does; a failed export is logged and its spans dropped (tracing never holds
up a publish).

Why the encoding is written here and runs on the event loop (``make bench``, section ``tracing``,
the same runs for each): opentelemetry-proto's messages (upb) in the export thread cost 2.3 us a
span in a loop but 5.4 us in the running API, where the thread competes with the event loop for
the GIL, and the API's CPU per traced publish was 15-19 % above the untraced one; encoded in that
thread by this module's code, 13-16 %; encoded on the event loop as each span ends, 11-14 %; from
the template, made ahead (tracing.py), 7-10 %.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from app.caches import BoundedMemo

log = logging.getLogger(__name__)

STATUS_CODE_ERROR = 2  # opentelemetry.proto.trace.v1.Status.StatusCode
# The span's flags as the SDK's OTLP encoder writes them: "is the parent remote" is known, and set
# when the span continues a caller's traceparent.
FLAGS_HAS_IS_REMOTE = 0x100
FLAGS_IS_REMOTE = 0x200


class ExportedSpan(Protocol):
    """What the encoder reads of a finished span (publish_spans.PublishSpan)."""

    parent_span_id: int  # 0: a root span
    flags: int  # W3C trace flags
    trace_state: str  # W3C tracestate ("": none)
    name: str
    start_ns: int
    end_ns: int
    common: tuple[tuple[str, Any], ...]  # the attributes it started with, shared by many spans
    attributes: dict[str, Any]  # set later
    ids: bytes  # its ids' fields (encoded_ids)
    encoded_common: bytes | None  # its common attributes' fields with its name, kind, flags (common_fields)
    error: tuple[str, str] | None  # (exception type, message) of a span that failed


# The protobuf encoding of the OTLP messages written here (opentelemetry-proto's trace.proto and
# common.proto): a field is a tag ((number << 3) | wire type) then its value; a message, a string or
# bytes is a length-delimited value (wire type 2: a varint length, then the bytes); a fixed64 is 8
# little-endian bytes. Repeated fields and messages are written field after field, in any order.
_M64 = (1 << 64) - 1
_IDS = struct.Struct(">BBQQBBQ")  # Span.trace_id (1: 16 bytes), Span.span_id (2: 8 bytes)
_PARENT = struct.Struct(">BBQ")  # Span.parent_span_id (4: 8 bytes)
_TIMES = struct.Struct("<BQBQ")  # Span.start_time_unix_nano (7) and end_time_unix_nano (8): fixed64
_FIXED64 = struct.Struct("<BQ")
_FLAGS = struct.Struct("<HI")  # Span.flags (16: fixed32, a two-byte tag)
_DOUBLE = struct.Struct("<Bd")  # AnyValue.double_value (4: fixed64)
_SMALL = [bytes((n,)) for n in range(0x80)]
SPAN_KIND_SERVER = 2
_EMPTY_STATUS = b"\x7a\x00"  # Span.status (15), present though unset, as the SDK's encoder writes it


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _delimited(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field: its tag, the length of ``data``, ``data``."""
    return tag + _varint(len(data)) + data


def _text(value: str) -> bytes:
    # an unpaired surrogate (not UTF-8) is replaced rather than failing the publish
    return value.encode("utf-8", "replace")


def _any_value(value: Any) -> bytes:
    """An AnyValue message from a Python attribute value (as the SDK's encoder maps them; other
    types as their text)."""
    if isinstance(value, str):
        return _delimited(b"\x0a", _text(value))
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        return b"\x18" + _varint(value & _M64)  # int64: two's complement, 10 bytes when negative
    if isinstance(value, float):
        return _DOUBLE.pack(0x21, value)
    return _delimited(b"\x0a", _text(str(value)))


# The memos below are emptied when one grows past COMMON_MAX (organizations x topics).
COMMON_MAX = 4096
_keys: BoundedMemo[str, bytes] = BoundedMemo(COMMON_MAX)  # KeyValue.key (1) of an attribute's key, encoded once


def _attribute(tag: bytes, key: str, value: Any) -> bytes:
    """A KeyValue message as the field ``tag`` of its parent."""
    encoded_key = _keys.get(key)
    if encoded_key is None:
        encoded_key = _keys.remember(key, _delimited(b"\x0a", _text(key)))
    if type(value) is str:
        text = _text(value)
        size = len(text)
        length = len(encoded_key) + size + 4  # the key, then value's tag, length, string tag, length
        if length < 0x80:  # every length a byte (the event id's): one formatting
            return b"%b%c%b\x12%c\x0a%c%b" % (tag, length, encoded_key, size + 2, size, text)
        return _delimited(tag, encoded_key + _delimited(b"\x12", _delimited(b"\x0a", text)))
    if type(value) is int:  # a status code: a few values, each encoded once
        found = _ints.get((tag, key, value))
        if found is None:
            found = _ints.remember(
                (tag, key, value), _delimited(tag, encoded_key + _delimited(b"\x12", _any_value(value)))
            )
        return found
    return _delimited(tag, encoded_key + _delimited(b"\x12", _any_value(value)))


_ints: BoundedMemo[tuple[bytes, str, int], bytes] = BoundedMemo(COMMON_MAX)  # the encoded attributes of integer values


# The encoded fields many spans share (name, kind, flags and the attributes they start with).
_common: BoundedMemo[tuple[str, bool, tuple[tuple[str, Any], ...]], bytes] = BoundedMemo(COMMON_MAX)


def common_fields(name: str, remote_parent: bool, common: tuple[tuple[str, Any], ...]) -> bytes:
    """The encoded fields of a span's name, kind, flags (``remote_parent``: it continues a caller's
    trace) and the attributes it starts with, which many spans share."""
    key = (name, remote_parent, common)
    found = _common.get(key)
    if found is None:
        flags = FLAGS_HAS_IS_REMOTE | FLAGS_IS_REMOTE if remote_parent else FLAGS_HAS_IS_REMOTE
        parts = [
            _delimited(b"\x2a", _text(name)),  # name (5)
            b"\x30" + _varint(SPAN_KIND_SERVER),  # kind (6)
            _FLAGS.pack(0x0185, flags),  # flags (16): tag 133 as a varint, 0x85 0x01
            *(_attribute(b"\x4a", k, v) for k, v in common),  # attributes (9)
        ]
        found = _common.remember(key, b"".join(parts))
    return found


# Where the encoded ids (encoded_ids, id_fields) hold the trace id and the span id: each after its
# field's tag and length byte, big-endian.
TRACE_ID_AT, SPAN_ID_AT = slice(2, 18), slice(20, 28)


def id_fields(trace_id: bytes, span_id: bytes) -> bytes:
    """:func:`encoded_ids` of a new trace's span (no tracestate, no parent) from its ids' bytes."""
    return b"\x0a\x10%b\x12\x08%b" % (trace_id, span_id)


def encoded_ids(trace_id: int, span_id: int, trace_state: str, parent_span_id: int) -> bytes:
    """The encoded fields of a span's ids: trace id, span id, W3C tracestate ("": none) and parent
    span id (0: a root span)."""
    ids = _IDS.pack(0x0A, 16, trace_id >> 64, trace_id & _M64, 0x12, 8, span_id)
    if trace_state:
        ids += _delimited(b"\x1a", _text(trace_state))  # trace_state (3)
    if parent_span_id:
        ids += _PARENT.pack(0x22, 8, parent_span_id)
    return ids


def link_field(trace_id: int, span_id: int) -> bytes:
    """The encoded ``Span.links`` element of a link to a caller's (remote) span, as the SDK's encoder
    writes it: its trace and span ids, and flags saying the context is remote (no trace state,
    no attributes). Kept after a span's :func:`encoded_ids` (fields go in any order)."""
    flags = FLAGS_HAS_IS_REMOTE | FLAGS_IS_REMOTE
    ids = _IDS.pack(0x0A, 16, trace_id >> 64, trace_id & _M64, 0x12, 8, span_id)
    return b"\x6a%c%b\x35%b" % (len(ids) + 5, ids, flags.to_bytes(4, "little"))


STATUS_CODE = "http.response.status_code"  # the attribute every publish span ends with
EVENT_ID = "tocsin.event_id"  # the accepted publish's


def encode_span(span: ExportedSpan) -> bytes:
    """A finished span as one element of ``ScopeSpans.spans`` (field 2: its tag, length and message),
    field for field what the SDK's OTLP encoder writes for the same span (the unit tests compare
    them). It runs as the span ends, on the publish's thread, so that the export thread has only
    bytes to send (its encoding competed with the event loop for the GIL). An accepted publish's span
    (:func:`_accepted`) is one ``struct`` call; any other, about 1 us of Python."""
    attributes = span.attributes
    if span.error is None and span.encoded_common is not None and tuple(attributes) == _ACCEPTED:
        event_id = attributes[EVENT_ID]
        if type(event_id) is str:
            return _accepted(span, _text(event_id), attributes[STATUS_CODE])
    ids = span.ids
    common = span.encoded_common or common_fields(span.name, bool(span.parent_span_id), span.common)
    encoded = b""
    for key, value in attributes.items():  # usually two: += costs less than a join
        encoded += _attribute(b"\x4a", key, value)
    status = _EMPTY_STATUS if span.error is None else _error_fields(span)
    size = len(ids) + _TIMES.size + len(common) + len(encoded) + len(status)
    times = _TIMES.pack(0x39, span.start_ns, 0x41, span.end_ns)
    return b"\x12%b%b%b%b%b%b" % (_varint(size), ids, times, common, encoded, status)


_ACCEPTED = (EVENT_ID, STATUS_CODE)  # the attributes of an accepted publish's span, in their order


def _accepted(span: ExportedSpan, event_id: bytes, status: Any) -> bytes:
    """:func:`encode_span` of a span whose only attributes are its event id and status code (an
    accepted publish's), with no error: its fields' sizes make a template (a ``struct`` format of
    fixed-size fields: the field's tag and length, the ids, times, common fields, the event id's
    and status's tags, the event id, the rest), made once for those sizes, its variable parts packed
    in one call (0.2 us against 1 us field by field)."""
    key = (len(span.ids), span.encoded_common, len(event_id), status)
    template = _templates.get(key)
    if template is None:
        ids_size, common, event_id_size, _ = key
        assert common is not None
        # the event id's KeyValue less the id: that of any id of its size, less its last bytes
        attribute = _attribute(b"\x4a", EVENT_ID, "x" * event_id_size)
        before = attribute[: len(attribute) - event_id_size]
        after = _attribute(b"\x4a", STATUS_CODE, status) + _EMPTY_STATUS
        middle = common + before
        size = ids_size + _TIMES.size + len(middle) + event_id_size + len(after)
        head = b"\x12" + _varint(size)
        fields = struct.Struct(f"<{len(head)}s{ids_size}sBQBQ{len(middle)}s{event_id_size}s{len(after)}s")
        template = _templates.remember(key, (fields.pack, head, middle, after))
    pack, head, middle, after = template
    packed: bytes = pack(head, span.ids, 0x39, span.start_ns, 0x41, span.end_ns, middle, event_id, after)
    return packed


# The templates of accepted publishes' spans (_accepted), by the sizes that make them.
_templates: BoundedMemo[tuple[int, bytes | None, int, Any], tuple[Any, bytes, bytes, bytes]] = BoundedMemo(COMMON_MAX)


def _error_fields(span: ExportedSpan) -> bytes:
    """As the SDK records an exception leaving a span: an ``exception`` event (11) and an error
    status (15)."""
    assert span.error is not None
    kind, description = span.error
    event = b"".join(
        (
            _FIXED64.pack(0x09, span.end_ns),  # time_unix_nano (1)
            b"\x12\x09exception",  # name (2)
            _attribute(b"\x1a", "exception.type", kind),  # attributes (3)
            _attribute(b"\x1a", "exception.message", description),
        )
    )
    status = _delimited(b"\x12", _text(f"{kind}: {description}")) + b"\x18" + _varint(STATUS_CODE_ERROR)
    return _delimited(b"\x5a", event) + _delimited(b"\x7a", status)


def request_head(resource: Mapping[str, Any], scope: str) -> tuple[bytes, bytes]:
    """What every export request of this process starts with: the encoded ``ResourceSpans.resource``
    (field 1) and ``ScopeSpans.scope`` (field 1)."""
    resource_message = b"".join(_attribute(b"\x0a", k, v) for k, v in resource.items())  # attributes (1)
    scope_message = _delimited(b"\x0a", _text(scope))  # InstrumentationScope.name (1)
    return _delimited(b"\x0a", resource_message), _delimited(b"\x0a", scope_message)


def export_request(head: tuple[bytes, bytes], spans: Sequence[bytes]) -> bytes:
    """One serialized ``ExportTraceServiceRequest``: one resource, one scope, the spans encoded by
    :func:`encode_span`."""
    resource, scope = head
    scope_spans = _delimited(b"\x12", scope + b"".join(spans))  # ResourceSpans.scope_spans (2)
    return _delimited(b"\x0a", resource + scope_spans)  # ExportTraceServiceRequest.resource_spans (1)


def encode(spans: Sequence[ExportedSpan], resource: Mapping[str, Any], scope: str) -> bytes:
    """One serialized ``ExportTraceServiceRequest`` of ``spans`` (one resource, one scope)."""
    return export_request(request_head(resource, scope), [encode_span(span) for span in spans])
