"""The CloudEvents mapping (app/domain/formats/cloudevents.py): which attribute fills which field of
the publish request, and which attribute a refused field names."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.formats import cloudevents as ce
from app.errors import InvalidInput, UnsupportedMediaType

CONTEXT = {"specversion": "1.0", "id": "1", "source": "/s", "type": "t"}


@pytest.mark.parametrize(
    ("native", "attribute"),
    [
        ("data", "data"),
        ("data.deep.0", "data.deep.0"),
        ("status", "tocsinstatus"),
        ("event.name", "type"),
        ("event.description", "subject"),
        ("event_control.partition_key", "partitionkey"),
        ("event_control.metrics.level", "tocsinmetrics.level"),
        ("event_control.areas.3", "tocsinareas.3"),
        ("event_control.action", "tocsinaction"),
        ("attributes.idempotency_key", "id"),
        ("", ""),
    ],
)
def test_a_refused_field_is_named_by_the_attribute_that_filled_it(native: str, attribute: str) -> None:
    assert ce.attribute_of(native) == attribute


@given(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1), st.text(min_size=1))
def test_two_different_source_and_id_pairs_never_share_an_idempotency_key(s1: str, i1: str, s2: str, i2: str) -> None:
    if (s1, i1) != (s2, i2):
        assert ce.idempotency_key(s1, i1) != ce.idempotency_key(s2, i2)


def test_binary_mode_keeps_the_data_as_sent_and_maps_the_extensions() -> None:
    attributes = {**CONTEXT, "partitionkey": "k", "tocsinmetrics": '{"m": 1}', "tocsinareas": '["a"]'}
    native = orjson.loads(ce.from_binary(attributes, None, b' {"x": [1, 2]} '))
    assert native == {
        "data": {"x": [1, 2]},
        "status": "ACTUAL",
        "event": {"name": "t"},
        "attributes": {"idempotency_key": "ce/2//s/1"},
        "event_control": {"partition_key": "k", "metrics": {"m": 1}, "areas": ["a"]},
    }


def test_binary_mode_data_cannot_smuggle_fields_past_the_object() -> None:
    with pytest.raises(InvalidInput) as refused:
        ce.from_binary(CONTEXT, "application/json", b'{"x": 1}, "status": "TEST"')
    assert refused.value.details["fields"][0]["field"] == "data"


def test_headers_are_percent_decoded_and_a_repeated_one_refused() -> None:
    assert ce.binary_attributes([(b"ce-subject", b"caf%C3%A9%20bar"), (b"content-type", b"x")]) == {
        "subject": "café bar"
    }
    with pytest.raises(InvalidInput):
        ce.binary_attributes([(b"ce-id", b"1"), (b"ce-id", b"2")])


@pytest.mark.parametrize("media", ["text/plain", "application/xml", "application/octet-stream"])
def test_data_of_another_media_type_is_415(media: str) -> None:
    with pytest.raises(UnsupportedMediaType):
        ce.from_binary(CONTEXT, media, b"{}")


@pytest.mark.parametrize(
    "media", [None, "", "application/json", "application/json; charset=utf-8", "application/x+json"]
)
def test_json_data_media_types_are_accepted(media: str | None) -> None:
    assert ce.is_json_media(media)


def test_data_nested_deeper_than_orjson_writes_is_refused_not_a_500() -> None:
    """Defect (found by the OpenAPI fuzz test in CI): structured-mode data nested 300 levels deep
    is valid JSON that orjson reads (up to 1,024 levels) but does not write again (254): the
    TypeError became a 500. It is a 422 naming ``data`` now; shallower data still passes."""
    deep = b'{"a":' * 300 + b"{}" + b"}" * 300  # written by hand: orjson cannot write it either
    event = b'{"specversion":"1.0","id":"e1","source":"/s","type":"t","data":' + deep + b"}"
    with pytest.raises(InvalidInput) as refused:
        ce.from_structured(event)
    assert refused.value.details["fields"][0]["field"] == "data"
    assert "nested too deeply" in str(refused.value)
    shallow = {"specversion": "1.0", "id": "e1", "source": "/s", "type": "t", "data": {"a": {"b": 1}}}
    assert orjson.loads(ce.from_structured(orjson.dumps(shallow)))["data"] == {"a": {"b": 1}}
