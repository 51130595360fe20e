"""Fake judges on the real ABC (judge.base.Judge) and the judge items they read."""

from __future__ import annotations

import asyncio
import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from judge.base import Judge
from judge.batching import judge_batch, unverified
from judge.rules import RuleJudge
from judge.types import JudgeItem, JudgePassage, JudgeResult


def item(
    item_id: str,
    claim: str,
    passage: str = "Anggaran pendidikan Aceh tahun 2023 sebesar Rp 5 miliar.",
    *,
    key: str = "P1",
    identity: dict[str, str | int | None] | None = None,
    context: str = "",
    deadline: float | None = None,
) -> JudgeItem:
    ident: dict[str, str | int | None] = (
        identity if identity is not None else {"title": "Qanun Anggaran", "year": 2023}
    )
    return JudgeItem(item_id, claim, (JudgePassage(key, passage, ident),), context=context, deadline=deadline)


Verdict = str | JudgeResult | Callable[[JudgeItem], JudgeResult]
Hook = Callable[[int, list[JudgeItem]], Any]


class ScriptedJudge(Judge):
    """A judge the test scripts, two ways. ``script[claim]`` is a verdict ("supported", "unsupported",
    "unverified", or "raise" to fail the call), a JudgeResult, a function of the item, or a list of those
    consumed call by call (first pass, then the re-check). ``hook(round, items)`` may sleep, raise, or
    return the results to use (None: carry on); ``round`` is 1 for a first pass and 2 for a re-check (how
    many times the items were judged, whether the annotator sends them one by one or together).
    What neither decides, ``default`` does: a verdict as in ``script``, or ``"rules"`` for the real
    :class:`~judge.rules.RuleJudge`. ``down`` fails every call; ``slow[claim]`` delays any call holding it."""

    name = "scripted"

    def __init__(
        self,
        script: dict[str, Verdict | list[Verdict]] | None = None,
        *,
        hook: Hook | None = None,
        default: Verdict = "supported",
        down: bool = False,
        slow: dict[str, float] | None = None,
    ) -> None:
        self.script = {k: list(v) if isinstance(v, list) else v for k, v in (script or {}).items()}
        self.hook = hook
        self.default = default
        self.down = down
        self.slow = slow or {}
        self.rules = RuleJudge()
        self.calls: list[list[JudgeItem]] = []
        self.seen: Counter[str] = Counter()  # item id -> times judged

    @property
    def claims_sent(self) -> list[str]:
        return [item.claim for call in self.calls for item in call]

    def _one(self, item: JudgeItem, entry: Verdict | list[Verdict]) -> JudgeResult:
        if isinstance(entry, list):
            entry = entry.pop(0) if len(entry) > 1 else entry[0]
        if callable(entry):
            return entry(item)
        if isinstance(entry, JudgeResult):
            return entry
        if entry == "raise":
            raise ConnectionError("judge server down")
        reason = "judge_unavailable" if entry == "unverified" else None
        return JudgeResult(
            item.item_id,
            entry,  # type: ignore[arg-type]
            (f"scripted_{entry}",),
            reason,  # type: ignore[arg-type]
            ((item.passages[0].key, 0, 3),) if entry == "supported" else (),
        )

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        items = list(items)
        self.calls.append(items)
        self.seen.update(i.item_id for i in items)
        delay = max((self.slow.get(item.claim, 0.0) for item in items), default=0.0)
        if delay:
            await asyncio.sleep(delay)
        if self.down:
            raise ConnectionError("judge server down")
        if self.hook is not None and items:
            outcome = self.hook(max(self.seen[i.item_id] for i in items), items)
            if asyncio.iscoroutine(outcome):
                outcome = await outcome
            if outcome is not None:
                return list(outcome)
        by_rules = [i for i in items if i.claim not in self.script and self.default == "rules"]
        ruled = iter(await self.rules.judge(by_rules) if by_rules else [])
        return [
            next(ruled) if item in by_rules else self._one(item, self.script.get(item.claim, self.default))
            for item in items
        ]


def judge_fn_of(judge: Judge) -> Callable[[list[JudgeItem]], Any]:
    """The judge function the annotator takes, as the JudgePool's batch method does it."""
    return functools.partial(judge_batch, judge)


class FakeJudge(Judge):
    """Verdicts by claim word (BENAR supported, SALAH unsupported); ``script`` gives per-claim sequences."""

    name = "fake"

    def __init__(
        self,
        *,
        delay: float = 0.0,
        error: Exception | None = None,
        script: dict[str, list[JudgeResult | str | Exception]] | None = None,
        result_count_off: int = 0,
    ) -> None:
        self.delay = delay
        self.error = error
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.result_count_off = result_count_off
        self.calls: list[list[str]] = []

    def _one(self, it: JudgeItem) -> JudgeResult:
        steps = self.script.get(it.claim)
        if steps:
            step = steps.pop(0)
            if isinstance(step, Exception):
                raise step
            if isinstance(step, JudgeResult):
                return JudgeResult(it.item_id, step.verdict, step.reasons, step.unverified_reason)
            return JudgeResult(it.item_id, step, reasons=(f"scripted:{step}",))  # type: ignore[arg-type]
        if "BENAR" in it.claim:
            return JudgeResult(it.item_id, "supported")
        if "SALAH" in it.claim:
            return JudgeResult(it.item_id, "unsupported", reasons=("figure_mismatch",))
        return unverified(it, "unparseable")

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        self.calls.append([it.item_id for it in items])
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        results = [self._one(it) for it in items]
        return results[: len(results) - self.result_count_off]


def soon(seconds: float) -> float:
    return time.time() + seconds
