"""The error tree drawn in ``app/errors.py`` is the one the classes make (issue 32, item 5).

Every public ``TocsinError`` class of the product is drawn once, under its parent, with the module
that holds it, the other errors it also derives from, its HTTP answer and whether it is retriable.
"""

from __future__ import annotations

import pytest

import app.errors
from scripts.reference import errors


def test_the_drawing_is_the_classes() -> None:
    assert errors.differences(errors.drawn(app.errors.__doc__ or ""), errors.from_classes()) == []


def test_a_class_left_out_of_the_drawing_or_moved_is_named() -> None:
    actual = errors.from_classes()
    drawn = {name: line for name, line in errors.drawn(app.errors.__doc__ or "").items() if name != "KafkaAccessError"}
    moved = errors.Drawn(**{**actual["FetchRefused"].__dict__, "module": "app/identity/fetch.py"})
    assert errors.differences({**drawn, "FetchRefused": moved}, actual) == [
        "KafkaAccessError (app/kafka/security.py) is not drawn",
        "FetchRefused: drawn module 'app/identity/fetch.py', the class has 'app/net/errors.py'",
    ]


def test_a_line_the_drawing_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot read"):
        errors.drawn("TocsinError [500 SYS-000]: root\n ├── lower-case thing\n")


def test_retriable_is_drawn_as_the_classes_say() -> None:
    drawn = errors.drawn(app.errors.__doc__ or "")
    assert {name for name, line in drawn.items() if line.retriable} == {
        name for name, line in errors.from_classes().items() if line.retriable
    }


def test_a_fetch_that_may_succeed_on_retry_says_so_in_its_attribute() -> None:
    from app.net.errors import FetchRefused, TargetRefused

    assert FetchRefused.retriable is True
    assert TargetRefused.retriable is False


def test_broker_not_ready_says_it_is_retried() -> None:
    """ensure_topics_when_reachable retries it; so does aiokafka's own reading of ``retriable``."""
    from app.kafka.topics import BrokerNotReady

    assert BrokerNotReady("not yet").retriable is True


@pytest.mark.parametrize(
    ("error", "status", "retry_after"),
    [
        ("rate_limited", 429, "2"),
        ("unavailable", 503, "1"),
        ("fetch_refused", 422, None),  # retriable, but HTTP defines Retry-After for 429 and 503 (and 3xx) only
        ("target_refused", 422, None),
        ("not_found", 404, None),
    ],
)
def test_retry_after_only_where_http_gives_it_a_meaning(error: str, status: int, retry_after: str | None) -> None:
    from api.errors import describe
    from app.errors import NotFound, RateLimited, Unavailable
    from app.net.errors import FetchRefused, TargetRefused

    raised = {
        "rate_limited": RateLimited("slow down", retry_after=1.2),
        "unavailable": Unavailable("broker down"),
        "fetch_refused": FetchRefused("timeout: ReadTimeout"),
        "target_refused": TargetRefused("10.0.0.1: private address refused"),
        "not_found": NotFound("no such topic"),
    }[error]
    described = describe(raised)
    assert described is not None
    answered, _body, headers = described
    assert answered == status
    assert (headers or {}).get("Retry-After") == retry_after
