from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.tokens import estimate_message_tokens, estimate_tokens, split_total


def test_estimate_counts_words_and_long_words() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("   ") == 0
    assert estimate_tokens("a bb ccc dddd") == 4
    assert estimate_tokens("Peraturan Gubernur Aceh") == 3 + 2 + 1
    assert estimate_message_tokens([{"role": "user", "content": "a b"}]) == 2 + 4


@given(st.integers(0, 10_000), st.lists(st.integers(0, 500), min_size=1, max_size=30))
def test_split_sums_to_total_and_follows_weights(total: int, weights: list[int]) -> None:
    shares = split_total(total, weights)
    assert sum(shares) == total and len(shares) == len(weights)
    if sum(weights) > 0:
        for share, weight in zip(shares, weights, strict=True):
            assert abs(share - total * weight / sum(weights)) < 1


def test_split_edge_cases() -> None:
    assert split_total(5, []) == []
    assert split_total(0, [1, 2]) == [0, 0]
    assert split_total(3, [0, 0, 0]) == [1, 1, 1]
