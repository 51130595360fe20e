"""The Ray-free batching core of the judge pool.

:func:`judge_batch` is what the Ray Serve ``JudgePool`` deployment's ``@serve.batch`` method calls: a list in,
a list of the same length out, in the same order, and never an exception. :class:`BatchCollector` is the same
dynamic batching for one process (CLI, in-process pipeline, GPU benchmark): many concurrent callers
``submit`` single items and one ``judge_batch`` call judges what has gathered.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from judge.base import Judge
from judge.prompt import passage_group_key
from judge.types import JudgeItem, JudgeResult, UnverifiedReason
from models.base import CallRecord


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    """One item's result and the model calls made for it (to charge budget and fill ``model_call_log``)."""

    result: JudgeResult
    records: tuple[CallRecord, ...] = field(default=())


def unverified(item: JudgeItem, reason: UnverifiedReason, *reasons: str) -> JudgeResult:
    return JudgeResult(item.item_id, "unverified", reasons=tuple(reasons), unverified_reason=reason)


def is_past(deadline: float | None, now: float | None = None) -> bool:
    return deadline is not None and (time.time() if now is None else now) >= deadline


def apply_budget(items: Sequence[JudgeItem], calls_left: int) -> tuple[list[JudgeItem], list[JudgeResult]]:
    """Split ``items`` into the first ``calls_left`` (one model call each) and the rest, marked
    ``unverified``/``budget``. The caller charges the budget for what it then sends."""
    room = max(0, calls_left)
    return list(items[:room]), [unverified(item, "budget") for item in items[room:]]


def _grouped_order(items: Sequence[JudgeItem]) -> list[int]:
    """Indices of ``items`` with those citing the same passages adjacent (groups by first appearance)."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(passage_group_key(item), []).append(index)
    return [index for members in groups.values() for index in members]


def _all_unverified(items: Sequence[JudgeItem], why: str) -> list[JudgeOutcome]:
    return [JudgeOutcome(unverified(item, "judge_unavailable", why)) for item in items]


async def _call_judge(judge: Judge, items: list[JudgeItem]) -> list[JudgeOutcome]:
    judge_outcomes = getattr(judge, "judge_outcomes", None)
    if judge_outcomes is not None:
        return list(await judge_outcomes(items))
    return [JudgeOutcome(result) for result in await judge.judge(items)]


async def judge_batch_outcomes(judge: Judge, items: Sequence[JudgeItem]) -> list[JudgeOutcome]:
    """:func:`judge_batch` with each item's call records (judges with ``judge_outcomes`` provide them)."""
    items = list(items)
    outcomes: list[JudgeOutcome | None] = [None] * len(items)
    now = time.time()
    send: list[int] = []
    for index in _grouped_order(items):
        if is_past(items[index].deadline, now):
            outcomes[index] = JudgeOutcome(unverified(items[index], "deadline"))
        else:
            send.append(index)
    if send:
        sent = [items[i] for i in send]
        try:
            returned = await _call_judge(judge, sent)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a judge failure must not lose the other items
            returned = _all_unverified(sent, type(exc).__name__)
        if len(returned) != len(sent):
            returned = _all_unverified(sent, "wrong_result_count")
        finished = time.time()
        for index, outcome in zip(send, returned, strict=True):
            item = items[index]
            if not isinstance(outcome, JudgeOutcome) or outcome.result.item_id != item.item_id:
                outcome = JudgeOutcome(unverified(item, "judge_unavailable", "mismatched_result"))
            elif outcome.result.verdict != "unverified" and is_past(item.deadline, finished):
                # The request's time ran out before this batch came back: the verdict is not used.
                outcome = JudgeOutcome(unverified(item, "deadline"), outcome.records)
            outcomes[index] = outcome
    return [outcome for outcome in outcomes if outcome is not None]


async def judge_batch(judge: Judge, items: Sequence[JudgeItem]) -> list[JudgeResult]:
    """Judge ``items`` in one batch: one result per item, same order, never raising for an item's sake.

    Items past their ``deadline`` are not sent (``unverified``/``deadline``), nor are verdicts kept that came
    back after it. The rest are passed to ``judge`` with items citing the same passages adjacent, so an engine
    can reuse the shared prompt prefix. A judge that raises, or returns the wrong number of results, gives
    ``unverified``/``judge_unavailable`` for each of its items.
    """
    return [outcome.result for outcome in await judge_batch_outcomes(judge, items)]


def recording(
    outcomes_fn: Callable[[list[JudgeItem]], Awaitable[list[JudgeOutcome]]], records: list[CallRecord]
) -> Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]]:
    """A results-only judge function (as :func:`judge.recheck.judge_with_recheck` takes) over an outcomes
    function, appending every call record to ``records`` on the way, e.g.
    ``recording(partial(judge_batch_outcomes, judge), log)`` or
    ``recording(collector.submit_many_outcomes, log)``.
    """

    async def judge_fn(items: list[JudgeItem]) -> list[JudgeResult]:
        outcomes = await outcomes_fn(items)
        for outcome in outcomes:
            records.extend(outcome.records)
        return [outcome.result for outcome in outcomes]

    return judge_fn


@dataclass(slots=True, eq=False)
class _Pending:
    item: JudgeItem
    future: asyncio.Future[JudgeOutcome]
    arrived_at: float  # loop.time() when submitted


class BatchCollector:
    """Dynamic batching without Ray: gathers concurrent ``submit`` calls into :func:`judge_batch` calls.

    A batch is sent when ``max_batch_size`` items wait, or ``batch_wait_timeout_s`` after its first item
    arrived (sooner if a waiting item's deadline comes first). At most ``max_concurrent_batches`` batches run
    at once; items arriving meanwhile form the next batch. A caller cancelled before its item is sent removes
    the item; after that its result is discarded. Each sent batch's size goes to ``batch_sizes`` (the last
    ``batch_history``) and to ``on_batch``.
    """

    def __init__(
        self,
        judge: Judge,
        *,
        max_batch_size: int = 16,
        batch_wait_timeout_s: float = 0.01,
        max_concurrent_batches: int = 1,
        on_batch: Callable[[int], None] | None = None,
        batch_history: int = 1024,
    ) -> None:
        if max_concurrent_batches < 1:
            raise ValueError("max_concurrent_batches must be at least 1")
        self.judge = judge
        self.set_max_batch_size(max_batch_size)
        self.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self.on_batch = on_batch
        self.batch_sizes: collections.deque[int] = collections.deque(maxlen=batch_history)
        self._pending: collections.deque[_Pending] = collections.deque()
        self._arrived = asyncio.Event()
        self._slots = asyncio.Semaphore(max_concurrent_batches)
        self._runner: asyncio.Task[None] | None = None
        self._batches: set[asyncio.Task[None]] = set()
        self._closed = False

    def set_max_batch_size(self, max_batch_size: int) -> None:
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        self.max_batch_size = max_batch_size
        self._wake()

    def set_batch_wait_timeout_s(self, batch_wait_timeout_s: float) -> None:
        if batch_wait_timeout_s < 0:
            raise ValueError("batch_wait_timeout_s must not be negative")
        self.batch_wait_timeout_s = batch_wait_timeout_s
        self._wake()

    def _wake(self) -> None:
        # A waiting runner re-reads the settings now rather than at the end of its old wait.
        arrived = getattr(self, "_arrived", None)
        if arrived is not None:
            arrived.set()

    @property
    def pending(self) -> int:
        return sum(1 for p in self._pending if not p.future.done())

    async def submit(self, item: JudgeItem) -> JudgeResult:
        return (await self.submit_outcome(item)).result

    async def submit_outcome(self, item: JudgeItem) -> JudgeOutcome:
        if self._closed:
            raise RuntimeError("BatchCollector is closed")
        loop = asyncio.get_running_loop()
        entry = _Pending(item, loop.create_future(), loop.time())
        self._pending.append(entry)
        self._arrived.set()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run())
        try:
            return await entry.future
        except asyncio.CancelledError:
            # Free the slot now if the item was not sent yet; a sent item's result is simply dropped.
            if entry in self._pending:
                self._pending.remove(entry)
            raise

    async def submit_many(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        """Submit several items at once (they may land in different batches); results in order."""
        return [outcome.result for outcome in await self.submit_many_outcomes(items)]

    async def submit_many_outcomes(self, items: Sequence[JudgeItem]) -> list[JudgeOutcome]:
        return list(await asyncio.gather(*(self.submit_outcome(item) for item in items)))

    def _drop_cancelled(self) -> None:
        self._pending = collections.deque(p for p in self._pending if not p.future.done())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._drop_cancelled()
            if not self._pending:
                return  # idle: the next submit starts a new runner, so nothing lingers between bursts
            await self._slots.acquire()
            try:
                while True:
                    self._drop_cancelled()
                    if not self._pending or len(self._pending) >= self.max_batch_size:
                        break
                    # The wait counts from the oldest item's arrival, so waiting for a free slot counts too.
                    wait_until = self._pending[0].arrived_at + self.batch_wait_timeout_s
                    deadlines = [p.item.deadline for p in self._pending if p.item.deadline is not None]
                    if deadlines:
                        wait_until = min(wait_until, loop.time() + (min(deadlines) - time.time()))
                    left = wait_until - loop.time()
                    if left <= 0:
                        break
                    self._arrived.clear()
                    try:
                        await asyncio.wait_for(self._arrived.wait(), left)
                    except TimeoutError:
                        break
                batch = [self._pending.popleft() for _ in range(min(self.max_batch_size, len(self._pending)))]
            except BaseException:
                self._slots.release()
                raise
            if not batch:
                self._slots.release()
                continue
            task = asyncio.create_task(self._send(batch))
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)

    async def _send(self, batch: list[_Pending]) -> None:
        try:
            self.batch_sizes.append(len(batch))
            if self.on_batch is not None:
                try:
                    self.on_batch(len(batch))
                except Exception:  # noqa: BLE001 - a metrics hook must not fail the batch
                    pass
            try:
                outcomes = await judge_batch_outcomes(self.judge, [p.item for p in batch])
            except Exception as exc:  # noqa: BLE001 - judge_batch does not raise; this guards a bug there
                outcomes = [
                    JudgeOutcome(unverified(p.item, "judge_unavailable", type(exc).__name__)) for p in batch
                ]
            for entry, outcome in zip(batch, outcomes, strict=True):
                if not entry.future.done():
                    entry.future.set_result(outcome)
        finally:
            for entry in batch:  # cancelled here (shutdown): no caller is left waiting forever
                if not entry.future.done():
                    entry.future.set_result(JudgeOutcome(unverified(entry.item, "judge_unavailable")))
            self._slots.release()

    async def aclose(self) -> None:
        """Stop batching: waiting items come back unverified/judge_unavailable; in-flight batches finish."""
        self._closed = True
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        for entry in self._pending:
            if not entry.future.done():
                entry.future.set_result(JudgeOutcome(unverified(entry.item, "judge_unavailable", "closed")))
        self._pending.clear()
        if self._batches:
            await asyncio.gather(*self._batches, return_exceptions=True)
