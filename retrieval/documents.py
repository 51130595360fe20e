"""From an extracted file to a document: its identity (title, type, number, year, issuer), stable ids, and
the citable :class:`Chunk` objects with their legal references and cross-references."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any

from retrieval.chunking import Span, chunk_document
from retrieval.extract import CELL_SEPARATOR, Extracted
from retrieval.legal import (
    LegalRef,
    find_references,
    format_article,
    format_reference,
    identity_from_path,
    identity_from_title,
    normalise_issuer,
    normalise_number,
    relation_of,
)
from retrieval.types import Chunk, DocumentIdentity

CHUNKER_VERSION = 2  # bump when chunk spans, metadata or index text change, so unchanged files are re-chunked

_TITLE_END = re.compile(r"DENGAN\s+RAHMAT|PRESIDEN\s+REPUBLIK|GUBERNUR\s+ACEH,|Menimbang|MEMUTUSKAN|\n\s*\n")
_REPEATED_PREFIX = re.compile(r"^(?P<head>.{10,80}?)\s+(?P=head)\s+", re.IGNORECASE)


@dataclass
class CrossRef:
    doc_type: str
    number: str | None
    year: int | None
    relation: str
    chunk_id: str


@dataclass
class Document:
    document_id: str
    source: str
    sha256: str
    size: int
    identity: DocumentIdentity
    text: str
    kind: str
    chunks: list[Chunk]
    articles: list[dict[str, Any]]  # per chunk: {"pasal", "pasal_last", "ayats", "penjelasan"}
    cross_refs: list[CrossRef] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"name", "columns", "rows": [[chunk_id, cells]]}


def document_id_for(source: str, sha256: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", source.lower().rsplit(".", 1)[0]).strip("-")[-40:] or "doc"
    digest = hashlib.sha256(f"{source}\0{sha256}".encode()).hexdigest()[:12]
    return f"{slug}-{digest}"


def chunk_id_for(document_id: str, ordinal: int, text: str) -> str:
    return f"{document_id}:{ordinal:05d}:{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _clean_title(raw: str) -> str:
    title = " ".join(raw.replace("#", " ").split())
    title = _REPEATED_PREFIX.sub(lambda m: m.group("head") + " ", title)
    title = re.sub(r"\bUNDANG[\s-]+UNDANG\b", "UNDANG-UNDANG", title)
    return title[:300]


def _meta(meta: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if meta.get(key) not in (None, ""):
            return meta[key]
    return None


def resolve_identity(ex: Extracted, file_stem: str) -> DocumentIdentity:
    """Front matter wins; then the first ``# Title`` line or the legal title at the top of the text; then the
    HTML/PDF title; then the file name."""
    body = ex.text[ex.body_start : ex.body_start + 3000]
    title = ex.title_hint
    if not title and not ex.tables:
        heading = re.match(r"\s*#[ \t]+(.+)", body)
        if heading:
            title = heading.group(1)
        else:
            head = body.lstrip()
            end = _TITLE_END.search(head)
            candidate = head[: end.start() if end else 400][:400]
            if identity_from_title(candidate)[0] is not None:
                title = candidate
    title = _clean_title(title) if title else file_stem
    doc_type, number, year, issuer = identity_from_title(title)
    meta = ex.meta
    meta_type = _meta(meta, "type", "jenis", "doc_type")
    meta_number = _meta(meta, "number", "nomor")
    meta_year = _meta(meta, "year", "tahun")
    meta_issuer = _meta(meta, "issuer", "penerbit", "instansi")
    if meta_year is not None:
        try:
            year = int(str(meta_year).strip())
        except ValueError:
            pass
    if doc_type is None and not meta_type:
        # Not a regulation: name the kind the filters of a selection can ask for.
        lowered = title.casefold()
        doc_type = (
            "Dataset"
            if ex.tables
            else "Statistik"
            if lowered.startswith("statistik")
            else "Laporan"
            if lowered.startswith("laporan")
            else None
        )
    return DocumentIdentity(
        title=title,
        doc_type=str(meta_type) if meta_type else doc_type,
        number=normalise_number(str(meta_number)) if meta_number is not None else number,
        year=year,
        issuer=normalise_issuer(str(meta_issuer)) if meta_issuer else issuer,
    )


# A statute's heading inside its opening text, where extraction put "Menimbang" or a recital before it:
# "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 15 TAHUN 2017 TENTANG ..." up to the line's end.
_HEADING = re.compile(
    r"(?:UNDANG-UNDANG|PERATURAN\s+PEMERINTAH)\s+REPUBLIK\s+INDONESIA\s+NOMOR\s+\S+\s+TAHUN\s+\S+\s+TENTANG\s+"
    r"[^\n]+?(?=\s*(?:DENGAN\s+RAHMAT|\n|$))"
)


def with_opening_title(identity: DocumentIdentity, opening: str) -> DocumentIdentity:
    """``identity`` titled by the statute heading in ``opening`` (its first chunk's text) when its title names
    no regulation (ingest fell back to the file name: the heading came after "Menimbang"); else unchanged."""
    if identity_from_title(identity.title)[0] is not None:
        return identity
    m = _HEADING.search(opening[:2000])
    return replace(identity, title=_clean_title(m.group(0))) if m else identity


def with_path_identity(identity: DocumentIdentity, source: str) -> DocumentIdentity:
    """``identity`` with the type, number and year its source path names (retrieval.legal.identity_from_path)
    where the title read from the text gave none or others; the title is kept."""
    named = identity_from_path(source)
    if named is None or (identity.doc_type, identity.number, identity.year) == named:
        return identity
    doc_type, number, year = named
    national = doc_type in ("UU", "Perppu", "PP", "Perpres", "Keppres", "Inpres", "UUD")
    issuer = "Republik Indonesia" if national else identity.issuer
    return replace(identity, doc_type=doc_type, number=number, year=year, issuer=issuer)


def _article_text(span: Span) -> str | None:
    if not span.pasal:
        return None
    if span.pasal_last:
        article = f"Pasal {span.pasal} sampai dengan Pasal {span.pasal_last}"
    elif len(span.ayats) > 1:
        article = f"Pasal {span.pasal} ayat ({span.ayats[0]}) sampai dengan ayat ({span.ayats[-1]})"
    else:
        article = format_article(span.pasal, span.ayats[0] if span.ayats else None)
    return f"Penjelasan {article}" if span.penjelasan else article


def build_document(
    ex: Extracted, *, source: str, sha256: str, size: int, file_stem: str, max_chars: int
) -> Document:
    identity = with_path_identity(resolve_identity(ex, file_stem), source)
    document_id = document_id_for(source, sha256)
    spans = chunk_document(ex, max_chars=max_chars, skip_title_heading=True)
    chunks: list[Chunk] = []
    articles: list[dict[str, Any]] = []
    cross_refs: list[CrossRef] = []
    row_chunks: dict[tuple[int, int], str] = {}
    for ordinal, span in enumerate(spans):
        text = ex.text[span.start : span.end]
        article = _article_text(span)
        legal_reference = None
        if identity.doc_type or article:
            legal_reference = format_reference(
                identity.doc_type,
                identity.number,
                identity.year,
                issuer=identity.issuer,
                pasal=article,
                title=identity.title,
            )
        chunk = Chunk(
            chunk_id=chunk_id_for(document_id, ordinal, text),
            document_id=document_id,
            document_title=identity.title,
            ordinal=ordinal,
            text=text,
            source=source,
            char_start=span.start,
            char_end=span.end,
            identity=identity,
            section_path=span.section_path,
            legal_reference=legal_reference,
            page=span.page,
            context=span.context,
            kind=span.kind,
        )
        chunks.append(chunk)
        articles.append(
            {
                "pasal": span.pasal,
                "pasal_last": span.pasal_last,
                "ayats": list(span.ayats),
                "penjelasan": span.penjelasan,
            }
        )
        if span.table_index is not None and span.row_index is not None:
            row_chunks[(span.table_index, span.row_index)] = chunk.chunk_id
        cross_refs.extend(_cross_refs(text, chunk.chunk_id, span, identity))
    tables = [
        {
            "name": table.name,
            "columns": table.columns,
            "rows": [
                [row_chunks[(t_index, r_index)], cells]
                for r_index, cells in enumerate(table.rows)
                if (t_index, r_index) in row_chunks
            ],
        }
        for t_index, table in enumerate(ex.tables)
    ]
    return Document(
        document_id, source, sha256, size, identity, ex.text, ex.kind, chunks, articles, cross_refs, tables
    )


def _cross_refs(text: str, chunk_id: str, span: Span, identity: DocumentIdentity) -> list[CrossRef]:
    out = []
    top = span.section_path[0] if span.section_path else None
    seen: set[tuple[str, str | None, int | None]] = set()
    for ref in find_references(text):
        if not ref.names_document or ref.doc_type is None or ref.doc_type == "UUD":
            continue
        if ref.same_document(identity.doc_type, identity.number, identity.year):
            continue  # the document naming itself (titles, "Penjelasan atas ...")
        key = (ref.doc_type, ref.number, ref.year)
        if key in seen:
            continue
        seen.add(key)
        out.append(CrossRef(ref.doc_type, ref.number, ref.year, relation_of(text, ref, top), chunk_id))
    return out


def index_text(chunk: Chunk, *, file_stem: str | None = None) -> str:
    """What BM25 and the encoder see for a chunk: the short reference ("UU 11/2006") with the section path,
    the reader context, the text, and last the document's title (left out when it is only the file name).

    The order is for the encoder, which keeps only its first ``max_seq_length`` word pieces (64 on the CPU
    default): a statute's title alone can fill half of that, so the chunk's own words come first. BM25 sees
    every word whatever the order, and exact references are matched from the metadata."""
    ident = chunk.identity
    short_ref = (
        f"{ident.doc_type} {ident.number}/{ident.year}"
        if ident.doc_type and ident.number and ident.year
        else ""
    )
    title = "" if ident.title == file_stem else ident.title
    body = chunk.text
    context = chunk.context
    header = context.split(CELL_SEPARATOR)
    cells = chunk.text.split(CELL_SEPARATOR)
    if chunk.kind == "table" and len(header) == len(cells) > 1:
        # "column: value" pairs keep each value next to its column, even after the encoder truncates
        body = "; ".join(f"{name}: {value}" for name, value in zip(header, cells) if value.strip())
        context = ""
    parts = [" / ".join(part for part in [short_ref, *chunk.section_path] if part), context, body, title]
    return "\n".join(part for part in parts if part)


def query_article_refs(query: str) -> list[LegalRef]:
    return [ref for ref in find_references(query) if ref.names_document or ref.pasal]
