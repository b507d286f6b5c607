"""The changes made to aiokafka's own behaviour (those made through Faust are faust_patches.py), one
function each, installed by the process that needs them (pinned versions in pyproject.toml):

- :func:`note_skipped_offsets` (the worker, faust_patches item 8): the offset ranges the fetcher
  passes without a record (commit markers, aborted records) are noted in :data:`non_records`, so the
  agents' progress can tell a marker from a lost record;
- :func:`short_transaction_retry` (the API): a shorter wait before retrying an AddPartitionsToTxn
  the broker refused with CONCURRENT_TRANSACTIONS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aiokafka.consumer import fetcher as aiokafka_fetcher
from aiokafka.producer import sender as aiokafka_sender

from tables.offset_ranges import OffsetRanges

non_records = OffsetRanges()  # 8: keyed by (topic, partition)


def note_skips(records: Iterable[Any], key: Any, fetch_offset: int, next_offset: Callable[[], int]) -> Iterable[Any]:
    """8: yield ``records`` (of one partition, fetched from ``fetch_offset``), noting in ``non_records``
    each offset range passed without a record before the record after it, and at the end the range up
    to ``next_offset()`` (where the fetcher goes on from)."""
    expected = fetch_offset
    for record in records:
        if record.offset > expected:
            non_records.add(key, expected, record.offset)
        expected = record.offset + 1
        yield record
    end = next_offset()
    if end > expected:
        non_records.add(key, expected, end)


def note_skipped_offsets(watched: set[str]) -> None:
    """8: note the offsets aiokafka's fetcher passes without a record, on the ``watched`` topics."""
    records_class = aiokafka_fetcher.PartitionRecords
    unpack: Any = records_class._unpack_records

    def unpack_noting_skips(self: Any) -> Iterable[Any]:
        tp = self._tp
        if tp.topic not in watched:
            return unpack(self)  # type: ignore[no-any-return]
        key, start = (tp.topic, tp.partition), self.next_fetch_offset
        return note_skips(unpack(self), key, start, lambda: self.next_fetch_offset)

    records_class._unpack_records = unpack_noting_skips


def short_transaction_retry() -> None:
    """aiokafka retries an AddPartitionsToTxn refused with CONCURRENT_TRANSACTIONS (the previous
    transaction's markers are still being written, KAFKA-5477) after 20 ms; the broker needs about a
    millisecond here, and a publish would wait those 20 ms about every other transaction."""
    aiokafka_sender.BACKOFF_OVERRIDE = 0.002
