"""Build or update the index from files and folders, idempotently and atomically.

A file whose bytes (sha256) and chunker version are unchanged keeps its document id, chunks and vectors;
a changed file is re-extracted under a new document id; a new file is added. Vectors are looked up by the
hash of the exact text the encoder sees, so only new text is encoded. A file that fails (empty, corrupt,
binary, oversized, unreadable) is reported with one fixed sentence and, if an older version of it was
indexed, that version stays. The new index replaces the old one atomically (see :mod:`retrieval.store`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from models.embeddings import Encoder
from retrieval.dense import HNSW_THRESHOLD, DenseIndex
from retrieval.documents import CHUNKER_VERSION, Document, build_document, index_text
from retrieval.extract import SUPPORTED_SUFFIXES, ExtractionError, extract
from retrieval.index_lock import index_lock
from retrieval.lexical import LexicalIndex
from retrieval.store import (
    FORMAT_VERSION,
    MANIFEST,
    IncompatibleIndexError,
    built_encoder,
    chunk_from_row,
    chunk_to_row,
    identity_from_row,
    indexed_sources,
    library_versions,
    read_jsonl,
    read_manifest,
    recover,
    replace_atomically,
    write_jsonl,
)
from retrieval.text import TOKENIZER_VERSION, IndonesianAnalyzer

ENCODE_GROUP = 512  # texts per encoder call (sorted by length first, so each call pads little)


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0  # chunks in the index after this run
    encoded: int = 0  # texts encoded by this run (the rest reused their vectors)
    seconds: float = 0.0
    written: bool = False  # False when nothing changed and the index on disk was left as it was

    def summary(self) -> str:
        lines = [
            f"ingest: {len(self.added)} added, {len(self.updated)} updated, {len(self.unchanged)} unchanged, "
            f"{len(self.removed)} removed, {len(self.failed)} failed; {self.chunks} chunks in the index, "
            f"{self.encoded} newly encoded; {self.seconds:.1f} s"
            + ("" if self.written else " (index unchanged)")
        ]
        lines.extend(f"  failed: {path}: {reason}" for path, reason in self.failed)
        return "\n".join(lines)


@dataclass
class _OldIndex:
    directory: Path
    documents: dict[str, dict[str, Any]]  # by source
    chunk_rows: list[dict[str, Any]]
    ref_rows: dict[str, list[dict[str, Any]]]  # by document id
    vectors: np.ndarray | None  # None when the encoder differs (vectors cannot be reused)
    keys: dict[str, int]


def _walk(paths: Sequence[str | Path], report: IngestReport) -> list[tuple[Path, str]]:
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = [
                (p, p.relative_to(path).as_posix())
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix.lower() in SUPPORTED_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                report.failed.append((str(path), f"unsupported file type '{path.suffix or path.name}'"))
                continue
            files = [(path, path.name)]
        else:
            report.failed.append((str(path), "the path does not exist"))
            continue
        for file, source in files:
            if source in found and found[source].resolve() != file.resolve():
                report.failed.append((str(file), f"another file was already ingested as '{source}'"))
                continue
            found[source] = file
    return [(file, source) for source, file in sorted(found.items())]


def discover(paths: Sequence[str | Path]) -> tuple[list[tuple[Path, str]], list[tuple[str, str]]]:
    """The files ``ingest`` would read for ``paths`` as (file, source) pairs, and the paths it would reject.
    Compare the sources with ``Retriever.corpus_sources`` to tell whether an index was built from them."""
    report = IngestReport()
    return _walk(paths, report), report.failed


def foreign_sources(index_dir: Path, paths: Sequence[str | Path]) -> list[str]:
    """Indexed documents whose source is not among ``paths``: what ``prune=True`` would delete."""
    if not (Path(index_dir) / MANIFEST).is_file():
        return []
    found = {source for _, source in discover(paths)[0]}
    return sorted(set(indexed_sources(index_dir)) - found)


def _load_old(index_dir: Path, encoder: Encoder) -> _OldIndex | None:
    recover(index_dir)
    if not (index_dir / MANIFEST).is_file():
        return None
    manifest = read_manifest(index_dir)  # raises IncompatibleIndexError on another format version
    documents = {row["source"]: row for row in read_jsonl(index_dir / "documents.jsonl")}
    chunk_rows = read_jsonl(index_dir / "chunks.jsonl")
    refs: dict[str, list[dict[str, Any]]] = {}
    for row in read_jsonl(index_dir / "refs.jsonl"):
        refs.setdefault(row["document_id"], []).append(row)
    built = built_encoder(manifest)
    vectors = None
    keys: dict[str, int] = {}
    if built.get("name") == encoder.name and built.get("dim") == encoder.dim:
        vectors = np.load(index_dir / "vectors.npy", mmap_mode="r")
        keys = {row["key"]: i for i, row in enumerate(chunk_rows)}
    return _OldIndex(index_dir, documents, chunk_rows, refs, vectors, keys)


def _read_document(file: Path, source: str, max_file_bytes: int, max_chars: int) -> tuple[bytes, str]:
    try:
        size = file.stat().st_size
    except OSError:
        raise ExtractionError("the file could not be read") from None
    if size == 0:
        raise ExtractionError("the file is empty")
    if size > max_file_bytes:
        raise ExtractionError(f"the file is larger than the {max_file_bytes:,}-byte limit")
    try:
        data = file.read_bytes()
    except OSError:
        raise ExtractionError("the file could not be read") from None
    return data, hashlib.sha256(data).hexdigest()


def ingest(
    paths: Sequence[str | Path],
    index_dir: Path,
    *,
    encoder: Encoder,
    progress: bool = True,
    max_file_bytes: int = 50_000_000,
    max_chars: int = 1200,
    prune: bool = False,
    hnsw_threshold: int = HNSW_THRESHOLD,
    batch_size: int = 64,
    wait: bool = False,
) -> IngestReport:
    """Add and update the documents under ``paths`` (files or folders, recursive) in ``index_dir``.

    ``prune=True`` also drops indexed documents whose source is not among ``paths``. Raises
    :class:`IncompatibleIndexError` for an index of another format version, and
    :class:`~retrieval.index_lock.IndexBusyError` while another ingest holds the index (``wait=True``
    waits for it instead); per-file problems never raise, they are listed in ``IngestReport.failed``."""
    with index_lock(Path(index_dir), wait=wait):  # from reading the old index to the swap: one writer
        return _ingest(
            paths, Path(index_dir), encoder=encoder, progress=progress, max_file_bytes=max_file_bytes,
            max_chars=max_chars, prune=prune, hnsw_threshold=hnsw_threshold, batch_size=batch_size,
        )


def _ingest(
    paths: Sequence[str | Path],
    index_dir: Path,
    *,
    encoder: Encoder,
    progress: bool,
    max_file_bytes: int,
    max_chars: int,
    prune: bool,
    hnsw_threshold: int,
    batch_size: int,
) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport()
    old = _load_old(index_dir, encoder)
    files = _walk(paths, report)
    kept_rows: dict[str, dict[str, Any]] = {}  # source -> old document row reused as is
    new_docs: dict[str, Document] = {}
    bar = tqdm(files, desc="ingest", unit="file", file=sys.stderr, disable=not progress or len(files) < 2)
    for file, source in bar:
        previous = old.documents.get(source) if old else None
        try:
            data, sha = _read_document(file, source, max_file_bytes, max_chars)
            if previous and previous["sha256"] == sha and previous.get("chunker_version") == CHUNKER_VERSION:
                kept_rows[source] = previous
                report.unchanged.append(source)
                continue
            document = build_document(
                extract(file, data),
                source=source,
                sha256=sha,
                size=len(data),
                file_stem=file.stem,
                max_chars=max_chars,
            )
            if not document.chunks:
                raise ExtractionError("no text could be extracted from the file")
        except ExtractionError as exc:
            report.failed.append((str(file), str(exc)))
            if previous:
                kept_rows[source] = previous
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the batch
            report.failed.append((str(file), f"the file could not be processed ({type(exc).__name__})"))
            if previous:
                kept_rows[source] = previous
            continue
        new_docs[source] = document
        (report.updated if previous else report.added).append(source)
    if old and not prune:
        for source, row in old.documents.items():
            if source not in kept_rows and source not in new_docs:
                kept_rows[source] = row
    if old:
        report.removed = sorted(s for s in old.documents if s not in kept_rows and s not in new_docs)
    encoder_changed = old is not None and old.vectors is None
    if old and not new_docs and not report.removed and not encoder_changed:
        report.chunks = len(old.chunk_rows)
        report.seconds = time.perf_counter() - started
        return report
    if not new_docs and not kept_rows and old is None:
        report.seconds = time.perf_counter() - started
        return report  # nothing indexable and no index yet: leave no empty index behind
    _write_index(
        index_dir,
        old,
        kept_rows,
        new_docs,
        encoder,
        report,
        progress=progress,
        hnsw_threshold=hnsw_threshold,
        batch_size=batch_size,
    )
    report.written = True
    report.seconds = time.perf_counter() - started
    return report


def _write_index(
    index_dir: Path,
    old: _OldIndex | None,
    kept_rows: dict[str, dict[str, Any]],
    new_docs: dict[str, Document],
    encoder: Encoder,
    report: IngestReport,
    *,
    progress: bool,
    hnsw_threshold: int,
    batch_size: int,
) -> None:
    doc_rows: list[dict[str, Any]] = []
    chunk_rows: list[dict[str, Any]] = []
    ref_rows: list[dict[str, Any]] = []
    texts_for_index: list[str] = []
    for source in sorted(set(kept_rows) | set(new_docs)):
        first = len(chunk_rows)
        if source in new_docs:
            doc = new_docs[source]
            for chunk, article in zip(doc.chunks, doc.articles):
                text = index_text(chunk, file_stem=Path(source).stem)
                texts_for_index.append(text)
                chunk_rows.append(chunk_to_row(chunk, article, hashlib.sha256(text.encode()).hexdigest()))
            ref_rows.extend(
                {
                    "document_id": doc.document_id,
                    "doc_type": r.doc_type,
                    "number": r.number,
                    "year": r.year,
                    "relation": r.relation,
                    "chunk_id": r.chunk_id,
                }
                for r in doc.cross_refs
            )
            row: dict[str, Any] = {
                "document_id": doc.document_id,
                "source": source,
                "sha256": doc.sha256,
                "bytes": doc.size,
                "kind": doc.kind,
                "chunker_version": CHUNKER_VERSION,
                "tables": doc.tables,
                "identity": {
                    "title": doc.identity.title,
                    "doc_type": doc.identity.doc_type,
                    "number": doc.identity.number,
                    "year": doc.identity.year,
                    "issuer": doc.identity.issuer,
                },
            }
        else:
            assert old is not None
            row = dict(kept_rows[source])
            old_rows = old.chunk_rows[row["chunk_start"] : row["chunk_end"]]
            chunk_rows.extend(old_rows)
            texts_for_index.extend(index_text_from_row(r, Path(source).stem) for r in old_rows)
            ref_rows.extend(old.ref_rows.get(row["document_id"], []))
        row["chunk_start"], row["chunk_end"] = first, len(chunk_rows)
        doc_rows.append(row)
    report.chunks = len(chunk_rows)
    vectors = _vectors(
        chunk_rows, texts_for_index, old, encoder, report, progress=progress, batch_size=batch_size
    )
    analyzer = IndonesianAnalyzer()
    lexical = LexicalIndex.build([analyzer(text) for text in texts_for_index])
    dense = DenseIndex.build(vectors, hnsw_threshold=hnsw_threshold)
    fingerprint = hashlib.sha256(
        "\n".join(f"{r['source']}\0{r['sha256']}\0{r.get('chunker_version')}" for r in doc_rows).encode()
        + f"\0{encoder.name}".encode()
    ).hexdigest()
    manifest = {
        "format_version": FORMAT_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "fingerprint": fingerprint,
        "encoder": {"name": encoder.name, "dim": encoder.dim},
        "chunker_version": CHUNKER_VERSION,
        "tokenizer_version": TOKENIZER_VERSION,
        "dense_index": "hnsw" if len(vectors) > hnsw_threshold else "flat",
        "documents": len(doc_rows),
        "chunks": len(chunk_rows),
        "sources": [
            {
                "source": r["source"],
                "sha256": r["sha256"],
                "bytes": r["bytes"],
                "document_id": r["document_id"],
            }
            for r in doc_rows
        ],
        "versions": library_versions(),
    }

    def write(tmp: Path) -> None:
        (tmp / "texts").mkdir()
        for row in doc_rows:
            target = tmp / "texts" / f"{row['document_id']}.txt"
            if row["source"] in new_docs:
                target.write_text(new_docs[row["source"]].text, encoding="utf-8")
            else:
                assert old is not None
                shutil.copyfile(old.directory / "texts" / f"{row['document_id']}.txt", target)
        write_jsonl(tmp / "documents.jsonl", doc_rows)
        write_jsonl(tmp / "chunks.jsonl", chunk_rows)
        write_jsonl(tmp / "refs.jsonl", ref_rows)
        (tmp / "bm25").mkdir()
        lexical.save(tmp / "bm25")
        dense.save(tmp)
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")

    replace_atomically(index_dir, write)


def index_text_from_row(row: dict[str, Any], file_stem: str) -> str:
    identity = identity_from_row(row["identity"])
    return index_text(chunk_from_row(row, identity), file_stem=file_stem)


def _vectors(
    chunk_rows: list[dict[str, Any]],
    texts: list[str],
    old: _OldIndex | None,
    encoder: Encoder,
    report: IngestReport,
    *,
    progress: bool,
    batch_size: int,
) -> np.ndarray:
    vectors = np.zeros((len(chunk_rows), encoder.dim), dtype=np.float32)
    missing: dict[str, list[int]] = {}
    # Vectors of the previous index can be reused only when it was built by this encoder
    old_keys, old_vectors = (old.keys, old.vectors) if old and old.vectors is not None else ({}, None)
    for i, row in enumerate(chunk_rows):
        source_row = old_keys.get(row["key"])
        if source_row is not None and old_vectors is not None:
            vectors[i] = old_vectors[source_row]
        else:
            missing.setdefault(row["key"], []).append(i)
    order = sorted(missing, key=lambda key: len(texts[missing[key][0]]))
    report.encoded = len(order)
    with tqdm(
        total=len(order),
        desc="encode",
        unit="chunk",
        file=sys.stderr,
        disable=not progress or len(order) < ENCODE_GROUP,
    ) as bar:
        for start in range(0, len(order), ENCODE_GROUP):
            group = order[start : start + ENCODE_GROUP]
            encoded = encoder.encode([texts[missing[key][0]] for key in group], batch_size=batch_size)
            for key, vector in zip(group, encoded):
                vectors[missing[key]] = vector
            bar.update(len(group))
    return vectors


__all__ = ["IngestReport", "IncompatibleIndexError", "discover", "ingest"]
