"""Dynamic batching drivers of benchmarks/judge_gpu.py: concurrent callers through ``judge.batching``'s
collector, or through this file's own queue (``--collector queue``, for judge packages without one)."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from models.transformers_engine import TransformersEngine

LABELS: tuple[str, str] = ("yes", "no")


def collector_driver(judge: Any, args: argparse.Namespace) -> Callable[[list[Any]], Awaitable[Any]]:
    """``run(items) -> (results, batch_sizes)``: concurrent callers, one item each at a time, batched."""
    from judge.batching import BatchCollector

    async def run(items: list[Any]) -> tuple[list[Any], list[int]]:
        collector = BatchCollector(
            judge,
            max_batch_size=args.batch_size,
            batch_wait_timeout_s=args.batch_wait_s,
            max_concurrent_batches=2,
        )
        queue = list(items)

        async def caller() -> list[Any]:
            done = []
            while queue:
                done.append(await collector.submit(queue.pop()))
            return done

        results = [
            r for part in await asyncio.gather(*(caller() for _ in range(args.concurrency))) for r in part
        ]
        await collector.aclose()
        assert all(r.verdict != "unverified" for r in results), results[:3]
        return results, list(collector.batch_sizes)

    return run


def has_judge_batching() -> bool:
    try:
        from judge.batching import BatchCollector  # noqa: F401
        from judge.llm_judge import LLMJudge  # noqa: F401
    except ImportError:
        return False
    return True


async def fallback_collector(
    engine: TransformersEngine, items: list[tuple[str, str]], args: argparse.Namespace
) -> tuple[list[Any], list[int]]:
    """Concurrent callers put (prefix, suffix) pairs on a queue; one loop sends what has gathered."""
    queue: asyncio.Queue[tuple[tuple[str, str], asyncio.Future[Any]]] = asyncio.Queue()
    sizes: list[int] = []

    async def batcher() -> None:
        while True:
            batch = [await queue.get()]
            end = time.monotonic() + args.batch_wait_s
            while len(batch) < args.batch_size and (left := end - time.monotonic()) > 0:
                try:
                    batch.append(await asyncio.wait_for(queue.get(), left))
                except TimeoutError:
                    break
            sizes.append(len(batch))
            scored = await engine.classify_pairs([pair for pair, _ in batch], list(LABELS), role="judge")
            for (_, future), result in zip(batch, scored, strict=True):
                future.set_result(result)

    pending = list(items)

    async def caller() -> list[Any]:
        done = []
        while pending:
            future = asyncio.get_running_loop().create_future()
            await queue.put((pending.pop(), future))
            done.append(await future)
        return done

    task = asyncio.create_task(batcher())
    results = [r for part in await asyncio.gather(*(caller() for _ in range(args.concurrency))) for r in part]
    task.cancel()
    return results, sizes
