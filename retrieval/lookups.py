"""Exact lookups over a loaded index: documents, chunks, a named article, cross-references, metadata filters
and ingested tables. A mixin of :class:`retrieval.retriever.Retriever`, which loads the state it reads."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from retrieval.legal import LegalRef, find_references, normalise_number
from retrieval.store import ArticleRow, DocumentRow, RefRow
from retrieval.types import Chunk, DocumentInfo, TableData


class DocumentLookups:
    index_dir: Path
    _docs: dict[str, DocumentRow]
    _infos: dict[str, DocumentInfo]
    _chunks: list[Chunk]
    _articles: list[ArticleRow]
    _refs: list[RefRow]
    _by_id: dict[str, int]
    _pasal_rows: dict[str, list[int]]

    def documents(self) -> list[DocumentInfo]:
        return [self._infos[d] for d in sorted(self._infos, key=lambda d: self._infos[d].source)]

    def document(self, document_id: str) -> DocumentInfo | None:
        return self._infos.get(document_id)

    def document_chunks(self, document_id: str) -> list[Chunk]:
        row = self._docs.get(document_id)
        return self._chunks[row["chunk_start"] : row["chunk_end"]] if row else []

    def document_text(self, document_id: str) -> str | None:
        """The extracted text every chunk offset of the document points into."""
        if document_id not in self._docs:
            return None
        return (self.index_dir / "texts" / f"{document_id}.txt").read_text(encoding="utf-8")

    def chunk(self, chunk_id: str) -> Chunk | None:
        i = self._by_id.get(chunk_id)
        return self._chunks[i] if i is not None else None

    def _matching_documents(self, doc_type: str | None, number: str | None, year: int | None) -> list[str]:
        wanted = normalise_number(number)
        return [
            d
            for d, info in self._infos.items()
            if (doc_type is None or (info.identity.doc_type or "").casefold() == doc_type.casefold())
            and (wanted is None or normalise_number(info.identity.number) == wanted)
            and (year is None or info.identity.year == year)
        ]

    def lookup_article(self, ref: LegalRef, *, document_ids: Collection[str] | None = None) -> list[Chunk]:
        """Chunks of the named Pasal (and ayat, when named) in the named regulation, in document order; body
        chunks only, or the Penjelasan when the body has none. Without a named regulation, every document in
        scope is searched."""
        if not ref.pasal:
            return []
        docs = (
            self._matching_documents(ref.doc_type, ref.number, ref.year)
            if ref.names_document
            else list(self._docs)
        )
        if document_ids is not None:
            docs = [d for d in docs if d in set(document_ids)]
        body: list[Chunk] = []
        explained: list[Chunk] = []
        wanted_docs = set(docs)
        for j in self._pasal_rows.get(ref.pasal, []):
            if self._chunks[j].document_id not in wanted_docs:
                continue
            art = self._articles[j]
            if art.get("pasal_last"):
                continue
            if ref.ayat and art.get("ayats") and ref.ayat not in art["ayats"]:
                continue
            (explained if art.get("penjelasan") else body).append(self._chunks[j])
        return body or explained

    def cross_references(
        self, doc_type: str, number: str | None, year: int | None
    ) -> list[tuple[DocumentInfo, str, Chunk]]:
        """Documents whose text names the given regulation: (citing document, relation, citing chunk); the
        relation is revokes, amends, as_amended, legal_basis, considers or cites."""
        wanted = normalise_number(number)
        out = []
        for ref in self._refs:
            if (ref["doc_type"] or "").casefold() != doc_type.casefold():
                continue
            if wanted is not None and normalise_number(ref["number"]) != wanted:
                continue
            if year is not None and ref["year"] != year:
                continue
            chunk = self.chunk(ref["chunk_id"])
            if chunk is not None:
                out.append((self._infos[ref["document_id"]], ref["relation"], chunk))
        return out

    def references_in(self, text: str) -> list[LegalRef]:
        return find_references(text)

    def resolve_filter(
        self,
        type: str | None = None,
        year: int | None = None,  # noqa: A002 - config key
        issuer: str | None = None,
    ) -> list[str]:
        """Document ids matching every given field (case-insensitive type and issuer, exact year)."""
        out = []
        for d, info in self._infos.items():
            ident = info.identity
            if type is not None and (ident.doc_type or "").casefold() != str(type).casefold():
                continue
            if year is not None and ident.year != int(year):
                continue
            if issuer is not None and (ident.issuer or "").casefold() != str(issuer).casefold():
                continue
            out.append(d)
        return sorted(out, key=lambda d: self._infos[d].source)

    def tables(self, document_id: str) -> list[TableData]:
        row = self._docs.get(document_id)
        if not row:
            return []
        return [
            TableData(
                columns=list(t["columns"]),
                rows=[(cid, list(cells)) for cid, cells in t["rows"]],
                name=t["name"],
            )
            for t in row.get("tables") or []
        ]

    def table(self, document_id: str) -> TableData | None:
        """The (first) table of an ingested CSV/XLSX document, or None for other documents."""
        tables = self.tables(document_id)
        return tables[0] if tables else None
