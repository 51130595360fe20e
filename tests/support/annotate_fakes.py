"""Test doubles built on the real ABCs (judge.base.Judge, FramingChecker, models.base.Engine) and helpers
that build real segments, passages and budgets, and validate every output against the wire schemas."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from judge.base import Judge
from judge.types import JudgeItem, JudgeResult
from models.base import CallRecord, Classification, Engine, Generation, ModelError
from retrieval.types import Chunk, DocumentIdentity
from serve_app.answer.annotate import Annotation, Annotator
from serve_app.answer.compose import compose
from serve_app.answer.framing import FramingChecker
from serve_app.answer.segments import ComposedAnswer, Passage, Segment
from serve_app.budget import RequestBudget
from serve_app.wire.schemas import Claim, Faithfulness, FramingSpan, GroundingDetail

Verdict = str | JudgeResult | Callable[[JudgeItem], JudgeResult]


def chunk_passage(
    key: str,
    text: str,
    *,
    citable: bool = True,
    title: str = "Qanun Aceh Nomor 1 Tahun 2023",
    section: tuple[str, ...] = ("BAB II", "Pasal 12"),
    context: str = "",
) -> Passage:
    chunk = Chunk(
        chunk_id=f"doc1-{key}",
        document_id="doc1",
        document_title=title,
        ordinal=0,
        text=text,
        source="qanun_apba_2023.pdf",
        char_start=0,
        char_end=len(text),
        identity=DocumentIdentity(
            title=title, doc_type="Qanun", number="1", year=2023, issuer="Pemerintah Aceh"
        ),
        section_path=section,
        legal_reference="Qanun Aceh Nomor 1 Tahun 2023, Pasal 12",
        context=context,
    )
    return Passage(key=key, text=text, kind="chunk", chunk=chunk, citable=citable)


def tool_passage(key: str, text: str) -> Passage:
    identity = {
        "dataset": "APBA 2023",
        "source": "data.acehprov.go.id",
        "period": "2023",
        "call": {"tool": "table_query", "column": "anggaran"},
    }
    return Passage(key=key, text=text, kind="tool", identity=identity)


def make_budget(*, calls: int = 40, deadline_s: float = 30.0, judge_share: float = 0.35) -> RequestBudget:
    now = time.time()
    return RequestBudget(
        deadline=now + deadline_s,
        model_calls=calls,
        context_tokens=8000,
        judge_share=judge_share,
        started_at=now,
    )


def seg(text: str, kind: str = "fact", layout: str = "paragraph", *cites: str) -> Segment:
    return Segment(text, kind, layout, tuple(cites))


class ScriptedJudge(Judge):
    """Answers by claim text. ``script[claim]`` is a verdict ("supported", "unsupported", "unverified", or
    "raise" to fail the call), a JudgeResult, a function of the item, or a list of those consumed call by call
    (first pass, then the re-check). ``down`` fails every call; ``slow[claim]`` delays any call holding it."""

    name = "scripted"

    def __init__(
        self,
        script: dict[str, Verdict | list[Verdict]] | None = None,
        *,
        default: Verdict = "supported",
        down: bool = False,
        slow: dict[str, float] | None = None,
    ) -> None:
        self.script = {k: list(v) if isinstance(v, list) else v for k, v in (script or {}).items()}
        self.default = default
        self.down = down
        self.slow = slow or {}
        self.calls: list[list[JudgeItem]] = []

    @property
    def claims_sent(self) -> list[str]:
        return [item.claim for call in self.calls for item in call]

    def _one(self, item: JudgeItem) -> JudgeResult:
        entry = self.script.get(item.claim, self.default)
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
        self.calls.append(list(items))
        delay = max((self.slow.get(item.claim, 0.0) for item in items), default=0.0)
        if delay:
            await asyncio.sleep(delay)
        if self.down:
            raise ConnectionError("judge server down")
        return [self._one(item) for item in items]


class StaticFraming(FramingChecker):
    """Returns ``answers`` (or calls it with the framing texts); raises ``error`` when given."""

    name = "static"

    def __init__(
        self,
        answers: list[bool] | Callable[[list[str]], list[bool]] | None = None,
        *,
        error: Exception | None = None,
        model_calls: int = 0,
    ) -> None:
        self.answers = answers
        self.error = error
        self.model_calls = model_calls
        self.seen: list[tuple[str, list[str]]] = []

    async def check(
        self, query: str, framing: list[str], passages: list[Passage], budget: RequestBudget | None
    ) -> list[bool]:
        self.seen.append((query, list(framing)))
        if self.error is not None:
            raise self.error
        if callable(self.answers):
            return self.answers(framing)
        return list(self.answers) if self.answers is not None else [False] * len(framing)


class FakeEngine(Engine):
    """``generate`` returns ``parsed``/``text`` as scripted, or raises ``error``; records its messages."""

    name = "fake"
    model = "fake-framing"

    def __init__(
        self,
        *,
        parsed: Any = None,
        text: str = "",
        error: ModelError | None = None,
        finish_reason: str = "stop",
    ) -> None:
        self.parsed, self.text, self.error, self.finish_reason = parsed, text, error, finish_reason
        self.requests: list[dict[str, Any]] = []

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
        self.requests.append(
            {"messages": messages, "role": role, "json_schema": json_schema, "deadline": deadline}
        )
        record = CallRecord(role, self.name, self.model, prompt_tokens=50, completion_tokens=9)
        if self.error is not None:
            self.error.record = CallRecord(role, self.name, self.model, ok=False, error=self.error.code)
            raise self.error
        return Generation(self.text, record, parsed=self.parsed, finish_reason=self.finish_reason)

    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        raise NotImplementedError("the framing checker never classifies")


def annotate(
    annotator: Annotator,
    segments: Sequence[Segment],
    passages: Sequence[Passage],
    *,
    query: str = "Berapa anggaran pendidikan Aceh tahun 2023?",
    conversation: Sequence[str] = (),
    budget: RequestBudget | None = None,
) -> tuple[ComposedAnswer, Annotation]:
    composed = compose(segments)
    annotation = asyncio.run(
        annotator.annotate(
            composed=composed,
            passages={p.key: p for p in passages},
            query=query,
            conversation_texts=list(conversation),
            budget=budget or make_budget(),
        )
    )
    check_wire(composed.answer, annotation)
    return composed, annotation


def check_wire(answer: str, annotation: Annotation) -> None:
    """Every output validates against the wire models; offsets slice the answer exactly; nothing but a
    ``supported`` verdict could be read as verified."""
    for claim in annotation.claims:
        Claim.model_validate(claim)
        assert answer[claim["start"] : claim["end"]] == claim["text"]
        assert (
            answer.encode("utf-16-le")[2 * claim["start_utf16"] : 2 * claim["end_utf16"]].decode("utf-16-le")
            == claim["text"]
        )
        assert (claim["unverified_reason"] is not None) == (claim["verdict"] == "unverified")
    for span in annotation.framing:
        FramingSpan.model_validate(span)
        assert answer[span["start"] : span["end"]] == span["text"]
    Faithfulness.model_validate(annotation.faithfulness)
    for detail in annotation.grounding_details:
        GroundingDetail.model_validate(detail)
    assert annotation.memory_items == [c["text"] for c in annotation.claims if c["verdict"] == "supported"]
    f = annotation.faithfulness
    assert (
        f["supported"] + f["unsupported"] + f["unverified"] + f["uncited"] + f["invalid_citation"]
        == f["claims_total"]
    )
    assert sum(f["unverified_reasons"].values()) == f["unverified"]
    assert f["framing_total"] == len(annotation.framing)
