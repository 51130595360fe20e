"""Wire models of the citation routes (``GET /documents``, ``/documents/{id}``,
``/documents/{id}/passages/{chunk_id}``), with the pure conversions from the retriever's catalogue types."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from retrieval.catalog import DocumentOutline, DocumentPage, PassageView, Section
from retrieval.types import Chunk, DocumentInfo
from serve_app.wire.schemas import Citation, WireModel
from serve_app.wire.strict_types import NotBlank

MAX_PAGE_SIZE = 100


class DocumentListParams(BaseModel):
    """Query string of ``GET /documents``; every value arrives as text, so numbers are parsed (not strict),
    and an unknown parameter is a 422 like an unknown body field."""

    model_config = ConfigDict(extra="forbid")
    q: NotBlank | None = Field(None, min_length=1, max_length=200, description="Words that must all occur in "
                          "the title, source, type, number, year or issuer (case-insensitive).")
    type: NotBlank | None = Field(None, min_length=1, max_length=64, description="Document type, e.g. Qanun.")
    number: NotBlank | None = Field(None, min_length=1, max_length=64, description="Regulation number.")
    year: int | None = Field(None, ge=1800, le=2200)
    selection: NotBlank | None = Field(None, min_length=1, max_length=128,
                                  description="Only the documents of this named selection.")
    page: int = Field(1, ge=1, le=100_000)
    page_size: int = Field(20, ge=1, le=MAX_PAGE_SIZE)


class DocumentSummary(WireModel):
    document_id: str
    title: str
    type: str | None
    number: str | None
    year: int | None
    issuer: str | None
    source: str
    chunk_count: int


class DocumentList(WireModel):
    documents: list[DocumentSummary]
    total: int = Field(description="Matching documents over all pages.")
    page: int
    page_size: int


class SectionView(WireModel):
    path: list[str] = Field(description="Heading path, e.g. [BAB II, Pasal 12]; empty before any heading.")
    legal_reference: str | None
    first_chunk_id: str
    chunk_ids: list[str]


class DocumentView(DocumentSummary):
    sections: list[SectionView]


class PassageNeighbour(WireModel):
    chunk_id: str
    text: str


class PassageResponse(WireModel):
    document_id: str
    chunk_id: str
    text: str = Field(description="The passage exactly as cited (the chunk's text).")
    kind: str = Field(description="text, table (rows with their header) or list.")
    context: str = Field(description="What a reader sees above it: section heading, list lead-in, table "
                         "header.")
    before: list[PassageNeighbour] = Field(description="The preceding passages, nearest last.")
    after: list[PassageNeighbour] = Field(description="The following passages, nearest first.")
    citation: Citation


def summary(info: DocumentInfo) -> DocumentSummary:
    ident = info.identity
    return DocumentSummary(
        document_id=info.document_id, title=ident.title, type=ident.doc_type, number=ident.number,
        year=ident.year, issuer=ident.issuer, source=info.source, chunk_count=info.chunk_count,
    )


def document_list(page: DocumentPage, params: DocumentListParams) -> DocumentList:
    return DocumentList(
        documents=[summary(d) for d in page.documents], total=page.total, page=params.page,
        page_size=params.page_size,
    )


def _section(section: Section) -> SectionView:
    return SectionView(path=list(section.path), legal_reference=section.legal_reference,
                       first_chunk_id=section.first_chunk_id, chunk_ids=list(section.chunk_ids))


def document_view(outline: DocumentOutline) -> DocumentView:
    sections = [_section(s) for s in outline.sections]
    return DocumentView(**summary(outline.info).model_dump(), sections=sections)


def _neighbour(chunk: Chunk) -> PassageNeighbour:
    return PassageNeighbour(chunk_id=chunk.chunk_id, text=chunk.text)


def passage_response(view: PassageView) -> PassageResponse:
    c = view.chunk
    return PassageResponse(
        document_id=c.document_id, chunk_id=c.chunk_id, text=c.text, kind=c.kind, context=c.context,
        before=[_neighbour(n) for n in view.before], after=[_neighbour(n) for n in view.after],
        citation=Citation.model_validate({**c.citation(), "citation_key": None}),
    )
