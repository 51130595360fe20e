"""The catalogue a partner browses: documents found by title, type, number and year (paged), one document's
identity and sections, and one passage with the text a reader sees around it.

Pure functions over the lookups every retriever has (``documents``, ``document_chunks``, ``chunk``), so the
in-process port and the Retriever deployment run the same code and only the small result crosses a Ray hop.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from retrieval.legal import normalise_number
from retrieval.types import Chunk, DocumentInfo


class CatalogSource(Protocol):
    def documents(self) -> list[DocumentInfo]: ...

    def document_chunks(self, document_id: str) -> list[Chunk]: ...

    def chunk(self, chunk_id: str) -> Chunk | None: ...


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """``q`` matches the title, source and legal identity case-insensitively (every word must occur);
    ``visible`` (None: all) is the caller's set of documents, applied before counting."""

    q: str | None = None
    doc_type: str | None = None
    number: str | None = None
    year: int | None = None
    visible: frozenset[str] | None = None
    page: int = 1
    page_size: int = 20


@dataclass(frozen=True, slots=True)
class DocumentPage:
    documents: list[DocumentInfo]
    total: int  # matches over all pages


@dataclass(frozen=True, slots=True)
class Section:
    """One run of consecutive chunks under the same heading path, in document order."""

    path: tuple[str, ...]
    first_chunk_id: str
    chunk_ids: tuple[str, ...]
    legal_reference: str | None


@dataclass(frozen=True, slots=True)
class DocumentOutline:
    info: DocumentInfo
    sections: list[Section]


@dataclass(frozen=True, slots=True)
class PassageView:
    """A chunk with its neighbours in the document (``before`` nearest last, ``after`` nearest first)."""

    chunk: Chunk
    before: list[Chunk]
    after: list[Chunk]


def _haystack(info: DocumentInfo) -> str:
    ident = info.identity
    parts = [ident.title, info.source, ident.doc_type or "", ident.number or "", str(ident.year or "")]
    parts.append(ident.issuer or "")
    return " ".join(parts).casefold()


def _matches(info: DocumentInfo, query: DocumentQuery) -> bool:
    if query.visible is not None and info.document_id not in query.visible:
        return False
    ident = info.identity
    if query.doc_type is not None and (ident.doc_type or "").casefold() != query.doc_type.casefold():
        return False
    if query.number is not None and normalise_number(ident.number) != normalise_number(query.number):
        return False
    if query.year is not None and ident.year != query.year:
        return False
    if query.q:
        hay = _haystack(info)
        return all(word in hay for word in query.q.casefold().split())
    return True


def find_documents(source: CatalogSource, query: DocumentQuery) -> DocumentPage:
    """Matching documents ordered by title then id (stable across pages), one page of them."""
    found = sorted(
        (d for d in source.documents() if _matches(d, query)),
        key=lambda d: (d.identity.title.casefold(), d.document_id),
    )
    start = (query.page - 1) * query.page_size
    return DocumentPage(found[start : start + query.page_size], len(found))


def _info(source: CatalogSource, document_id: str) -> DocumentInfo | None:
    return next((d for d in source.documents() if d.document_id == document_id), None)


def sections_of(chunks: Sequence[Chunk]) -> list[Section]:
    sections: list[Section] = []
    run: list[Chunk] = []
    for chunk in chunks:
        if run and chunk.section_path != run[0].section_path:
            sections.append(_section(run))
            run = []
        run.append(chunk)
    if run:
        sections.append(_section(run))
    return sections


def _section(run: list[Chunk]) -> Section:
    first = run[0]
    ref = first.legal_reference if first.section_path else None
    return Section(first.section_path, first.chunk_id, tuple(c.chunk_id for c in run), ref)


def document_outline(
    source: CatalogSource, document_id: str, *, visible: Collection[str] | None = None
) -> DocumentOutline | None:
    if visible is not None and document_id not in visible:
        return None
    info = _info(source, document_id)
    if info is None:
        return None
    return DocumentOutline(info, sections_of(source.document_chunks(document_id)))


def passage_view(
    source: CatalogSource,
    document_id: str,
    chunk_id: str,
    *,
    neighbours: int = 1,
    visible: Collection[str] | None = None,
) -> PassageView | None:
    """None when the document is not visible or the chunk is not one of its chunks."""
    if visible is not None and document_id not in visible:
        return None
    chunk = source.chunk(chunk_id)
    if chunk is None or chunk.document_id != document_id:
        return None
    chunks = source.document_chunks(document_id)
    at = next((i for i, c in enumerate(chunks) if c.chunk_id == chunk_id), None)
    if at is None:
        return None
    before = list(chunks[max(0, at - neighbours) : at])
    return PassageView(chunk, before, list(chunks[at + 1 : at + 1 + neighbours]))
