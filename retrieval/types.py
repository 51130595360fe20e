"""Data shared by every retrieval stage: chunks with their citation metadata, and search hits.

These types cross process boundaries (Ray handles pickle them), so they are plain frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from models.json_types import JSONObject


@dataclass(frozen=True, slots=True)
class DocumentIdentity:
    """Who issued a document and what it is; shown to the agent and the judge alike."""

    title: str
    doc_type: str | None = None  # UU, PP, Perpres, Permen, Qanun, Perda, Pergub, Dataset, ...
    number: str | None = None
    year: int | None = None
    issuer: str | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """One citable piece of a document. ``text == source_text[char_start:char_end]`` always holds."""

    chunk_id: str  # stable: derived from document_id + ordinal + text hash
    document_id: str  # stable: derived from the source path and content fingerprint
    document_title: str
    ordinal: int  # position of the chunk inside its document, 0-based
    text: str
    source: str  # ingested file path relative to the ingest root (the file name for a single file)
    char_start: int
    char_end: int
    identity: DocumentIdentity
    section_path: tuple[str, ...] = ()  # e.g. ("BAB II", "Bagian Kesatu", "Pasal 12")
    legal_reference: str | None = None  # e.g. "Qanun Aceh Nomor 1 Tahun 2023, Pasal 12 ayat (3)"
    page: int | None = None  # 1-based page for PDFs
    # What a reader sees around this chunk: the section heading, a list's lead-in sentence, or the
    # table header repeated above table rows. The judge gets it as reader context.
    context: str = ""
    kind: str = "text"  # "text" | "table" (rows with their header) | "list"

    def citation(self) -> JSONObject:
        """The citation object published on the wire (search results, citations, passages)."""
        return {
            "document_id": self.document_id,
            "document_title": self.document_title,
            "chunk_id": self.chunk_id,
            "ordinal": self.ordinal,
            "source": self.source,
            "page": self.page,
            "section_path": list(self.section_path),
            "legal_reference": self.legal_reference,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "document_type": self.identity.doc_type,
            "document_number": self.identity.number,
            "document_year": self.identity.year,
            "issuer": self.identity.issuer,
        }

    def to_dict(self) -> JSONObject:
        data = asdict(self)
        data["section_path"] = list(self.section_path)
        return data


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A ranked chunk. ``score`` is the final (reranked) score; ``stages`` holds per-stage rank and score
    (keys ``bm25``, ``dense``, ``fused``, ``reranked``; each
    ``{"rank": int | None, "score": float | None}``)."""

    chunk: Chunk
    score: float
    stages: dict[str, dict[str, float | int | None]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    document_id: str
    identity: DocumentIdentity
    source: str
    chunk_count: int


@dataclass(frozen=True)
class TableData:
    """An ingested CSV/XLSX table: ``rows`` pairs each row's citable chunk id with its cells."""

    columns: list[str]
    rows: list[tuple[str, list[str]]]
    name: str = ""
