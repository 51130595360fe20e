"""The metered wrapper: same results and errors as the engine it wraps, one record per call to the observer,
and ``classify_pairs`` only where the wrapped engine has it."""

from __future__ import annotations

import asyncio

import pytest

from models.base import CallRecord, ModelUnavailable, PairClassifier
from models.metered import MeteredEngine
from tests.support.engines import FakeEngine, FakePairsEngine

LABELS = ["yes", "no"]


def _prompt(segment: str) -> str:
    return f"<segment>\n{segment}\n</segment>"


def test_pairs_are_offered_only_where_the_engine_has_them() -> None:
    assert not isinstance(MeteredEngine(FakeEngine(), lambda r: None), PairClassifier)
    assert getattr(MeteredEngine(FakeEngine(), lambda r: None), "classify_pairs", None) is None
    assert isinstance(MeteredEngine(FakePairsEngine(), lambda r: None), PairClassifier)


def test_a_pairs_call_reaches_the_engine_and_is_observed_once() -> None:
    seen: list[CallRecord] = []
    inner = FakePairsEngine()
    metered = MeteredEngine(inner, seen.append)
    assert isinstance(metered, PairClassifier)
    pairs = [("<segment>\n", "BENAR a\n</segment>"), ("<segment>\n", "SALAH b\n</segment>")]
    scored = asyncio.run(metered.classify_pairs(pairs, LABELS, role="judge"))
    assert [c.label for c in scored] == ["yes", "no"]
    assert inner.pair_calls == [pairs]
    assert len(seen) == 1 and seen[0].role == "judge" and seen[0].engine == "fake"
    assert seen[0].prompt_tokens == sum(c.record.prompt_tokens for c in scored)


def test_a_failed_call_is_observed_and_raised() -> None:
    seen: list[CallRecord] = []
    metered = MeteredEngine(FakeEngine(error=ModelUnavailable("down")), seen.append)
    with pytest.raises(ModelUnavailable):
        asyncio.run(metered.classify([_prompt("BENAR")], LABELS, role="judge"))
    assert [(r.ok, r.error) for r in seen] == [(False, "unavailable")]
