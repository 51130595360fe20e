"""The re-check: an ``unsupported`` verdict stands only if judging that segment alone confirms it.

First pass: every item in one call. Then each ``unsupported`` item is judged again alone (one call per item,
all in parallel). Re-check ``unsupported`` confirms it; re-check ``supported`` makes it
``unverified``/``disputed``; a re-check that itself fails gives its own reason (``deadline``, ``budget``,
``judge_unavailable``, ``unparseable``). ``supported`` and ``unverified`` first-pass results stay.

A deterministic judge (``Judge.deterministic``, the rule judge) is not re-checked: judged alone, an item gets
the same verdict, so the re-check would spend budget and time for nothing (``deterministic=True``; the count
of verdicts left un-re-checked is in ``RecheckStats.skipped``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from judge.batching import apply_budget, is_past, unverified
from judge.types import JudgeItem, JudgeResult

JudgeFn = Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]]


@dataclass(slots=True)
class RecheckStats:
    """What one :func:`judge_with_recheck` call spent; ``checks_used`` is what to charge the budget."""

    first_pass: int = 0  # items handed to the judge in the first pass
    rechecks: int = 0  # items handed to the judge again, alone
    confirmed: int = 0
    disputed: int = 0
    skipped: int = 0  # unsupported verdicts of a deterministic judge, not re-checked

    @property
    def checks_used(self) -> int:
        return self.first_pass + self.rechecks


async def _safe_call(judge_fn: JudgeFn, items: list[JudgeItem]) -> list[JudgeResult]:
    """``judge_fn`` with its contract enforced: one result per item, same ids, never an exception."""
    try:
        results = list(await judge_fn(items))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failed call makes its items unverified, nothing more
        return [unverified(item, "judge_unavailable", type(exc).__name__) for item in items]
    if len(results) != len(items):
        return [unverified(item, "judge_unavailable", "wrong_result_count") for item in items]
    mismatched = "mismatched_result"
    return [
        result if result.item_id == item.item_id else unverified(item, "judge_unavailable", mismatched)
        for item, result in zip(items, results, strict=True)
    ]


def _settle(first: JudgeResult, again: JudgeResult, stats: RecheckStats) -> JudgeResult:
    if again.verdict == "unsupported":
        stats.confirmed += 1
        reasons = first.reasons + tuple(r for r in again.reasons if r not in first.reasons)
        return JudgeResult(first.item_id, "unsupported", reasons=reasons, spans=first.spans)
    if again.verdict == "supported":
        stats.disputed += 1
        return JudgeResult(first.item_id, "unverified", reasons=first.reasons, unverified_reason="disputed")
    # The re-check failed: its own reason, never a guess either way.
    return JudgeResult(
        first.item_id, "unverified", reasons=again.reasons, unverified_reason=again.unverified_reason
    )


async def judge_with_recheck(
    judge_fn: JudgeFn,
    items: Sequence[JudgeItem],
    *,
    recheck_fn: JudgeFn | None = None,
    calls_left: int | None = None,
    stats: RecheckStats | None = None,
    deterministic: bool = False,
) -> list[JudgeResult]:
    """Final verdicts for ``items`` (same order, one each), after re-checking every ``unsupported`` one.

    ``judge_fn`` (``list[JudgeItem] -> list[JudgeResult]``, e.g. ``partial(judge_batch, judge)`` or a
    collector-backed function) judges the first pass; ``recheck_fn`` (default ``judge_fn``) the re-checks.
    ``calls_left`` is the request's remaining model-call budget (``None`` = unlimited): items beyond it, first
    pass or re-check, come back ``unverified``/``budget``. Items past their deadline are not handed over.
    ``stats`` (optional) receives the counts; charge ``stats.checks_used`` to the budget. ``deterministic``:
    the judge gives the same verdict alone as in a batch; its first-pass verdicts are final.
    """
    stats = stats if stats is not None else RecheckStats()
    recheck_fn = recheck_fn or judge_fn
    items = list(items)
    results: list[JudgeResult | None] = [None] * len(items)

    send: list[int] = []
    for index, item in enumerate(items):
        if is_past(item.deadline):
            results[index] = unverified(item, "deadline")
        else:
            send.append(index)
    if calls_left is not None:
        within, _ = apply_budget([items[i] for i in send], calls_left)
        for index in send[len(within) :]:
            results[index] = unverified(items[index], "budget")
        send = send[: len(within)]
    if send:
        stats.first_pass += len(send)
        for index, result in zip(send, await _safe_call(judge_fn, [items[i] for i in send]), strict=True):
            results[index] = result

    first = [r for r in results if r is not None]
    if deterministic:
        stats.skipped += sum(r.verdict == "unsupported" for r in first)
        return first
    recheck: list[int] = []
    for index, result in enumerate(first):
        if result.verdict != "unsupported":
            continue
        if is_past(items[index].deadline):
            results[index] = _settle(result, unverified(items[index], "deadline"), stats)
        elif calls_left is not None and len(send) + len(recheck) >= calls_left:
            results[index] = _settle(result, unverified(items[index], "budget"), stats)
        else:
            recheck.append(index)
    if recheck:
        stats.rechecks += len(recheck)
        again = await asyncio.gather(*(_safe_call(recheck_fn, [items[i]]) for i in recheck))
        for index, (result,) in zip(recheck, again, strict=True):
            results[index] = _settle(first[index], result, stats)
    return [r for r in results if r is not None]
