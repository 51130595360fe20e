"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009):
``score(d) = sum_r w_r / (k + rank_r(d))`` over the rankings ``r`` that contain ``d``, ranks 1-based."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    rankings: Mapping[str, Sequence[int]], *, k: float = 60.0, weights: Mapping[str, float] | None = None
) -> list[tuple[int, float]]:
    """Fused (item, score) pairs, best first; ties keep the order of first appearance."""
    scores: dict[int, float] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        if weight == 0:
            continue
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])
