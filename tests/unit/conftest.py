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
    logs._configured.clear()
    logs._configured.update(saved)
    logging.captureWarnings(False)
    structlog.contextvars.clear_contextvars()
