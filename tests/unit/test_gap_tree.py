"""The gaps a worker's consumer notes on the topics the API writes in transactions
(tables/commit_guard.py, ``add_gap_merging_once``): the same interval tree as Faust's own
``Consumer._add_gap`` builds, without rebuilding it for each gap that lies past the others."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from faust.types import TP
from hypothesis import given, settings
from hypothesis import strategies as st
from intervaltree import IntervalTree

from tables.commit_guard import ORIGINAL_ADD_GAP, add_gap_merging_once

TOPIC_PARTITION = TP("t.publish", 0)


class GapConsumer:
    """The attributes ``Consumer._add_gap`` reads and writes."""

    def __init__(self, committed: int | None) -> None:
        self._committed_offset: defaultdict[Any, int | None] = defaultdict(lambda: None)
        self._committed_offset[TOPIC_PARTITION] = committed
        self._gap: defaultdict[Any, IntervalTree] = defaultdict(IntervalTree)


def _faust_tree(committed: int | None, gaps: list[tuple[int, int]]) -> set[tuple[int, int]]:
    consumer = GapConsumer(committed)
    for start, end in gaps:
        asyncio.run(ORIGINAL_ADD_GAP(consumer, TOPIC_PARTITION, start, end))
    return {(i.begin, i.end) for i in consumer._gap[TOPIC_PARTITION]}


def _our_tree(committed: int | None, gaps: list[tuple[int, int]]) -> set[tuple[int, int]]:
    consumer = GapConsumer(committed)
    for start, end in gaps:
        asyncio.run(add_gap_merging_once(consumer, TOPIC_PARTITION, start, end))
    return {(i.begin, i.end) for i in consumer._gap[TOPIC_PARTITION]}


gap = st.tuples(st.integers(0, 300), st.integers(0, 40)).map(lambda g: (g[0], g[0] + g[1]))


@settings(max_examples=300, deadline=None)
@given(committed=st.one_of(st.none(), st.integers(0, 200)), gaps=st.lists(gap, max_size=30))
def test_the_tree_is_the_one_faust_builds(committed: int | None, gaps: list[tuple[int, int]]) -> None:
    """Forward gaps, gaps found again after a seek back, overlapping and touching ones, gaps below
    the committed offset: the intervals are Faust's."""
    assert _our_tree(committed, gaps) == _faust_tree(committed, gaps)


@settings(max_examples=100, deadline=None)
@given(
    committed=st.one_of(st.none(), st.integers(0, 50)),
    steps=st.lists(st.tuples(st.integers(1, 9), st.integers(0, 3)), max_size=40),
)
def test_forward_gaps_as_a_fetch_meets_markers(committed: int | None, steps: list[tuple[int, int]]) -> None:
    """The usual case: each gap (a commit marker, or a run of them) after records read since the last."""
    gaps, offset = [], 0
    for records, markers in steps:
        offset += records
        gaps.append((offset, offset + markers))
        offset += markers + 1
    assert _our_tree(committed, gaps) == _faust_tree(committed, gaps)


def test_a_gap_past_the_others_does_not_rebuild_the_tree(monkeypatch: Any) -> None:
    """Faust rebuilds the partition's whole tree (``merge_overlaps``) for every gap; a gap past the
    end of the others is added alone."""
    rebuilt: list[int] = []
    merge = IntervalTree.merge_overlaps

    def counting_merge(self: IntervalTree, *args: Any, **kwargs: Any) -> None:
        rebuilt.append(len(self))
        merge(self, *args, **kwargs)

    monkeypatch.setattr(IntervalTree, "merge_overlaps", counting_merge)
    consumer = GapConsumer(committed=0)
    for marker in range(10, 1010, 10):  # a commit marker every tenth offset
        asyncio.run(add_gap_merging_once(consumer, TOPIC_PARTITION, marker, marker))
    assert len(consumer._gap[TOPIC_PARTITION]) == 100
    assert rebuilt == []
    asyncio.run(add_gap_merging_once(consumer, TOPIC_PARTITION, 500, 505))  # met again after a seek back
    assert rebuilt == [101]
    assert {(i.begin, i.end) for i in consumer._gap[TOPIC_PARTITION] if i.begin >= 490 and i.end <= 520} == {
        (490, 491),
        (500, 506),
        (510, 511),
    }
