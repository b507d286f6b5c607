"""Fixtures shared by the unit tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from app.observability import logs


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """configure() replaces the root handlers and structlog's set-up: put them back after the test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    config = structlog.get_config()
    saved = dict(logs._configured)
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    structlog.configure(**config)
    # a generation none of the test's configure() calls had: loggers bound during the test
    # (logs.NamedLogger) bind again, to the restored set-up, not to the test's stream
    generation = max(saved.get("generation", 0), logs._configured.get("generation", 0)) + 1
    logs._configured.clear()
    logs._configured.update(saved, generation=generation)
    logging.captureWarnings(False)
    structlog.contextvars.clear_contextvars()
