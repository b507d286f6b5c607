"""The one change made to aiokafka's own behaviour, installed by the process that needs it (pinned
versions in pyproject.toml):

- :func:`short_transaction_retry` (the API): a shorter wait before retrying an AddPartitionsToTxn
  the broker refused with CONCURRENT_TRANSACTIONS.
"""

from __future__ import annotations

from aiokafka.producer import sender as aiokafka_sender


def short_transaction_retry() -> None:
    """aiokafka retries an AddPartitionsToTxn refused with CONCURRENT_TRANSACTIONS (the previous
    transaction's markers are still being written, KAFKA-5477) after 20 ms; the broker needs about a
    millisecond here, and a publish would wait those 20 ms about every other transaction."""
    aiokafka_sender.BACKOFF_OVERRIDE = 0.002
