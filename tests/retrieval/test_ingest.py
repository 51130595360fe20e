from __future__ import annotations

import json
from pathlib import Path

import pytest

import retrieval.dense
from models.embeddings import HashingEncoder
from retrieval.ingest import ingest
from retrieval.retriever import Retriever
from retrieval.store import IncompatibleIndexError, IndexMissingError
from tests.retrieval.conftest import minimal_pdf


def _ids(index: Path, encoder: HashingEncoder) -> list[tuple[str, str]]:
    r = Retriever.load(index, encoder=encoder)
    return [(c.document_id, c.chunk_id) for d in r.documents() for c in r.document_chunks(d.document_id)]


def test_reingest_is_idempotent(corpus: Path, index: Path, encoder: HashingEncoder) -> None:
    before = _ids(index, encoder)
    manifest = (index / "manifest.json").read_text()
    report = ingest([corpus], index, encoder=encoder, progress=False)
    assert report.added == [] and report.updated == [] and len(report.unchanged) == 4
    assert not report.written and report.encoded == 0
    assert (index / "manifest.json").read_text() == manifest
    assert _ids(index, encoder) == before
    # a fresh build of the same files gives the same ids
    fresh = index.parent / "fresh"
    ingest([corpus], fresh, encoder=encoder, progress=False)
    assert _ids(fresh, encoder) == before


def test_changed_and_new_files_reuse_unchanged_vectors(
    corpus: Path, index: Path, encoder: HashingEncoder
) -> None:
    before = {d.source: d.document_id for d in Retriever.load(index, encoder=encoder).documents()}
    html = corpus / "statistik_kemiskinan.html"
    html.write_text(html.read_text().replace("806.250", "806.251"))
    (corpus / "baru.txt").write_text("Catatan baru tentang dana desa di Aceh Besar.\n")
    report = ingest([corpus], index, encoder=encoder, progress=False)
    assert report.added == ["baru.txt"] and report.updated == ["statistik_kemiskinan.html"]
    assert len(report.unchanged) == 3 and report.written
    after = {d.source: d.document_id for d in Retriever.load(index, encoder=encoder).documents()}
    assert after["statistik_kemiskinan.html"] != before["statistik_kemiskinan.html"]
    assert after["qanun_apba_2023.md"] == before["qanun_apba_2023.md"]
    # only the new document's chunks and the changed chunk were encoded
    assert 1 <= report.encoded <= 4


def test_ingest_adds_without_removing_and_prune_removes(
    corpus: Path, index: Path, encoder: HashingEncoder, tmp_path: Path
) -> None:
    extra = tmp_path / "extra.md"
    extra.write_text("# Catatan\n\nIsi catatan tambahan.\n")
    report = ingest([extra], index, encoder=encoder, progress=False)
    assert report.added == ["extra.md"]
    assert len(Retriever.load(index, encoder=encoder).documents()) == 5
    report = ingest([extra], index, encoder=encoder, progress=False, prune=True)
    assert len(report.removed) == 4
    assert [d.source for d in Retriever.load(index, encoder=encoder).documents()] == ["extra.md"]


def test_bad_files_are_reported_and_the_rest_indexed(tmp_path: Path, encoder: HashingEncoder) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Qanun Baik\n\nPasal 1\nIsi yang baik tentang zakat.\n")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage \x00\xff")
    (folder / "garbage.txt").write_bytes(bytes(range(256)) * 8)
    (folder / "big.md").write_text("x" * 5000)
    (folder / "bad.xlsx").write_bytes(b"not a zip file")
    (folder / "paged.pdf").write_bytes(minimal_pdf(["Laporan zakat halaman satu", "halaman dua"]))
    report = ingest(
        [folder, tmp_path / "missing.md"],
        tmp_path / "index",
        encoder=encoder,
        progress=False,
        max_file_bytes=4000,
    )
    failed = {Path(p).name: reason for p, reason in report.failed}
    assert failed == {
        "empty.txt": "the file is empty",
        "corrupt.pdf": "the PDF could not be parsed (corrupt or unsupported)",
        "garbage.txt": "the file is not valid text (binary or unknown encoding)",
        "big.md": "the file is larger than the 4,000-byte limit",
        "bad.xlsx": "the spreadsheet could not be parsed (corrupt or not XLSX)",
        "missing.md": "the path does not exist",
    }
    assert sorted(report.added) == ["good.md", "paged.pdf"]
    assert "6 failed" in report.summary() and "good.md" not in report.summary()
    retriever = Retriever.load(tmp_path / "index", encoder=encoder)
    assert retriever.search("zakat", top_k=5)


def test_a_crash_while_writing_leaves_the_old_index_intact(
    corpus: Path, index: Path, encoder: HashingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _ids(index, encoder)
    manifest = (index / "manifest.json").read_text()
    (corpus / "baru.md").write_text("# Baru\n\nDokumen baru.\n")

    def crash(self: object, directory: Path) -> None:
        (directory / "vectors.npy").write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(retrieval.dense.DenseIndex, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        ingest([corpus], index, encoder=encoder, progress=False)
    assert (index / "manifest.json").read_text() == manifest
    assert _ids(index, encoder) == before
    assert not list(index.parent.glob(".index.tmp-*"))


def test_interrupted_swap_is_recovered(index: Path, encoder: HashingEncoder) -> None:
    before = _ids(index, encoder)
    index.rename(index.parent / ".index.old-deadbeef")  # crash between the two renames
    assert _ids(index, encoder) == before


def test_missing_and_incompatible_indexes(tmp_path: Path, index: Path, encoder: HashingEncoder) -> None:
    with pytest.raises(IndexMissingError):
        Retriever.load(tmp_path / "nowhere", encoder=encoder)
    with pytest.raises(IncompatibleIndexError, match="encoder"):
        Retriever.load(index, encoder=HashingEncoder(dim=64))
    manifest = json.loads((index / "manifest.json").read_text())
    manifest["format_version"] = 999
    (index / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IncompatibleIndexError, match="format version"):
        Retriever.load(index, encoder=encoder)


def test_a_new_encoder_re_encodes_everything(corpus: Path, index: Path) -> None:
    other = HashingEncoder(dim=64)
    report = ingest([corpus], index, encoder=other, progress=False)
    assert report.written and report.encoded == report.chunks
    assert Retriever.load(index, encoder=other).search("pajak daerah")


def test_discover_lists_sources_like_ingest(corpus: Path, index: Path, encoder: HashingEncoder) -> None:
    from retrieval.ingest import discover

    files, rejected = discover([corpus, corpus / "nothing.docx"])
    assert sorted(source for _, source in files) == sorted(
        Retriever.load(index, encoder=encoder).corpus_sources
    )
    assert rejected == [(str(corpus / "nothing.docx"), "the path does not exist")]
