"""The LLM judge: the ``judge-v1`` prompt over any :class:`~models.base.Engine`.

Two modes:

* ``"labels"`` (default): one batched ``classify`` call scores the first answer token over the two labels;
  ``supported`` when P(supported) >= ``threshold``. If the engine has
  ``classify_pairs(pairs, labels, *, role, deadline)`` taking ``(prefix, suffix)`` pairs, it is used
  instead, so the engine can encode a prefix shared by several segments once. Items arrive grouped by
  passage (see :func:`judge.batching.judge_batch`).
* ``"json"``: one ``generate`` call per item (concurrently) with :data:`~judge.prompt.JUDGE_JSON_SCHEMA`;
  the model's reason becomes the result's reason.

With ``rule_veto`` an LLM ``supported`` becomes ``unsupported`` (reasons ``rule_veto:<code>``) when the rule
judge's ``hard_contradiction`` finds a figure that contradicts the passages.

Failures map to ``unverified``: engine unavailable or its own timeout → ``judge_unavailable``; the request's
deadline passing → ``deadline``; output that gives no verdict → ``unparseable``. A failing labels call fails
its whole batch (one call); in JSON mode a failing item fails alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Literal

from judge.base import Judge
from judge.batching import JudgeOutcome, is_past, unverified
from judge.prompt import (
    DEFAULT_LABELS,
    JUDGE_JSON_SCHEMA,
    PROMPT_TEMPLATE_VERSION,
    Verdict,
    build_messages,
    build_prompt_parts,
    parse_judge_json,
    parse_label_probs,
)
from judge.types import JudgeItem, JudgeResult
from models.base import (
    CallRecord,
    Classification,
    Engine,
    ModelError,
    ModelOutputError,
    ModelTimeout,
    PairClassifier,
)

JudgeMode = Literal["labels", "json"]
VetoFn = Callable[..., Sequence[str]]  # (claim, passages, *, context="") -> hard contradiction codes


def _load_hard_contradiction() -> VetoFn:
    try:
        from judge.rules import hard_contradiction
    except ImportError as exc:
        raise RuntimeError(
            "rule_veto=True needs judge.rules.hard_contradiction, which could not be imported"
        ) from exc
    veto: VetoFn = hard_contradiction
    return veto


def _group_deadline(items: Sequence[JudgeItem]) -> float | None:
    """The engine call serves every item, so it may run until the latest deadline among them."""
    deadlines = [item.deadline for item in items]
    if any(d is None for d in deadlines):
        return None
    return max(d for d in deadlines if d is not None)


def _failure(item: JudgeItem, exc: BaseException) -> JudgeResult:
    if isinstance(exc, ModelOutputError):
        return unverified(item, "unparseable", exc.code)
    if isinstance(exc, ModelTimeout) and is_past(item.deadline):
        return unverified(item, "deadline")
    if isinstance(exc, ModelError):
        return unverified(item, "judge_unavailable", exc.code)
    return unverified(item, "judge_unavailable", type(exc).__name__)


def _records_of(exc: BaseException) -> tuple[CallRecord, ...]:
    record = getattr(exc, "record", None)
    return (record,) if isinstance(record, CallRecord) else ()


class LLMJudge(Judge):
    """Strict faithfulness judge over an engine; see the module docstring for modes and failure codes."""

    name = "llm"
    template_version = PROMPT_TEMPLATE_VERSION

    def __init__(
        self,
        engine: Engine,
        *,
        mode: JudgeMode = "labels",
        threshold: float = 0.5,
        labels: tuple[str, str] = DEFAULT_LABELS,
        role: str = "judge",
        rule_veto: bool = False,
        veto_fn: VetoFn | None = None,
        max_tokens: int = 256,
    ) -> None:
        if mode not in ("labels", "json"):
            raise ValueError(f"unknown LLM judge mode {mode!r}; use 'labels' or 'json'")
        if not 0.0 < threshold < 1.0:
            raise ValueError("threshold must be strictly between 0 and 1")
        if len(labels) != 2 or labels[0] == labels[1]:
            raise ValueError("labels must be two different strings: (supported, unsupported)")
        self.engine = engine
        self.mode: JudgeMode = mode
        self.threshold = threshold
        self.labels = labels
        self.role = role
        self.max_tokens = max_tokens
        self.rule_veto = rule_veto
        self._veto_fn: VetoFn | None = (veto_fn or _load_hard_contradiction()) if rule_veto else None

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        return [outcome.result for outcome in await self.judge_outcomes(items)]

    async def judge_outcomes(self, items: Sequence[JudgeItem]) -> list[JudgeOutcome]:
        """One outcome per item, in order: the result and the call records made for it."""
        items = list(items)
        outcomes: list[JudgeOutcome | None] = [None] * len(items)
        send: list[int] = []
        for index, item in enumerate(items):
            if is_past(item.deadline):
                outcomes[index] = JudgeOutcome(unverified(item, "deadline"))
            elif not item.passages:
                # Nothing to judge against is the caller's bug (invalid_citation is decided before the judge).
                outcomes[index] = JudgeOutcome(unverified(item, "judge_unavailable", "no_passage"))
            else:
                send.append(index)
        sent = [items[i] for i in send]
        if sent:
            judged = await (self._judge_labels(sent) if self.mode == "labels" else self._judge_json(sent))
            for index, outcome in zip(send, judged, strict=True):
                outcomes[index] = self._veto(items[index], outcome)
        return [outcome for outcome in outcomes if outcome is not None]

    async def _judge_labels(self, items: list[JudgeItem]) -> list[JudgeOutcome]:
        parts = [build_prompt_parts(item, mode="labels", labels=self.labels) for item in items]
        labels = list(self.labels)
        deadline = _group_deadline(items)
        engine = self.engine
        try:
            if isinstance(engine, PairClassifier):  # scores the shared prefix once
                scored: list[Classification] = list(
                    await engine.classify_pairs(parts, labels, role=self.role, deadline=deadline)
                )
            else:
                prompts = [prefix + suffix for prefix, suffix in parts]
                scored = list(await self.engine.classify(prompts, labels, role=self.role, deadline=deadline))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the batch's items come back unverified, never lost
            records = _records_of(exc)
            return [JudgeOutcome(_failure(item, exc), records) for item in items]
        if len(scored) != len(items):
            return [JudgeOutcome(unverified(item, "judge_unavailable", "wrong_result_count"))
                    for item in items]
        return [self._from_classification(item, c) for item, c in zip(items, scored, strict=True)]

    def _from_classification(self, item: JudgeItem, scored: Classification) -> JudgeOutcome:
        records = (scored.record,)
        p_supported = parse_label_probs(scored.probs, self.labels)
        if p_supported is None:
            return JudgeOutcome(unverified(item, "unparseable", "no_label_verdict"), records)
        verdict: Verdict = "supported" if p_supported >= self.threshold else "unsupported"
        result = JudgeResult(item.item_id, verdict, reasons=(f"p_supported={p_supported:.3f}",))
        return JudgeOutcome(result, records)

    async def _judge_json(self, items: list[JudgeItem]) -> list[JudgeOutcome]:
        return list(await asyncio.gather(*(self._judge_json_one(item) for item in items)))

    async def _judge_json_one(self, item: JudgeItem) -> JudgeOutcome:
        try:
            generation = await self.engine.generate(
                build_messages(item),
                role=self.role,
                json_schema=JUDGE_JSON_SCHEMA,
                max_tokens=self.max_tokens,
                temperature=0.0,
                deadline=item.deadline,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - this item alone comes back unverified
            return JudgeOutcome(_failure(item, exc), _records_of(exc))
        records = (generation.record,) if isinstance(generation.record, CallRecord) else ()
        parsed = parse_judge_json(generation.parsed if generation.parsed is not None else generation.text)
        if parsed is None:
            return JudgeOutcome(unverified(item, "unparseable", "no_json_verdict"), records)
        verdict, reason = parsed
        return JudgeOutcome(JudgeResult(item.item_id, verdict, reasons=(reason,) if reason else ()), records)

    def _veto(self, item: JudgeItem, outcome: JudgeOutcome) -> JudgeOutcome:
        if self._veto_fn is None or outcome.result.verdict != "supported":
            return outcome
        try:
            codes = tuple(self._veto_fn(item.claim, item.passages, context=item.context))
        except Exception as exc:  # noqa: BLE001 - a supported verdict the rules could not vet is not kept
            reason = f"rule_veto_error:{type(exc).__name__}"
            return JudgeOutcome(unverified(item, "judge_unavailable", reason), outcome.records)
        if not codes:
            return outcome
        reasons = tuple(f"rule_veto:{code}" for code in codes) + outcome.result.reasons
        return JudgeOutcome(JudgeResult(item.item_id, "unsupported", reasons=reasons), outcome.records)

