from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from functools import partial
from typing import Any, TypeVar

import pytest

from judge.batching import judge_batch
from judge.recheck import RecheckStats, judge_with_recheck
from judge.types import JudgeItem, JudgeResult
from tests.support.judges import FakeJudge, item, soon

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def recheck(judge: FakeJudge, items: list[JudgeItem], **kw: object) -> tuple[list[JudgeResult], RecheckStats]:
    stats = RecheckStats()
    results = run(judge_with_recheck(partial(judge_batch, judge), items, stats=stats, **kw))  # type: ignore[arg-type]
    return results, stats


def failed(reason: str) -> JudgeResult:
    return JudgeResult("?", "unverified", reasons=("engine said so",), unverified_reason=reason)  # type: ignore[arg-type]


def test_confirmed_unsupported_stays_and_supported_is_not_rechecked() -> None:
    judge = FakeJudge()
    results, stats = recheck(judge, [item("a", "BENAR"), item("b", "SALAH")])
    assert [(r.verdict, r.reasons) for r in results] == [
        ("supported", ()),
        ("unsupported", ("figure_mismatch",)),
    ]
    assert judge.calls == [["a", "b"], ["b"]]  # one batch, then b alone
    assert (stats.first_pass, stats.rechecks, stats.confirmed, stats.checks_used) == (2, 1, 1, 3)


def test_deterministic_judge_first_pass_is_final() -> None:
    judge = FakeJudge()
    results, stats = recheck(judge, [item("a", "BENAR"), item("b", "SALAH")], deterministic=True)
    assert [r.verdict for r in results] == ["supported", "unsupported"]
    assert judge.calls == [["a", "b"]]  # no second call: alone, b would get the same verdict
    assert (stats.first_pass, stats.rechecks, stats.skipped, stats.checks_used) == (2, 0, 1, 2)


def test_recheck_saying_supported_is_disputed() -> None:
    judge = FakeJudge(script={"X": ["unsupported", "supported"]})
    results, stats = recheck(judge, [item("a", "X"), item("b", "BENAR")])
    assert (results[0].verdict, results[0].unverified_reason) == ("unverified", "disputed")
    assert results[0].reasons == ("scripted:unsupported",)
    assert results[1].verdict == "supported" and stats.disputed == 1


@pytest.mark.parametrize("reason", ["judge_unavailable", "unparseable", "deadline", "budget"])
def test_recheck_failing_gives_its_own_reason(reason: str) -> None:
    judge = FakeJudge(script={"X": ["unsupported", failed(reason)]})
    (result,), _ = recheck(judge, [item("a", "X")])
    assert (result.verdict, result.unverified_reason) == ("unverified", reason)


def test_recheck_raising_is_judge_unavailable() -> None:
    judge = FakeJudge(script={"X": ["unsupported", RuntimeError("boom")]})
    results, _ = recheck(judge, [item("a", "X"), item("b", "SALAH")])
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unverified", "judge_unavailable"),
        ("unsupported", None),
    ]


def test_recheck_past_deadline_is_deadline_and_not_sent() -> None:
    judge = FakeJudge(delay=0.3)
    results, stats = recheck(judge, [item("a", "SALAH", deadline=soon(0.15)), item("b", "SALAH")])
    # a's first pass came back late → deadline; b's re-check was sent alone
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unverified", "deadline"),
        ("unsupported", None),
    ]
    assert judge.calls == [["a", "b"], ["b"]]


def test_recheck_needs_its_own_deadline_time() -> None:
    async def first_pass_only(items: list[JudgeItem]) -> list[JudgeResult]:
        await asyncio.sleep(0.05)  # a judge_fn that keeps verdicts, but the deadline passes meanwhile
        return [JudgeResult(i.item_id, "unsupported") for i in items]

    stats = RecheckStats()
    (result,) = run(
        judge_with_recheck(first_pass_only, [item("a", "SALAH", deadline=soon(0.02))], stats=stats)
    )
    assert result.unverified_reason == "deadline" and stats.rechecks == 0


def test_budget_for_first_pass_and_rechecks() -> None:
    items = [item("a", "SALAH 1"), item("b", "SALAH 2"), item("c", "BENAR")]
    results, stats = recheck(FakeJudge(), items, calls_left=4)
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unsupported", None),
        ("unverified", "budget"),
        ("supported", None),
    ]
    assert stats.checks_used == 4
    results, stats = recheck(FakeJudge(), items, calls_left=2)
    assert [r.unverified_reason for r in results] == ["budget", "budget", "budget"]
    assert stats.checks_used == 2


def test_separate_recheck_function() -> None:
    first, second = FakeJudge(), FakeJudge(script={"SALAH": ["supported"]})
    stats = RecheckStats()
    results = run(
        judge_with_recheck(
            partial(judge_batch, first),
            [item("a", "SALAH")],
            recheck_fn=partial(judge_batch, second),
            stats=stats,
        )
    )
    assert results[0].unverified_reason == "disputed"
    assert first.calls == [["a"]] and second.calls == [["a"]]
