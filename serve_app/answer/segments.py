"""What the agent writes (segments and the passages it was shown), shared by agent, composer and annotator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from models.json_types import JSON, JSONObject
from retrieval.types import Chunk

SegmentKind = Literal["fact", "framing"]
Layout = Literal["paragraph", "heading", "list_item", "continue", "table_header", "table_row"]
LAYOUTS: tuple[str, ...] = ("paragraph", "heading", "list_item", "continue", "table_header", "table_row")
KINDS: tuple[str, ...] = ("fact", "framing")


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of the answer as the agent wrote it. ``cites`` are passage keys such as ``"P1"``."""

    text: str
    kind: str  # validated against KINDS by the composer, since agent output is untrusted
    layout: str  # validated against LAYOUTS
    cites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """A figure computed over rows (a table's or an SQL source's), kept with the rows it came from: the
    cells as read, under ``header``. The judge never reads the computed value; it recomputes ``operation``
    over ``column`` from these rows (judge/aggregate.py) and judges the claim against its own result."""

    operation: Literal["sum", "mean", "count"]
    column: str  # the measure column; for count, any column
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_refs: tuple[str, ...] = ()  # where each row was read (chunk id, table row), same order as rows

    def citation(self) -> JSONObject:
        rows = [dict(zip(self.header, row, strict=False)) for row in self.rows]
        out: JSONObject = {"operation": self.operation, "column": self.column, "rows": rows}
        if self.row_refs:
            out["row_refs"] = list(self.row_refs)
        return out


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage shown to the agent under ``key``. Either an indexed chunk or a tool result
    (portal, table aggregate) with its own identity (dataset, source, period, the call that produced it)."""

    key: str
    text: str
    kind: Literal["chunk", "tool"] = "chunk"
    chunk: Chunk | None = None
    identity: JSON = field(default_factory=dict)
    citable: bool = True  # False: shown for context but may not be cited
    aggregate: Aggregate | None = None  # a computed figure: the rows it came from, for the judge to recompute

    def citation(self) -> JSONObject:
        if self.chunk is not None:
            return self.chunk.citation()
        if self.aggregate is not None:
            return dict(self.identity) | {"computed_from": self.aggregate.citation()}
        return dict(self.identity)


@dataclass(frozen=True, slots=True)
class ComposedSpan:
    """A segment placed in the composed Markdown answer. ``answer[start:end] == segment.text``."""

    index: int  # position in the segment list
    segment: Segment
    start: int
    end: int
    start_utf16: int
    end_utf16: int
    context: str = ""  # reader context: section heading, list lead-in, table header (rows: header line)


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    answer: str
    spans: tuple[ComposedSpan, ...]


@dataclass(frozen=True, slots=True)
class AnnotationRequest:
    """What the annotator marks: a composed answer, the passages its citation keys name, the question, and
    the conversation's earlier texts (a sentence repeated from them is ``from_conversation``)."""

    composed: ComposedAnswer
    passages: dict[str, Passage]
    query: str
    conversation_texts: list[str]


def passage_identity(passage: Passage) -> JSONObject:
    """The identity shown with a passage, to the agent here and to the judge (keys of judge/prompt.py)."""
    if passage.chunk is not None:
        c = passage.chunk
        ident = c.identity
        return {
            "title": c.document_title or ident.title,
            "type": ident.doc_type,
            "number": ident.number,
            "year": ident.year,
            "issuer": ident.issuer,
            "section": " › ".join(c.section_path) or None,
            "legal_reference": c.legal_reference,
        }
    keys = ("dataset", "source", "period", "call")
    return {k: passage.identity.get(k) for k in keys} | {
        k: v for k, v in passage.identity.items() if k not in keys
    }
