"""One fake model engine on the real ABC (models.base.Engine), for the judge, framing and writer tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from models.base import CallRecord, Classification, Engine, GenArgs, Generation, ModelError, deadline_left
from models.json_types import JSON

Messages = list[dict[str, str]]
Schema = JSON | None


def segment_of(prompt: str) -> str:
    return prompt.split("<segment>\n", 1)[1].split("\n</segment>", 1)[0]


class BaseFakeEngine(Engine):
    """The Engine ABC's two calls written once for every fake: ``generate`` (its ``_generate``) hands the
    arguments a fake looks at to ``answer``, ``classify`` hands them to ``score``; a fake overrides what it
    does."""

    name = "fake"
    model = "fake"

    async def _generate(self, messages: Messages, request: GenArgs) -> Generation:
        return await self.answer(
            messages, role=request.role, json_schema=request.json_schema, deadline=request.deadline
        )

    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        return await self.score(prompts, labels, role=role, deadline=deadline)

    async def answer(
        self, messages: Messages, *, role: str, json_schema: Schema, deadline: float | None
    ) -> Generation:
        raise NotImplementedError(f"{type(self).__name__} does not generate")

    async def score(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None
    ) -> list[Classification]:
        raise NotImplementedError(f"{type(self).__name__} does not classify")


class FakeEngine(BaseFakeEngine):
    """Two behaviours on one engine. Scripted (``parsed`` or ``text`` given): ``generate`` returns them as
    its generation, with ``finish_reason``, as a framing check would be answered. Otherwise a judge: it
    scores a prompt by the words in its segment: BENAR → yes 0.9, SALAH → yes 0.1, RAGU → a tie; ``flip``
    lists segments whose verdict flips on every second call (to exercise the re-check) and
    ``json_outputs`` maps a segment word to the generation (or ModelError) to give instead.
    ``error`` fails every call (with a failed call record); ``delay`` sleeps before answering;
    ``requests`` and ``classify_calls`` record what was asked."""

    name = "fake"
    model = "fake-judge"

    def __init__(
        self,
        *,
        error: ModelError | None = None,
        delay: float = 0.0,
        flip: Sequence[str] = (),
        json_outputs: dict[str, Any] | None = None,
        parsed: Any = None,
        text: str = "",
        finish_reason: str = "stop",
    ) -> None:
        self.error = error
        self.delay = delay
        self.flip = set(flip)
        self.json_outputs = json_outputs or {}
        self.parsed, self.text, self.finish_reason = parsed, text, finish_reason
        self.scripted = parsed is not None or bool(text)
        self.classify_calls: list[list[str]] = []
        self.requests: list[dict[str, Any]] = []  # every generate call: messages, role, json_schema, deadline
        self.seen: dict[str, int] = {}

    @property
    def generate_calls(self) -> list[list[dict[str, str]]]:
        return [request["messages"] for request in self.requests]

    def _record(self, role: str, prompt: str, *, ok: bool = True, error: str | None = None) -> CallRecord:
        return CallRecord(role, self.name, self.model, prompt_tokens=len(prompt.split()), ok=ok, error=error)

    def _fail(self, role: str, prompt: str) -> None:
        if self.error is not None:
            self.error.record = self._record(role, prompt, ok=False, error=self.error.code)
            raise self.error

    def _p_yes(self, segment: str) -> float:
        count = self.seen.get(segment, 0)
        self.seen[segment] = count + 1
        if "RAGU" in segment:
            return 0.5
        p = 0.9 if "BENAR" in segment else 0.1
        return 1 - p if segment in self.flip and count % 2 == 1 else p

    async def score(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None
    ) -> list[Classification]:
        deadline_left(deadline)
        self.classify_calls.append(list(prompts))
        if self.delay:
            await asyncio.sleep(self.delay)
        self._fail(role, "".join(prompts))
        out = []
        for prompt in prompts:
            p = self._p_yes(segment_of(prompt))
            out.append(Classification({labels[0]: p, labels[1]: 1 - p}, self._record(role, prompt)))
        return out

    async def answer(
        self, messages: Messages, *, role: str, json_schema: Schema, deadline: float | None
    ) -> Generation:
        deadline_left(deadline)
        request = {"messages": messages, "role": role, "json_schema": json_schema, "deadline": deadline}
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        prompt = messages[-1]["content"] if messages else ""
        self._fail(role, prompt)
        if self.scripted:
            return Generation(
                self.text, self._record(role, prompt), parsed=self.parsed, finish_reason=self.finish_reason
            )
        segment = segment_of(prompt)
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
