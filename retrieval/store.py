"""The index directory: layout, manifest, and atomic replacement.

Layout of ``index_dir``::

    manifest.json    format version, corpus fingerprint, sources with their sha256, encoder, versions
    documents.jsonl  one document per line (identity, source, sha256, chunk range, articles, tables)
    chunks.jsonl     one Chunk per line, in index order (row i of bm25 and of the vectors)
    refs.jsonl       cross-references: which chunk cites / amends / revokes which regulation
    texts/ID.txt     the extracted text of each document (chunk offsets point into it)
    bm25/            the bm25s index (memory-mapped on load)
    vectors.npy      chunk vectors (memory-mapped); dense.faiss the faiss index over them

A new index is written to a sibling temporary directory, every file fsynced, then swapped in by rename;
the previous directory is removed only after the swap, so a crash leaves either index whole.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from models.json_types import JSON, JSONObject, json_objects
from retrieval.index_lock import holder_alive
from retrieval.types import Chunk, DocumentIdentity

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class IdentityRow(TypedDict):
    """A document's identity in ``documents.jsonl``."""

    title: str
    doc_type: str | None
    number: str | None
    year: int | None
    issuer: str | None


class TableRow(TypedDict):
    """One ingested CSV/XLSX table of a document: its rows are ``[chunk_id, cells]`` pairs."""

    name: str
    columns: list[str]
    rows: list[tuple[str, list[str]]]


class DocumentRow(TypedDict):
    """One line of ``documents.jsonl``: chunks ``chunk_start``..``chunk_end`` (exclusive) of chunks.jsonl."""

    document_id: str
    source: str
    sha256: str
    identity: IdentityRow
    chunk_start: int
    chunk_end: int
    bytes: NotRequired[int]
    kind: NotRequired[str]
    chunker_version: NotRequired[int]
    tables: NotRequired[list[TableRow]]


class ArticleRow(TypedDict):
    """The article a chunk lies in (``chunks.jsonl``'s ``article``): Pasal, the last one of a merged run of
    Penjelasan articles, the ayats it covers ([] = the whole article), whether it is the Penjelasan."""

    pasal: str | None
    pasal_last: str | None
    ayats: list[str]
    penjelasan: bool


class RefRow(TypedDict):
    """One line of ``refs.jsonl``: the chunk of ``document_id`` that names a regulation, and how."""

    document_id: str
    doc_type: str | None
    number: str | None
    year: int | None
    relation: str
    chunk_id: str


class RetrievalIndexError(Exception):
    """Base of index problems; the message is one sentence safe to show."""


class IndexMissingError(RetrievalIndexError, FileNotFoundError):
    pass


class IncompatibleIndexError(RetrievalIndexError):
    pass


def library_versions() -> dict[str, str]:
    versions = {}
    for package in ("bm25s", "faiss-cpu", "faiss-gpu-cu12", "numpy", "PyStemmer", "sentence-transformers"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            _fsync_path(Path(dirpath) / name)
        _fsync_path(Path(dirpath))


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
            handle.write("\n")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# The rows of an index's files, as ingest wrote them (the manifest's format version is checked on load).
def read_document_rows(index_dir: Path) -> list[DocumentRow]:
    return cast("list[DocumentRow]", read_jsonl(index_dir / "documents.jsonl"))


def read_ref_rows(index_dir: Path) -> list[RefRow]:
    return cast("list[RefRow]", read_jsonl(index_dir / "refs.jsonl"))


def _old_dirs(index_dir: Path) -> list[Path]:
    return sorted(index_dir.parent.glob(f".{index_dir.name}.old-*"))


def recover(index_dir: Path) -> None:
    """Finish or undo a swap that a crash interrupted between its two renames, and remove what a crashed
    ingest left. Never while another process's ingest holds the index (retrieval/index_lock.py): its
    temporary directory is its work in progress, and between its two renames the index is briefly absent."""
    if holder_alive(index_dir):
        return
    if index_dir.exists():
        for old in _old_dirs(index_dir):
            shutil.rmtree(old, ignore_errors=True)
        for tmp in index_dir.parent.glob(f".{index_dir.name}.tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)
        return
    olds = _old_dirs(index_dir)
    if olds:
        os.rename(olds[-1], index_dir)


def replace_atomically(index_dir: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp_dir)`` on a fresh sibling directory, fsync it, then swap it in for ``index_dir``.

    If ``write`` (or anything before the swap) raises, the temporary directory is removed and
    ``index_dir`` is untouched."""
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:8]
    tmp = index_dir.parent / f".{index_dir.name}.tmp-{token}"
    tmp.mkdir()
    try:
        write(tmp)
        fsync_tree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = index_dir.parent / f".{index_dir.name}.old-{token}"
    if index_dir.exists():
        os.rename(index_dir, old)
    os.rename(tmp, index_dir)
    _fsync_path(index_dir.parent)
    shutil.rmtree(old, ignore_errors=True)


def read_manifest(index_dir: Path) -> JSONObject:
    recover(index_dir)
    path = index_dir / MANIFEST
    if not path.is_file():
        raise IndexMissingError(f"no retrieval index at {index_dir}; run `aceh-rag ingest` first")
    try:
        manifest: JSONObject = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise IncompatibleIndexError(f"the index manifest at {path} is unreadable; re-run ingest") from None
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IncompatibleIndexError(
            f"the index at {index_dir} has format version {manifest.get('format_version')}, this build reads "
            f"version {FORMAT_VERSION}; re-ingest into a new index directory"
        )
    return manifest


def indexed_sources(index_dir: Path) -> list[str]:
    """The source (path relative to the ingested folder) of every document in the index."""
    return [str(entry["source"]) for entry in json_objects(read_manifest(index_dir)["sources"])]


def built_encoder(manifest: JSON) -> JSON:
    """The manifest's ``encoder`` entry (``{name, dim}``); empty when it has none."""
    built = manifest.get("encoder")
    return built if isinstance(built, Mapping) else {}


def check_encoder(manifest: JSON, name: str, dim: int, index_dir: Path) -> None:
    built = built_encoder(manifest)
    if built.get("name") != name or built.get("dim") != dim:
        raise IncompatibleIndexError(
            f"the index at {index_dir} was built with encoder {built.get('name')} ({built.get('dim')} dims), "
            f"not the configured {name} ({dim} dims); re-ingest with the configured encoder"
        )


def chunk_to_row(chunk: Chunk, article: dict[str, Any], key: str) -> dict[str, Any]:
    row = chunk.to_dict()
    row["article"] = article
    row["key"] = key
    return row


def chunk_from_row(row: dict[str, Any], identity: DocumentIdentity) -> Chunk:
    return Chunk(
        chunk_id=row["chunk_id"],
        document_id=row["document_id"],
        document_title=row["document_title"],
        ordinal=row["ordinal"],
        text=row["text"],
        source=row["source"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        identity=identity,
        section_path=tuple(row["section_path"]),
        legal_reference=row["legal_reference"],
        page=row["page"],
        context=row["context"],
        kind=row["kind"],
    )


def identity_to_row(identity: DocumentIdentity) -> IdentityRow:
    return {
        "title": identity.title,
        "doc_type": identity.doc_type,
        "number": identity.number,
        "year": identity.year,
        "issuer": identity.issuer,
    }


def identity_from_row(row: IdentityRow | dict[str, Any]) -> DocumentIdentity:
    return DocumentIdentity(
        title=row["title"],
        doc_type=row.get("doc_type"),
        number=row.get("number"),
        year=row.get("year"),
        issuer=row.get("issuer"),
    )
