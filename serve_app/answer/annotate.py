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
unparseable judge and disputed re-checks all give ``unverified`` with their reason. :func:`v1_gate` builds
the /query (v1) answer from the same annotation by removing what is not supported.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from judge.batching import apply_budget, is_past, unverified
from judge.recheck import judge_with_recheck
from judge.types import JudgeItem, JudgePassage, JudgeResult
from models.base import CallRecord
from serve_app.agent.prompts import passage_identity
from serve_app.answer.compose import compose, validate_segments
from serve_app.answer.framing import FramingChecker
from serve_app.answer.segments import ComposedAnswer, ComposedSpan, Passage, Segment
from serve_app.budget import RequestBudget

JudgeFn = Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]]
UNVERIFIED_REASONS: tuple[str, ...] = ("deadline", "budget", "judge_unavailable", "unparseable", "disputed")
V1_REFUSAL_REASON = "insufficient_verified_claims"
_JUDGE_VERDICTS = frozenset({"supported", "unsupported", "unverified"})
_RECORD_ERRORS = {"deadline": "timeout", "judge_unavailable": "unavailable", "unparseable": "bad_output"}
# What the server writes between segments: whitespace, "## ", "- ", table pipes and the separator row.
_LAYOUT_ONLY = re.compile(r"(?:\s|## |- |\|(?: -{3,} \|)*)*")
_EMPHASIS = re.compile(r"[*_`~]+")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]“”‘’ "


# ---------------------------------------------------------------------------- the result


@dataclass
class Annotation:
    """What annotate-v2 says about one answer, as wire dicts (schemas.Claim, FramingSpan, Faithfulness)."""

    claims: list[dict[str, Any]]
    framing: list[dict[str, Any]]
    faithfulness: dict[str, Any]
    grounding_details: list[dict[str, Any]] = field(default_factory=list)
    memory_items: list[str] = field(default_factory=list)
    budget: RequestBudget | None = None

    @property
    def claims_supported(self) -> int:
        return int(self.faithfulness["grounding"]["claims_supported"])

    @property
    def claims_total(self) -> int:
        return int(self.faithfulness["grounding"]["claims_total"])

    @property
    def grounding_rate(self) -> float | None:
        rate = self.faithfulness["grounding"]["grounding_rate"]
        return None if rate is None else float(rate)


def unlocated_pieces(answer: str, covered: Sequence[tuple[int, int]]) -> int:
    """Runs of ``answer`` outside every ``(start, end)`` span that hold more than server layout."""
    pieces, position = 0, 0
    for start, end in sorted(covered) + [(len(answer), len(answer))]:
        if start > position and not _LAYOUT_ONLY.fullmatch(answer[position:start]):
            pieces += 1
        position = max(position, end)
    return pieces


def _grounding(supported: int, total: int) -> dict[str, Any]:
    return {"claims_supported": supported, "claims_total": total,
            "grounding_rate": supported / total if total else None}


def faithfulness_report(
    claims: Sequence[dict[str, Any]], *, framing_total: int, unlocated_total: int, judge_status: str,
    framing_check: str, checked: bool = True,
) -> dict[str, Any]:
    """The wire ``faithfulness`` object counted from claim dicts (``checked`` appears only when False)."""
    verdicts = Counter(c["verdict"] for c in claims)
    reasons = Counter(c["unverified_reason"] for c in claims if c["verdict"] == "unverified")
    total = len(claims) - verdicts["from_conversation"]
    supported = verdicts["supported"]
    if supported == 0:
        verification = "none"
    elif supported == len(claims) and unlocated_total == 0:
        verification = "full"
    else:
        verification = "partial"
    report: dict[str, Any] = {
        "mechanism": "annotate-v2",
        "judge_status": judge_status,
        "framing_check": framing_check,
        "claims_total": total,
        **{v: verdicts[v] for v in ("supported", "unsupported", "unverified", "uncited", "invalid_citation",
                                    "from_conversation")},
        "unverified_reasons": {reason: reasons[reason] for reason in UNVERIFIED_REASONS},
        "framing_total": framing_total,
        "unlocated_total": unlocated_total,
        "verification": verification,
        "grounding": _grounding(supported, total),
    }
    if not checked:
        report["checked"] = False
    return report


def refusal_annotation(answer: str, *, checked: bool = True) -> Annotation:
    """A refusal or notice: no claims or framing, the text is one uncovered piece, nothing verified.
    ``checked=False`` only for ``context_budget_exhausted`` (nothing was checked at all)."""
    report = faithfulness_report([], framing_total=0, unlocated_total=unlocated_pieces(answer, []),
                                 judge_status="skipped", framing_check="skipped", checked=checked)
    return Annotation(claims=[], framing=[], faithfulness=report)


def blocked_annotation(before: Annotation) -> Annotation:
    """A Policy Guard block: nothing of the answer is published (no claims, framing, details or memory),
    but the counts of the claims checked before the block stay, as on v1. The refusal text is one
    uncovered piece."""
    report = dict(before.faithfulness)
    report.update(framing_total=0, unlocated_total=1, verification="none",
                  unverified_reasons=dict(before.faithfulness["unverified_reasons"]),
                  grounding=dict(before.faithfulness["grounding"]))
    report.pop("checked", None)
    return Annotation(claims=[], framing=[], faithfulness=report, budget=before.budget)


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
    verdict: str | None = None
    unverified_reason: str | None = None
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


def _judge_identity(passage: Passage) -> dict[str, str | int | None]:
    """The identity the agent saw with this passage, in the judge's scalar form."""
    identity: dict[str, str | int | None] = {}
    for key, value in passage_identity(passage).items():
        scalar = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
        if value is None or scalar:
            identity[key] = value
        else:
            identity[key] = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if passage.chunk is not None and passage.chunk.context:
        identity["context"] = passage.chunk.context  # shown to the agent as "(konteks: …)"
    return identity


def _sanitised(items: list[JudgeItem], raw: Any) -> list[JudgeResult]:
    """The judge's answer held to its contract; anything unusable is unverified, never supported."""
    if not isinstance(raw, list | tuple) or len(raw) != len(items):
        return [unverified(item, "judge_unavailable", "wrong_result_count") for item in items]
    results = []
    for item, result in zip(items, raw, strict=True):
        if not isinstance(result, JudgeResult) or result.verdict not in _JUDGE_VERDICTS:
            result = unverified(item, "unparseable", "bad_result")
        elif result.item_id != item.item_id:
            result = unverified(item, "judge_unavailable", "mismatched_result")
        elif (result.verdict == "unverified") != (result.unverified_reason is not None) or (
                result.unverified_reason is not None and result.unverified_reason not in UNVERIFIED_REASONS):
            result = unverified(item, "unparseable", "inconsistent_result")
        results.append(result)
    return results


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

    def __init__(
        self,
        judge: JudgeFn,
        framing_checker: FramingChecker,
        *,
        recheck: bool = True,
        split_items: bool = True,
        judge_engine: str = "judge",
        judge_model: str = "",
    ) -> None:
        self.judge = judge
        self.framing_checker = framing_checker
        self.recheck = recheck
        self.split_items = split_items
        self.judge_engine = judge_engine
        self.judge_model = judge_model

    async def annotate(
        self,
        *,
        composed: ComposedAnswer,
        passages: dict[str, Passage],
        query: str,
        conversation_texts: list[str],
        budget: RequestBudget,
    ) -> Annotation:
        """Claims, framing, faithfulness and grounding for ``composed``; charges ``budget`` for every framing
        and judge call made and returns it as ``Annotation.budget``. Never raises for a model's sake."""
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
            mark.verdict = result.verdict if result.verdict in _JUDGE_VERDICTS else "unverified"
            if mark.verdict == "unverified":
                reason = result.unverified_reason
                mark.unverified_reason = reason if reason in UNVERIFIED_REASONS else "unparseable"
            mark.reasons, mark.evidence = tuple(result.reasons), tuple(result.spans)
        judge_status = "skipped" if not to_judge else (
            "unavailable" if any(m.verdict != "supported" and m.verdict != "unsupported" for m in to_judge)
            else "complete")
        return self._annotation(composed, marks, passages, judge_status, framing_check, budget)

    # ------------------------------------------------------------------ steps

    @staticmethod
    def _mark(span: ComposedSpan, passages: dict[str, Passage], conversation: list[str]) -> _Mark:
        keys = list(dict.fromkeys(span.segment.cites))
        valid = [k for k in keys if k in passages and passages[k].citable]
        mark = _Mark(span, keys, valid, [k for k in keys if k not in valid], _repeats(span.segment.text,
                                                                                       conversation))
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
                answer = await self.framing_checker.check(query, [m.span.segment.text for m in marks],
                                                          passages, budget)
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
                claim=_judged_text(m.span),
                passages=tuple(JudgePassage(k, _judged_passage(passages[k]), _judge_identity(passages[k]))
                               for k in m.valid),
                context=_judged_context(m.span),
                deadline=deadline,
            )
            for m in marks
        ]
        judge_fn = self._charged(budget)
        if self.recheck:
            return await judge_with_recheck(judge_fn, items, calls_left=calls_left)
        results: list[JudgeResult | None] = [unverified(i, "deadline") if is_past(i.deadline) else None
                                             for i in items]
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
                results = _sanitised(items, raw)
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

    def _charge(self, budget: RequestBudget, items: list[JudgeItem], results: list[JudgeResult] | None,
                started: float) -> None:
        latency_ms = (time.perf_counter() - started) * 1000.0
        for position in range(len(items)):
            result = results[position] if results is not None else None
            reason = "judge_unavailable" if result is None else result.unverified_reason
            ok = result is not None and result.verdict != "unverified"
            error = None if ok else _RECORD_ERRORS.get(reason or "", "unavailable")
            budget.charge(CallRecord("judge", self.judge_engine, self.judge_model, latency_ms=latency_ms,
                                     ok=ok, error=error))

    # ------------------------------------------------------------------ output

    @staticmethod
    def _annotation(composed: ComposedAnswer, marks: list[_Mark], passages: dict[str, Passage],
                    judge_status: str, framing_check: str, budget: RequestBudget) -> Annotation:
        claims: list[dict[str, Any]] = []
        framing: list[dict[str, Any]] = []
        details: list[dict[str, Any]] = []
        for mark in marks:
            span = mark.span
            offsets = {"start": span.start, "end": span.end, "start_utf16": span.start_utf16,
                       "end_utf16": span.end_utf16}
            if not mark.claim:
                framing.append({"text": span.segment.text, "layout": span.segment.layout, **offsets})
                continue
            assert mark.verdict is not None
            claims.append({
                "text": span.segment.text,
                "citation_keys": list(mark.keys),
                "citations": [{"citation_key": k, "citation": passages[k].citation()} for k in mark.valid],
                "verdict": mark.verdict,
                "unverified_reason": mark.unverified_reason if mark.verdict == "unverified" else None,
                "invalid_citation_keys": list(mark.invalid),
                "kind": span.segment.kind,
                "layout": span.segment.layout,
                **offsets,
            })
            details.append({
                "claim_index": len(claims) - 1,
                "verdict": mark.verdict,
                "unverified_reason": claims[-1]["unverified_reason"],
                "reasons": list(mark.reasons),
                "passages": [{"citation_key": k, "spans": [[s, e] for key, s, e in mark.evidence if key == k]}
                             for k in mark.valid],
            })
        unlocated = unlocated_pieces(composed.answer, [(m.span.start, m.span.end) for m in marks])
        report = faithfulness_report(claims, framing_total=len(framing), unlocated_total=unlocated,
                                     judge_status=judge_status, framing_check=framing_check)
        memory = [c["text"] for c in claims if c["verdict"] == "supported"]
        return Annotation(claims, framing, report, details, memory, budget)


# ---------------------------------------------------------------------------- /query (v1)


@dataclass
class V1Gate:
    """The v1 answer: only supported claims (and framing) kept, recomposed so offsets stay exact."""

    answer: str
    claim_map: list[dict[str, Any]]
    dropped_count: int
    dropped_reasons: dict[str, int]
    provenance_complete: bool
    claims_supported: int
    claims_total: int
    grounding_rate: float | None
    refused: bool
    reason: str | None = None  # V1_REFUSAL_REASON when refused


def _drop_reason(claim: dict[str, Any]) -> str:
    if claim["verdict"] == "unverified":
        return f"unverified:{claim['unverified_reason']}"
    return str(claim["verdict"])


def _repaired(kept: list[tuple[Segment, dict[str, Any] | None]], dropped: Counter[str]
              ) -> list[tuple[Segment, dict[str, Any] | None]]:
    """Kept segments with layouts that still compose: table rows whose header was removed, and a
    ``continue`` left first or after a table line, become paragraphs (dropped, as "layout", if their text
    cannot stand as one)."""
    out: list[tuple[Segment, dict[str, Any] | None]] = []
    for segment, claim in kept:
        previous = out[-1][0].layout if out else None
        layout = segment.layout
        if layout == "continue" and previous in (None, "table_header", "table_row"):
            layout = "paragraph"
        elif layout == "table_row" and previous not in ("table_header", "table_row"):
            layout = "paragraph"
        if layout != segment.layout:
            segment = replace(segment, layout=layout)
            if validate_segments([segment]):
                dropped["layout"] += 1
                continue
        out.append((segment, claim))
    return out


def v1_gate(composed: ComposedAnswer, annotation: Annotation, *, min_kept_ratio: float) -> V1Gate:
    """/query (v1): remove every claim that is not ``supported`` (framing judged checkable included), keep
    framing spans, recompose with :func:`compose` so the claim map's offsets are exact. Refused when
    supported / claims_total < ``min_kept_ratio``, when there were claims but none supported, or when
    nothing is left to publish; ``claims_*`` and ``grounding_rate`` are the v2 figures."""
    claims = {(c["start"], c["end"]): c for c in annotation.claims}
    framing = {(f["start"], f["end"]) for f in annotation.framing}
    dropped: Counter[str] = Counter()
    kept: list[tuple[Segment, dict[str, Any] | None]] = []
    block_layout = "paragraph"  # the layout a "continue" falls back to when its block start is gone
    block_start_kept = True
    for span in composed.spans:
        seg, where = span.segment, (span.start, span.end)
        claim = claims.get(where)
        keep = (claim is not None and claim["verdict"] == "supported") or (claim is None and where in framing)
        if seg.layout != "continue":
            block_layout, block_start_kept = seg.layout, keep
        if not keep:
            dropped[_drop_reason(claim) if claim is not None else "unannotated"] += 1
            continue
        if seg.layout == "continue" and not block_start_kept:
            # Its block's start was removed: it starts that block itself rather than join another one.
            seg = replace(seg, layout=block_layout if block_layout in ("paragraph", "heading", "list_item")
                          else "paragraph")
            if validate_segments([seg]):
                dropped["layout"] += 1
                continue
            block_start_kept = True
        kept.append((seg, claim))
    segments = _repaired(kept, dropped)
    supported, total = annotation.claims_supported, annotation.claims_total
    refused = (
        (bool(annotation.claims) and supported == 0)
        or (total > 0 and supported / total < min_kept_ratio)
        or not segments
    )
    new = compose([s for s, _ in segments]) if segments else ComposedAnswer("", ())
    claim_map = []
    for span, (_, claim) in zip(new.spans, segments, strict=True):
        if claim is None:
            continue
        citations = [dict(pair) for pair in claim["citations"]]
        claim_map.append({
            "text": span.segment.text,
            "citation_keys": [pair["citation_key"] for pair in citations],
            "citations": citations,
            "start": span.start,
            "end": span.end,
            "start_utf16": span.start_utf16,
            "end_utf16": span.end_utf16,
        })
    return V1Gate(
        answer=new.answer,
        claim_map=claim_map,
        dropped_count=sum(dropped.values()),
        dropped_reasons=dict(dropped),
        provenance_complete=all(entry["citations"] for entry in claim_map),
        claims_supported=supported,
        claims_total=total,
        grounding_rate=annotation.grounding_rate,
        refused=refused,
        reason=V1_REFUSAL_REASON if refused else None,
    )


def _piped(text: str) -> str:
    return text if text.lstrip().startswith("|") else f"| {text} |"


def _judged_text(span: ComposedSpan) -> str:
    """A table row is judged whole, as the reader sees it: a Markdown row under its header row."""
    return _piped(span.segment.text) if span.segment.layout == "table_row" else span.segment.text


def _judged_context(span: ComposedSpan) -> str:
    """For a table row the context ends with its header row (after any section heading): pipe that line."""
    if span.segment.layout == "table_row" and span.context:
        *before, header = span.context.split("\n")
        return "\n".join([*before, _piped(header)])
    return span.context


def _judged_passage(passage: Passage) -> str:
    """Rows of an ingested CSV/XLSX table are stored bare, with their header as the chunk's context; the
    judge reads them as the Markdown table the reader sees, header first, so each cell has its column."""
    chunk = passage.chunk
    if chunk is None or chunk.kind != "table" or "|" not in chunk.context:
        return passage.text
    lines = [line for line in passage.text.split("\n") if line.strip()]
    if not lines or any(line.lstrip().startswith("|") for line in lines):
        return passage.text
    header = chunk.context.strip().split("\n")[-1]
    separator = "| " + " | ".join(["---"] * len(header.strip().strip("|").split("|"))) + " |"
    return "\n".join([_piped(header), separator, *(_piped(line) for line in lines)])
