"""Send failures after which an idempotent aiokafka producer never succeeds again: its producer id
or sequence is refused (a broker restarted without the producer's state, a fenced epoch). The API
and the worker's batch stages replace the producer when they see one."""

from __future__ import annotations

from aiokafka.errors import InvalidProducerEpoch, OutOfOrderSequenceNumber, ProducerFenced, UnknownProducerId

PRODUCER_FATAL = (OutOfOrderSequenceNumber, ProducerFenced, UnknownProducerId, InvalidProducerEpoch)
