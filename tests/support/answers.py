"""Helpers for the answer tests: real segments, passages and budgets, a scripted framing check on the real
ABC, and a wire check of every annotation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from models.json_types import JSONObject
from retrieval.types import Chunk, DocumentIdentity
from serve_app.answer.annotate import Annotator
from serve_app.answer.annotation import Annotation
from serve_app.answer.compose import compose
from serve_app.answer.framing import FramingChecker
from serve_app.answer.segments import AnnotationRequest, ComposedAnswer, Passage, Segment
from serve_app.budget import RequestBudget
from serve_app.wire.schemas import Claim, Faithfulness, FramingSpan, GroundingDetail


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
    identity: JSONObject = {
        "dataset": "APBA 2023",
        "source": "data.acehprov.go.id",
        "period": "2023",
        "call": {"tool": "table_query", "column": "anggaran"},
    }
    return Passage(key=key, text=text, kind="tool", identity=identity)


def make_budget(
    *, deadline_s: float = 30.0, calls: int = 64, context: int = 12000, judge_share: float = 0.35
) -> RequestBudget:
    now = time.time()
    return RequestBudget(
        deadline=now + deadline_s,
        model_calls=calls,
        context_tokens=context,
        judge_share=judge_share,
        started_at=now,
    )


def seg(text: str, kind: str = "fact", layout: str = "paragraph", *cites: str) -> Segment:
    return Segment(text, kind, layout, tuple(cites))


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
            AnnotationRequest(composed, {p.key: p for p in passages}, query, list(conversation)),
            budget=budget or make_budget(),
        )
    )
    check_wire(composed.answer, annotation)
    return composed, annotation


def check_wire(answer: str, annotation: Annotation) -> None:
    """Every output validates against the wire models; offsets slice the answer exactly; nothing but a
    ``supported`` verdict could be read as verified."""
    claims: list[Any] = annotation.claims  # read deep here, as a test
    for claim in claims:
        Claim.model_validate(claim)
        assert answer[claim["start"] : claim["end"]] == claim["text"]
        assert (
            answer.encode("utf-16-le")[2 * claim["start_utf16"] : 2 * claim["end_utf16"]].decode("utf-16-le")
            == claim["text"]
        )
        assert (claim["unverified_reason"] is not None) == (claim["verdict"] == "unverified")
    spans: list[Any] = annotation.framing
    for span in spans:
        FramingSpan.model_validate(span)
        assert answer[span["start"] : span["end"]] == span["text"]
    Faithfulness.model_validate(annotation.faithfulness)
    for detail in annotation.grounding_details:
        GroundingDetail.model_validate(detail)
    assert annotation.memory_items == [c["text"] for c in annotation.claims if c["verdict"] == "supported"]
    f: Any = annotation.faithfulness  # read deep here, as a test
    assert (
        f["supported"] + f["unsupported"] + f["unverified"] + f["uncited"] + f["invalid_citation"]
        == f["claims_total"]
    )
    assert sum(f["unverified_reasons"].values()) == f["unverified"]
    assert f["framing_total"] == len(annotation.framing)
