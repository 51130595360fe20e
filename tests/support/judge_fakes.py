"""Small fakes implementing the real ABCs (models.base.Engine, judge.base.Judge) for the judge-pool tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from judge.base import Judge
from judge.batching import unverified
from judge.types import JudgeItem, JudgePassage, JudgeResult
from models.base import (
    CallRecord,
    Classification,
    Engine,
    Generation,
    ModelError,
    deadline_left,
)


def segment_of(prompt: str) -> str:
    return prompt.split("<segment>\n", 1)[1].split("\n</segment>", 1)[0]


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


class FakeEngine(Engine):
    """Scores a prompt by the words in its segment: BENAR → yes 0.9, SALAH → yes 0.1, RAGU → a tie.

    ``flip`` lists segments whose verdict flips on every second call (to exercise the re-check).
    """

    name = "fake"
    model = "fake-judge"

    def __init__(
        self,
        *,
        error: ModelError | None = None,
        delay: float = 0.0,
        flip: Sequence[str] = (),
        json_outputs: dict[str, Any] | None = None,
    ) -> None:
        self.error = error
        self.delay = delay
        self.flip = set(flip)
        self.json_outputs = json_outputs or {}
        self.classify_calls: list[list[str]] = []
        self.generate_calls: list[list[dict[str, str]]] = []
        self.seen: dict[str, int] = {}

    def _record(self, role: str, prompt: str, *, ok: bool = True, error: str | None = None) -> CallRecord:
        return CallRecord(role, self.name, self.model, prompt_tokens=len(prompt.split()), ok=ok, error=error)

    def _p_yes(self, segment: str) -> float:
        count = self.seen.get(segment, 0)
        self.seen[segment] = count + 1
        if "RAGU" in segment:
            return 0.5
        p = 0.9 if "BENAR" in segment else 0.1
        return 1 - p if segment in self.flip and count % 2 == 1 else p

    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        deadline_left(deadline)
        self.classify_calls.append(list(prompts))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            self.error.record = self._record(role, "".join(prompts), ok=False, error=self.error.code)
            raise self.error
        out = []
        for prompt in prompts:
            p = self._p_yes(segment_of(prompt))
            out.append(Classification({labels[0]: p, labels[1]: 1 - p}, self._record(role, prompt)))
        return out

    async def generate(
        self,
        messages: list[dict[str, str]],
        *,
        role: str,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        deadline: float | None = None,
    ) -> Generation:
        deadline_left(deadline)
        self.generate_calls.append(messages)
        segment = segment_of(messages[-1]["content"])
        if self.delay:
            await asyncio.sleep(self.delay)
        for word, output in self.json_outputs.items():
            if word in segment:
                if isinstance(output, ModelError):
                    raise output
                if isinstance(output, str):
                    return Generation(output, self._record(role, segment))
                return Generation("", self._record(role, segment), parsed=output)
        verdict = "supported" if self._p_yes(segment) > 0.5 else "unsupported"
        return Generation(
            f'{{"verdict": "{verdict}", "reason": "because {verdict}"}}', self._record(role, segment)
        )


class FakePairsEngine(FakeEngine):
    """A FakeEngine that can also take (prefix, suffix) pairs, like an engine with prefix reuse."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pair_calls: list[list[tuple[str, str]]] = []

    async def classify_pairs(
        self, pairs: list[tuple[str, str]], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        self.pair_calls.append(list(pairs))
        return await self.classify([p + s for p, s in pairs], labels, role=role, deadline=deadline)


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
