"""annotate-v2: mark every segment of a composed answer, never remove one (seed 000, CONTRACT.md).

Each :class:`~serve_app.answer.segments.ComposedSpan` ends up either a claim (with a verdict) or a framing
span:

* a ``fact`` segment, or a ``framing`` segment that cites a passage, is a claim: ``from_conversation`` when it
  repeats the conversation, ``uncited`` when it cites nothing, ``invalid_citation`` when none of its keys was
  shown to the agent (or may not be cited), else judged against its valid passages (first pass, then each
  ``unsupported`` re-checked alone);
* framing that cites nothing goes to the ONE framing check of the answer; checkable framing becomes an
  ``uncited`` claim (kind stays ``framing``), and when the check fails every such segment does.

Only a judge result ``supported`` yields ``supported``: deadlines, an exhausted budget, a failing or
unparseable judge and disputed re-checks all give ``unverified`` with their reason.
:mod:`serve_app.answer.v1_gate` builds
the /query (v1) answer from the same annotation by removing what is not supported; the records are in
:mod:`serve_app.answer.annotation` and what the judge reads in :mod:`serve_app.answer.judge_items`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from judge.batching import apply_budget, is_past, unverified
from judge.recheck import judge_with_recheck
from judge.types import JudgeItem, JudgePassage, JudgeResult
from models.base import CallRecord
from serve_app.answer.annotation import Annotation, faithfulness_report, unlocated_pieces
from serve_app.answer.framing import FramingChecker
from serve_app.answer.judge_items import (
    judge_identity,
    judged_context,
    judged_passage,
    judged_text,
    sanitised,
)
from serve_app.answer.segments import AnnotationRequest, ComposedAnswer, ComposedSpan, Passage
from serve_app.budget import RequestBudget
from serve_app.metrics import observe_unsupported
from serve_app.vocabulary import JUDGE_VERDICTS, UNVERIFIED_REASONS, UnverifiedReason, Verdict

JudgeFn = Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]]
_RECORD_ERRORS = {"deadline": "timeout", "judge_unavailable": "unavailable", "unparseable": "bad_output"}
# model_call_log note on the call whose unsupported verdict a deterministic judge is not asked to re-check
_RECHECK_SKIPPED = "recheck_skipped:deterministic_judge"
_EMPHASIS = re.compile(r"[*_`~]+")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]“”‘’ "


# ---------------------------------------------------------------------------- marking


@dataclass
class _Mark:
    """One span while it is being annotated; ``verdict`` None = still to decide."""

    span: ComposedSpan
    keys: list[str]
    valid: list[str]
    invalid: list[str]
    repeats: bool
    claim: bool = True
    verdict: Verdict | None = None
    unverified_reason: UnverifiedReason | None = None
    reasons: tuple[str, ...] = ()
    evidence: tuple[tuple[str, int, int], ...] = ()


def _conversation_norm(text: str) -> str:
    return " ".join(_EMPHASIS.sub("", text).casefold().split()).strip(_EDGE_PUNCTUATION)


def _repeats(text: str, conversation: Sequence[str]) -> bool:
    """Equal to a conversation text (case and whitespace aside), or wholly inside one (two words or more)."""
    own = _conversation_norm(text)
    if not own:
        return False
    pattern = re.compile(rf"(?<!\w){re.escape(own)}(?!\w)") if len(own.split()) >= 2 else None
    return any(own == other or (pattern is not None and pattern.search(other)) for other in conversation)


@dataclass(eq=False)
class Annotator:
    """Marks a composed answer (see the module docstring). ``judge`` takes items and returns one result each
    (a collector's ``submit_many``, the JudgePool handle's ``judge_many``, or ``partial(judge_batch, j)``);
    ``judge_engine`` / ``judge_model`` name it in the call records charged to the request's budget.
    ``recheck=False`` keeps first-pass ``unsupported`` verdicts without re-checking (benchmarks only).

    ``split_items`` (default) hands each item to ``judge`` as its own concurrent call, which a batching
    judge function (BatchCollector.submit_many, the JudgePool's judge_many) gathers into batches again: an
    item whose batch came back before the request's deadline keeps its verdict, and only the items still
    out get ``deadline``. ``split_items=False`` sends each pass as one call (all or nothing at the deadline).
    """

    judge: JudgeFn
    framing_checker: FramingChecker
    _: KW_ONLY
    recheck: bool = True
    split_items: bool = True
    judge_engine: str = "judge"
    judge_model: str = ""
    # a deterministic judge's unsupported verdicts are final: no re-check (judge.recheck), and the call
    # record of each says so in model_call_log
    deterministic_judge: bool = False

    async def annotate(self, request: AnnotationRequest, *, budget: RequestBudget) -> Annotation:
        """Claims, framing, faithfulness and grounding for ``request.composed``; charges ``budget`` for every
        framing and judge call made and returns it as ``Annotation.budget``. Never raises for a model's
        sake."""
        composed, passages, query = request.composed, request.passages, request.query
        conversation_texts = request.conversation_texts
        conversation = [_conversation_norm(t) for t in conversation_texts if t and t.strip()]
        marks = [self._mark(span, passages, conversation) for span in composed.spans]
        to_frame = [m for m in marks if not m.keys and m.span.segment.kind == "framing"]
        to_judge = [m for m in marks if m.verdict is None and m.valid]
        reserve = self.framing_checker.model_calls if to_frame else 0
        calls_for_judge = max(0, budget.calls_left_for_judge() - reserve)
        checkable, results = await asyncio.gather(
            self._check_framing(query, to_frame, list(passages.values()), budget),
            self._judge_marks(to_judge, passages, budget, calls_for_judge),
        )
        framing_check = "skipped" if not to_frame else ("unavailable" if checkable is None else "complete")
        for position, mark in enumerate(to_frame):
            if checkable is not None and not checkable[position]:
                mark.claim = False
            elif checkable is not None and mark.repeats:
                mark.verdict, mark.reasons = "from_conversation", ("repeats_conversation",)
            else:
                why = "framing_checkable" if checkable is not None else "framing_check_unavailable"
                mark.verdict, mark.reasons = "uncited", (why,)
        for mark, result in zip(to_judge, results, strict=True):
            mark.verdict = result.verdict if result.verdict in JUDGE_VERDICTS else "unverified"
            if mark.verdict == "unverified":
                reason = result.unverified_reason
                mark.unverified_reason = reason if reason in UNVERIFIED_REASONS else "unparseable"
            mark.reasons, mark.evidence = tuple(result.reasons), tuple(result.spans)
            if mark.verdict == "unsupported":
                observe_unsupported(mark.reasons)
        judge_status = (
            "skipped"
            if not to_judge
            else (
                "unavailable"
                if any(m.verdict != "supported" and m.verdict != "unsupported" for m in to_judge)
                else "complete"
            )
        )
        return self._annotation(composed, marks, passages, judge_status, framing_check, budget)

    # ------------------------------------------------------------------ steps

    @staticmethod
    def _mark(span: ComposedSpan, passages: dict[str, Passage], conversation: list[str]) -> _Mark:
        keys = list(dict.fromkeys(span.segment.cites))
        valid = [k for k in keys if k in passages and passages[k].citable]
        mark = _Mark(
            span, keys, valid, [k for k in keys if k not in valid], _repeats(span.segment.text, conversation)
        )
        if not keys and span.segment.kind == "framing":
            return mark  # decided by the framing check
        if mark.repeats:
            mark.verdict, mark.reasons = "from_conversation", ("repeats_conversation",)
        elif not keys:
            mark.verdict, mark.reasons = "uncited", ("no_citation",)
        elif not valid:
            mark.verdict, mark.reasons = "invalid_citation", ("citation_not_shown",)
        return mark

    async def _check_framing(
        self, query: str, marks: list[_Mark], passages: list[Passage], budget: RequestBudget
    ) -> list[bool] | None:
        """The one framing call; None when it fails (then every such segment is uncited)."""
        if not marks:
            return []
        try:
            async with asyncio.timeout(max(0.0, budget.judge_deadline() - time.time())):
                answer = await self.framing_checker.check(
                    query, [m.span.segment.text for m in marks], passages, budget
                )
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - any failure means "not checked", never "framing"
            return None
        if not isinstance(answer, list) or len(answer) != len(marks):
            return None
        if not all(isinstance(value, bool) for value in answer):
            return None
        return answer

    async def _judge_marks(
        self, marks: list[_Mark], passages: dict[str, Passage], budget: RequestBudget, calls_left: int
    ) -> list[JudgeResult]:
        if not marks:
            return []
        deadline = budget.judge_deadline()
        items = [
            JudgeItem(
                item_id=str(m.span.index),
                claim=judged_text(m.span),
                passages=tuple(
                    JudgePassage(k, judged_passage(passages[k]), judge_identity(passages[k])) for k in m.valid
                ),
                context=judged_context(m.span),
                deadline=deadline,
            )
            for m in marks
        ]
        judge_fn = self._charged(budget)
        if self.recheck:
            return await judge_with_recheck(
                judge_fn, items, calls_left=calls_left, deterministic=self.deterministic_judge
            )
        results: list[JudgeResult | None] = [
            unverified(i, "deadline") if is_past(i.deadline) else None for i in items
        ]
        send = [i for i, r in zip(items, results, strict=True) if r is None]
        within, over = apply_budget(send, calls_left)
        returned = {r.item_id: r for r in over}
        if within:
            try:
                returned.update((r.item_id, r) for r in await judge_fn(within))
            except Exception:  # noqa: BLE001 - a failed call makes its items unverified
                returned.update((i.item_id, unverified(i, "judge_unavailable")) for i in within)
        return [r if r is not None else returned[i.item_id] for i, r in zip(items, results, strict=True)]

    def _charged(self, budget: RequestBudget) -> JudgeFn:
        """``self.judge`` held to the request deadline, its answers to the contract, each item charged."""

        async def call(items: list[JudgeItem]) -> list[JudgeResult]:
            deadlines = [i.deadline for i in items if i.deadline is not None]
            started = time.perf_counter()
            timeout = asyncio.timeout(max(0.0, min(deadlines) - time.time()) if deadlines else None)
            try:
                async with timeout:
                    raw = await self.judge(items)
            except TimeoutError:
                if not timeout.expired():
                    self._charge(budget, items, None, started)
                    raise
                results = [unverified(item, "deadline") for item in items]
            except asyncio.CancelledError:
                raise
            except Exception:
                self._charge(budget, items, None, started)
                raise
            else:
                results = sanitised(items, raw)
            self._charge(budget, items, results, started)
            return results

        async def one(item: JudgeItem) -> JudgeResult:
            try:
                (result,) = await call([item])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - this item's call failed; the others stand
                return unverified(item, "judge_unavailable", type(exc).__name__)
            return result

        async def split(items: list[JudgeItem]) -> list[JudgeResult]:
            return list(await asyncio.gather(*(one(item) for item in items)))

        return split if self.split_items else call

    def _charge(
        self, budget: RequestBudget, items: list[JudgeItem], results: list[JudgeResult] | None, started: float
    ) -> None:
        latency_ms = (time.perf_counter() - started) * 1000.0
        for position in range(len(items)):
            result = results[position] if results is not None else None
            reason = "judge_unavailable" if result is None else result.unverified_reason
            ok = result is not None and result.verdict != "unverified"
            error = None if ok else _RECORD_ERRORS.get(reason or "", "unavailable")
            skipped = (
                self.recheck
                and self.deterministic_judge
                and result is not None
                and (result.verdict == "unsupported")
            )
            budget.charge(
                CallRecord(
                    "judge",
                    self.judge_engine,
                    self.judge_model,
                    latency_ms=latency_ms,
                    ok=ok,
                    error=error,
                    note=_RECHECK_SKIPPED if skipped else None,
                )
            )

    # ------------------------------------------------------------------ output

    @staticmethod
    def _annotation(
        composed: ComposedAnswer,
        marks: list[_Mark],
        passages: dict[str, Passage],
        judge_status: str,
        framing_check: str,
        budget: RequestBudget,
    ) -> Annotation:
        claims: list[dict[str, Any]] = []
        framing: list[dict[str, Any]] = []
        details: list[dict[str, Any]] = []
        for mark in marks:
            span = mark.span
            offsets = {
                "start": span.start,
                "end": span.end,
                "start_utf16": span.start_utf16,
                "end_utf16": span.end_utf16,
            }
            if not mark.claim:
                framing.append({"text": span.segment.text, "layout": span.segment.layout, **offsets})
                continue
            assert mark.verdict is not None
            claims.append(
                {
                    "text": span.segment.text,
                    "citation_keys": list(mark.keys),
                    "citations": [
                        {"citation_key": k, "citation": passages[k].citation()} for k in mark.valid
                    ],
                    "verdict": mark.verdict,
                    "unverified_reason": mark.unverified_reason if mark.verdict == "unverified" else None,
                    "invalid_citation_keys": list(mark.invalid),
                    "kind": span.segment.kind,
                    "layout": span.segment.layout,
                    **offsets,
                }
            )
            details.append(
                {
                    "claim_index": len(claims) - 1,
                    "verdict": mark.verdict,
                    "unverified_reason": claims[-1]["unverified_reason"],
                    "reasons": list(mark.reasons),
                    "passages": [
                        {"citation_key": k, "spans": [[s, e] for key, s, e in mark.evidence if key == k]}
                        for k in mark.valid
                    ],
                }
            )
        unlocated = unlocated_pieces(composed.answer, [(m.span.start, m.span.end) for m in marks])
        report = faithfulness_report(
            claims,
            framing_total=len(framing),
            unlocated_total=unlocated,
            judge_status=judge_status,
            framing_check=framing_check,
        )
        memory = [c["text"] for c in claims if c["verdict"] == "supported"]
        return Annotation(claims, framing, report, details, memory, budget)
