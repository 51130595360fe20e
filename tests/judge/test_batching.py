from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from judge.batching import BatchCollector, apply_budget, judge_batch, recording
from judge.llm_judge import LLMJudge
from judge.recheck import RecheckStats, judge_with_recheck
from judge.types import JudgeResult
from models.base import CallRecord
from tests.support.engines import FakeEngine
from tests.support.judges import FakeJudge, item, soon

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_same_length_same_order_grouped_by_passage() -> None:
    judge = FakeJudge()
    items = [
        item("a", "BENAR 1", "X"),
        item("b", "SALAH 2", "Y"),
        item("c", "SALAH 3", "X"),
        item("d", "BENAR 4", "Y"),
        item("e", "BENAR 5", "X", key="P2"),
    ]
    results = run(judge_batch(judge, items))
    assert [r.item_id for r in results] == ["a", "b", "c", "d", "e"]
    assert [r.verdict for r in results] == [
        "supported",
        "unsupported",
        "unsupported",
        "supported",
        "supported",
    ]
    assert judge.calls == [["a", "c", "b", "d", "e"]]  # same passages adjacent; another key is another prefix


def test_duplicate_ids_from_different_requests_stay_apart() -> None:
    results = run(judge_batch(FakeJudge(), [item("c0", "BENAR"), item("c0", "SALAH")]))
    assert [r.verdict for r in results] == ["supported", "unsupported"]


def test_deadline_items_are_never_sent() -> None:
    engine = FakeEngine()
    items = [item("a", "BENAR lewat", deadline=time.time() - 0.1), item("b", "BENAR kini", deadline=soon(30))]
    results = run(judge_batch(LLMJudge(engine), items))
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unverified", "deadline"),
        ("supported", None),
    ]
    assert not any("BENAR lewat" in p for call in engine.classify_calls for p in call)
    judge = FakeJudge()
    run(judge_batch(judge, [item("z", "BENAR", deadline=time.time() - 1)]))
    assert judge.calls == []  # nothing left to send: no call at all


def test_verdict_back_after_the_deadline_is_not_kept() -> None:
    judge = FakeJudge(delay=0.08)
    results = run(judge_batch(judge, [item("a", "BENAR", deadline=soon(0.03)), item("b", "BENAR")]))
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unverified", "deadline"),
        ("supported", None),
    ]


@pytest.mark.parametrize(
    "judge", [FakeJudge(error=RuntimeError("gpu fell over")), FakeJudge(result_count_off=1)]
)
def test_failing_batch_gives_each_item_judge_unavailable(judge: FakeJudge) -> None:
    results = run(judge_batch(judge, [item("a", "BENAR"), item("b", "SALAH")]))
    assert [(r.item_id, r.verdict, r.unverified_reason) for r in results] == [
        ("a", "unverified", "judge_unavailable"),
        ("b", "unverified", "judge_unavailable"),
    ]


def test_one_failing_item_does_not_touch_the_others() -> None:
    judge = FakeJudge(script={"KACAU": [JudgeResult("?", "unverified", unverified_reason="unparseable")]})
    results = run(judge_batch(judge, [item("a", "BENAR"), item("b", "KACAU"), item("c", "SALAH")]))
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("supported", None),
        ("unverified", "unparseable"),
        ("unsupported", None),
    ]


def test_apply_budget() -> None:
    items = [item(str(i), "BENAR") for i in range(5)]
    sendable, over = apply_budget(items, 3)
    assert [i.item_id for i in sendable] == ["0", "1", "2"]
    assert [(r.item_id, r.verdict, r.unverified_reason) for r in over] == [
        ("3", "unverified", "budget"),
        ("4", "unverified", "budget"),
    ]
    assert apply_budget(items, -2)[0] == [] and len(apply_budget(items, 0)[1]) == 5
    assert apply_budget(items, 10) == (items, [])


def test_collector_batches_concurrent_callers() -> None:
    async def scenario() -> tuple[list[JudgeResult], FakeJudge, list[int]]:
        judge = FakeJudge(delay=0.01)
        sizes: list[int] = []
        collector = BatchCollector(judge, max_batch_size=8, batch_wait_timeout_s=0.02, on_batch=sizes.append)
        items = [item(f"i{n}", "BENAR" if n % 3 else "SALAH", f"passage {n % 4}") for n in range(50)]
        results = await asyncio.gather(*(collector.submit(it) for it in items))
        await collector.aclose()
        assert list(collector.batch_sizes) == sizes
        return list(results), judge, sizes

    results, judge, sizes = run(scenario())
    assert [r.item_id for r in results] == [f"i{n}" for n in range(50)]
    assert [r.verdict for r in results] == ["unsupported" if n % 3 == 0 else "supported" for n in range(50)]
    assert sum(sizes) == 50 and max(sizes) <= 8 and len(judge.calls) == len(sizes) < 50


def test_collector_cancelled_caller_is_dropped_before_sending() -> None:
    async def scenario() -> FakeJudge:
        judge = FakeJudge()
        collector = BatchCollector(judge, max_batch_size=100, batch_wait_timeout_s=30.0)
        keep = asyncio.create_task(collector.submit(item("keep", "BENAR")))
        gone = asyncio.create_task(collector.submit(item("gone", "BENAR")))
        await asyncio.sleep(0.01)
        assert collector.pending == 2
        gone.cancel()
        await asyncio.sleep(0)
        assert collector.pending == 1
        collector.set_batch_wait_timeout_s(0.0)  # live change wakes the waiting batcher
        assert (await asyncio.wait_for(keep, 5)).verdict == "supported"
        with pytest.raises(asyncio.CancelledError):
            await gone
        await collector.aclose()
        return judge

    assert run(scenario()).calls == [["keep"]]


def test_collector_cancel_after_sending_leaves_others_intact() -> None:
    async def scenario() -> list[JudgeResult]:
        collector = BatchCollector(FakeJudge(delay=0.05), max_batch_size=2, batch_wait_timeout_s=0.0)
        tasks = [asyncio.create_task(collector.submit(item(n, "BENAR"))) for n in ("a", "b")]
        await asyncio.sleep(0.02)  # the batch is in flight
        tasks[0].cancel()
        result = await tasks[1]
        await collector.aclose()
        return [result]

    assert run(scenario())[0].verdict == "supported"


def test_collector_settings_change_live() -> None:
    async def scenario() -> list[int]:
        collector = BatchCollector(FakeJudge(), max_batch_size=100, batch_wait_timeout_s=0.01)
        await asyncio.gather(*(collector.submit(item(str(n), "BENAR")) for n in range(6)))
        collector.set_max_batch_size(2)
        collector.set_batch_wait_timeout_s(0.0)
        await asyncio.gather(*(collector.submit(item(str(n), "BENAR")) for n in range(6)))
        await collector.aclose()
        return list(collector.batch_sizes)

    sizes = run(scenario())
    assert sizes[0] == 6 and sizes[1:] == [2, 2, 2]
    with pytest.raises(ValueError):
        BatchCollector(FakeJudge()).set_max_batch_size(0)


def test_collector_sends_early_for_a_near_deadline() -> None:
    async def scenario() -> tuple[JudgeResult, float]:
        collector = BatchCollector(FakeJudge(), max_batch_size=100, batch_wait_timeout_s=5.0)
        started = time.monotonic()
        result = await collector.submit(item("a", "BENAR", deadline=soon(0.05)))
        await collector.aclose()
        return result, time.monotonic() - started

    result, took = run(scenario())
    assert took < 1.0 and result.unverified_reason == "deadline"


def test_collector_survives_a_failing_judge_and_closes() -> None:
    async def scenario() -> list[JudgeResult]:
        collector = BatchCollector(FakeJudge(error=RuntimeError("x")), batch_wait_timeout_s=0.0)
        results = await asyncio.gather(*(collector.submit(item(str(n), "BENAR")) for n in range(3)))
        await collector.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await collector.submit(item("late", "BENAR"))
        return list(results)

    assert {r.unverified_reason for r in run(scenario())} == {"judge_unavailable"}


def test_pipeline_wiring_collector_recheck_and_records() -> None:
    """The in-process path: collector-backed judge_fn, re-check, and every call record collected."""

    async def scenario() -> tuple[list[JudgeResult], list[CallRecord], RecheckStats, list[int]]:
        engine = FakeEngine(flip=["SALAH dibantah"])
        collector = BatchCollector(LLMJudge(engine), max_batch_size=8, batch_wait_timeout_s=0.005)
        log: list[CallRecord] = []
        stats = RecheckStats()
        items = [item("a", "BENAR"), item("b", "SALAH"), item("c", "SALAH dibantah")]
        fn = recording(collector.submit_many_outcomes, log)
        results = await judge_with_recheck(fn, items, stats=stats)
        await collector.aclose()
        return results, log, stats, list(collector.batch_sizes)

    results, log, stats, sizes = run(scenario())
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("supported", None),
        ("unsupported", None),
        ("unverified", "disputed"),
    ]
    assert len(log) == stats.checks_used == 5 and sizes[0] == 3


def test_submit_many_cancelled_frees_all_its_items() -> None:
    async def scenario() -> FakeJudge:
        judge = FakeJudge()
        collector = BatchCollector(judge, max_batch_size=100, batch_wait_timeout_s=30.0)
        many = asyncio.create_task(collector.submit_many([item("x", "BENAR"), item("y", "BENAR")]))
        other = asyncio.create_task(collector.submit(item("z", "BENAR")))
        await asyncio.sleep(0.01)
        many.cancel()
        await asyncio.sleep(0.01)
        assert collector.pending == 1
        collector.set_max_batch_size(1)
        assert (await asyncio.wait_for(other, 5)).item_id == "z"
        await collector.aclose()
        return judge

    assert run(scenario()).calls == [["z"]]
