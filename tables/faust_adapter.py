"""What the worker takes from Faust besides the App (its tasks, its web server for the operations
endpoints, its producer): no Faust consumer, stream or table runs. Every stage reads its source on
a consumer of its own (tables/batch_stage.py, tables/acked_stage.py), so the worker boots Faust
without its consumer, conductor and table manager, and nothing of Faust's fetch loop, commits or
recovery is patched. Importing this module sets the boot strategy (the worker imports it before it
starts)."""

from __future__ import annotations

from typing import Any

from faust.app.base import BootStrategy

from app.kafka.app import app

_faust: Any = app  # Faust's internals used below are not in its type stubs
# The stages own their consumers: Faust's would join the worker's group with no topic to read.
_faust.boot_strategy = BootStrategy(app, enable_kafka_consumer=False)


def broker_client() -> Any:
    """The aiokafka client of the worker's producer (started with the app): ``/readyz`` asks it
    for the cluster's metadata."""
    return _faust.producer._ensure_producer().client
