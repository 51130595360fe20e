"""The JudgePool deployment alone on a real Ray Serve (num_cpus=2, fractional replica): results in order and
equal to the in-process ``judge_batch``, dynamic batching across concurrent requests, deadlines honoured."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.judge_pool import (
    batch_histogram,
    bins_from_cumulative,
    histogram_delta,
    judge_pool_app,
    request_items,
)
from judge.batching import judge_batch
from judge.rules import RuleJudge
from judge.types import JudgeItem, JudgeResult
from serve_app.config import AppConfig, DeploymentConfig, JudgeConfig, ServeConfig

pytestmark = [pytest.mark.ray, pytest.mark.slow]

BATCH_WAIT_S = 0.05
MAX_BATCH = 32


@pytest.fixture(scope="module")
def judge_pool() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    from ray import serve

    cfg = AppConfig(judge=JudgeConfig(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S),
                    serve=ServeConfig(deployments={"JudgePool": DeploymentConfig(num_cpus=0.1,
                                                                                 max_ongoing_requests=256)}))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        serve.start(proxy_location="Disabled")
        yield serve.run(judge_pool_app(cfg.model_dump(mode="json")), name="judgepool", route_prefix=None)
    finally:
        serve.shutdown()
        ray.shutdown()


def _local(items: list[JudgeItem]) -> list[JudgeResult]:
    return asyncio.run(judge_batch(RuleJudge(), items))


async def _concurrently(handle: Any, requests: list[list[JudgeItem]]) -> list[list[JudgeResult]]:
    tasks = [asyncio.create_task(_call(handle, items)) for items in requests]
    return list(await asyncio.gather(*tasks))


async def _call(handle: Any, items: list[JudgeItem]) -> list[JudgeResult]:
    results: list[JudgeResult] = await handle.judge_many.remote(items)
    return results


def test_concurrent_requests_match_in_process_results_in_order(judge_pool: Any) -> None:
    requests = [request_items(n) for n in range(12)]
    got = asyncio.run(_concurrently(judge_pool, requests))
    for items, results in zip(requests, got, strict=True):
        assert [r.item_id for r in results] == [i.item_id for i in items]
        assert results == _local(items)
    verdicts = {r.verdict for results in got for r in results}
    assert verdicts == {"supported", "unsupported"}  # the items really exercise the judge both ways


def test_batches_span_several_requests(judge_pool: Any) -> None:
    async def scenario() -> tuple[dict[str, float], dict[str, float]]:
        before = batch_histogram(await judge_pool.metrics_text.remote())
        await _concurrently(judge_pool, [request_items(n) for n in range(8)])
        after = batch_histogram(await judge_pool.metrics_text.remote())
        return before, after

    before, after = asyncio.run(scenario())
    delta = histogram_delta(before, after)
    per_request = len(request_items(0))
    assert delta["sum"] == 8 * per_request  # every item went through the batched method exactly once
    # Batches above 8 items hold items of at least two requests (6 each): cross-request batching happened.
    assert delta["+Inf"] - delta["8.0"] >= 1, bins_from_cumulative(delta)
    assert delta["count"] < 8, bins_from_cumulative(delta)


def test_item_past_its_deadline_comes_back_unverified(judge_pool: Any) -> None:
    items = request_items(0)
    late = JudgeItem("late", items[0].claim, items[0].passages, context=items[0].context,
                     deadline=time.time() - 1)
    results = asyncio.run(_call(judge_pool, [items[1], late, items[2]]))
    assert [r.item_id for r in results] == [items[1].item_id, "late", items[2].item_id]
    assert results[1].verdict == "unverified" and results[1].unverified_reason == "deadline"
    assert results[0] == _local([items[1]])[0] and results[2] == _local([items[2]])[0]
    assert _local([items[0]])[0].verdict == "supported"  # in time, the same claim is judged supported
