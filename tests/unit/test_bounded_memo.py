"""app/caches/memo.py: a hot path's memo stays within its bound by emptying itself when full."""

from __future__ import annotations

from app.caches import BoundedMemo


def test_a_full_memo_empties_itself_before_remembering_one_more() -> None:
    memo: BoundedMemo[int, str] = BoundedMemo(3)
    for key in range(3):
        assert memo.remember(key, str(key)) == str(key)
    assert dict(memo) == {0: "0", 1: "1", 2: "2"}
    memo.remember(3, "3")
    assert dict(memo) == {3: "3"}
    assert memo.get(0) is None and memo.get(3) == "3"
