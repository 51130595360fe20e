"""An engine wrapper that reports every model call's record to an observer (the service's metrics).

It changes nothing else: same results, same errors. A batched ``classify`` is one call to the server, so the
observer sees it once (tokens summed over the prompts, the call's latency), not once per prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence

from models.base import CallRecord, Classification, Engine, GenArgs, Generation, ModelError, PairClassifier

CallObserver = Callable[[CallRecord], None]


def _batch_record(scored: list[Classification], role: str, engine: Engine) -> CallRecord:
    records = [c.record for c in scored]
    return CallRecord(
        role=role,
        engine=engine.name,
        model=engine.model,
        prompt_tokens=sum(r.prompt_tokens for r in records),
        completion_tokens=sum(r.completion_tokens for r in records),
        latency_ms=max((r.latency_ms for r in records), default=0.0),
    )


class MeteredEngine(Engine):
    def __init__(self, inner: Engine, observe: CallObserver) -> None:
        self.inner = inner
        self.observe = observe
        self.name = inner.name
        self.model = inner.model
        if isinstance(inner, PairClassifier):  # the LLM judge looks the method up; keep it visible
            self.classify_pairs = functools.partial(self._classify_pairs, inner)

    def _failed(self, exc: ModelError, role: str) -> None:
        self.observe(exc.record or CallRecord(role, self.name, self.model, ok=False, error=exc.code))

    async def _generate(self, messages: list[dict[str, str]], request: GenArgs) -> Generation:
        try:
            generation = await self.inner.generate(messages, **request.as_kwargs())
        except ModelError as exc:
            self._failed(exc, request.role)
            raise
        self.observe(generation.record)
        return generation

    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        return await self._scored(self.inner.classify(prompts, labels, role=role, deadline=deadline), role)

    async def _classify_pairs(
        self,
        inner: PairClassifier,
        pairs: list[tuple[str, str]],
        labels: list[str],
        *,
        role: str,
        deadline: float | None = None,
    ) -> list[Classification]:
        return await self._scored(inner.classify_pairs(pairs, labels, role=role, deadline=deadline), role)

    async def _scored(self, call: Awaitable[Sequence[Classification]], role: str) -> list[Classification]:
        """One batched call's outcome to the observer: its summed record, or the failed call's record."""
        try:
            scored = list(await call)
        except ModelError as exc:
            self._failed(exc, role)
            raise
        if scored:
            self.observe(_batch_record(scored, role, self))
        return scored

    async def aclose(self) -> None:
        await self.inner.aclose()
