"""streams/batches.store_batch: a unique key another writer stored meanwhile is a race, not a
failure: written again at once, a warning, no error line (the scaling e2e fails on error lines).
Seen in a CI run: after a rebalance the previous owner's incident write ended while the next owner
wrote the same effects; one of them met UNIQUE constraint failed: incidents.id."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.exc import IntegrityError

from app.domain.shared.retry_schedule import RetrySchedule
from streams import batches


async def test_a_key_stored_meanwhile_is_written_again_at_once_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    written: list[list[str]] = []
    failures = iter([IntegrityError("INSERT INTO incidents", {}, Exception("UNIQUE constraint failed: incidents.id"))])

    async def write(records: list[str]) -> None:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        written.append(records)

    with caplog.at_level(logging.INFO):
        await batches.store_batch("incidents", ["a", "b"], write)
    assert written == [["a", "b"]]
    assert [r.levelname for r in caplog.records if "another writer" in r.getMessage()] == ["WARNING"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_constraint_that_fails_again_is_an_error_and_isolated(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same failure twice is the records' fault: logged as an error, then each record alone."""
    monkeypatch.setattr(batches, "WRITE_RETRIES", RetrySchedule(base_s=0.001, factor=1, max_delay_s=0.001))
    calls: list[list[str]] = []

    async def write(records: list[str]) -> None:
        calls.append(records)
        if len(records) > 1:
            raise IntegrityError("INSERT", {}, Exception("NOT NULL constraint failed"))

    await batches.store_batch("incidents", ["a", "b"], write)
    assert calls[-2:] == [["a"], ["b"]], "isolated record by record once the batch kept failing"
    assert any(r.levelname == "ERROR" for r in caplog.records)
