"""Static token format: prefix, checksum, hash-only storage."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.domain.iam.tokens import PREFIX, TOKEN_LEN, _checksum, generate_token, is_well_formed, token_hash


def test_generated_tokens_are_well_formed_and_distinct() -> None:
    tokens = {generate_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(t.startswith(PREFIX) and len(t) == TOKEN_LEN and is_well_formed(t) for t in tokens)


def test_a_single_changed_character_breaks_the_checksum() -> None:
    token = generate_token()
    for i in range(len(PREFIX), len(token)):
        replacement = "A" if token[i] != "A" else "B"
        assert not is_well_formed(token[:i] + replacement + token[i + 1 :])


def test_truncated_or_foreign_tokens_are_malformed() -> None:
    token = generate_token()
    assert not is_well_formed(token[:-1])
    assert not is_well_formed("ghp_" + token[4:])
    assert not is_well_formed("")


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@given(st.text(_B62, min_size=32, max_size=32), st.text(_B62, min_size=6, max_size=6))
def test_a_token_is_accepted_only_with_its_own_checksum(body: str, check: str) -> None:
    assert is_well_formed(f"{PREFIX}{body}{check}") is (check == _checksum(body))
    assert is_well_formed(f"{PREFIX}{body}{_checksum(body)}")


def test_only_the_sha256_is_stored() -> None:
    token = generate_token()
    hashed = token_hash(token)
    assert len(hashed) == 64 and token not in hashed
