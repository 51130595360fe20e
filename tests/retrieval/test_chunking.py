from __future__ import annotations

from pathlib import Path

from retrieval.documents import Document, build_document, index_text
from retrieval.extract import extract
from retrieval.retriever import Retriever
from tests.retrieval.conftest import QANUN_TEXT, UU_TEXT, minimal_pdf


def _doc(tmp_path: Path, name: str, data: bytes, max_chars: int = 1200) -> Document:
    path = tmp_path / name
    path.write_bytes(data)
    return build_document(
        extract(path, data),
        source=name,
        sha256="0" * 64,
        size=len(data),
        file_stem=path.stem,
        max_chars=max_chars,
    )


def test_every_chunk_is_a_slice_of_the_stored_source_text(retriever: Retriever) -> None:
    for info in retriever.documents():
        text = retriever.document_text(info.document_id)
        assert text is not None
        chunks = retriever.document_chunks(info.document_id)
        assert chunks and [c.ordinal for c in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            assert chunk.text == text[chunk.char_start : chunk.char_end]
            assert chunk.text.strip() == chunk.text and chunk.text
            assert len(chunk.text) <= 1200


def test_legal_structure_paths_and_references(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "uu.md", UU_TEXT.encode(), max_chars=400)
    assert doc.identity.doc_type == "UU" and doc.identity.number == "11" and doc.identity.year == 2006
    assert (
        doc.identity.title == "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2006 TENTANG PEMERINTAHAN ACEH"
    )
    for chunk in doc.chunks:
        assert chunk.section_path, chunk.text
        assert chunk.legal_reference and chunk.legal_reference.startswith("Undang-Undang Nomor 11 Tahun 2006")
    pasal_183 = [c for c in doc.chunks if c.section_path[:3] == ("BAB XXIV", "Bagian Kedua", "Pasal 183")]
    assert len(pasal_183) >= 2  # 400 chars forces a split, at ayat boundaries
    for chunk in pasal_183:
        assert chunk.text.startswith(("Pasal 183", "("))  # never starts mid-ayat
        assert "Pasal 183" in chunk.context or chunk.text.startswith("Pasal 183")
        assert chunk.context.startswith("BAB XXIV KEUANGAN\nBagian Kedua Sumber Penerimaan")
    refs = [c.legal_reference for c in pasal_183]
    assert any((r or "").endswith("Pasal 183 ayat (2)") for r in refs), refs
    penjelasan = [c for c in doc.chunks if c.section_path[0] == "Penjelasan" and "183" in c.section_path[-1]]
    assert penjelasan and (penjelasan[0].legal_reference or "").endswith("Penjelasan Pasal 183")
    preamble = {c.section_path[0] for c in doc.chunks[:4]}
    assert {"Menimbang", "Mengingat"} <= preamble


def test_index_text_puts_the_chunk_before_the_document_title(tmp_path: Path) -> None:
    """The encoder keeps only its first word pieces, so the chunk's own words lead and the long title
    trails; BM25 still sees every word."""
    doc = _doc(tmp_path, "uu.md", UU_TEXT.encode(), max_chars=400)
    chunk = next(c for c in doc.chunks if c.section_path[:3] == ("BAB XXIV", "Bagian Kedua", "Pasal 183"))
    text = index_text(chunk, file_stem="uu")
    first_line = text.splitlines()[0]
    assert first_line.startswith("UU 11/2006 / BAB XXIV")
    assert text.index(chunk.text) < text.index(doc.identity.title)
    assert text.endswith(doc.identity.title)
    assert doc.identity.title not in index_text(chunk, file_stem=doc.identity.title)


def test_long_list_items_carry_their_lead_in(tmp_path: Path) -> None:
    items = "\n".join(
        f"{i}. Istilah nomor {i} adalah definisi yang cukup panjang untuk memenuhi potongan teks."
        for i in range(1, 30)
    )
    text = f"# Qanun Contoh\n\nPasal 1\nDalam Qanun ini yang dimaksud dengan:\n{items}\n"
    doc = _doc(tmp_path, "contoh.md", text.encode(), max_chars=500)
    listed = [c for c in doc.chunks if c.kind == "list"]
    assert listed
    assert all("Dalam Qanun ini yang dimaksud dengan:" in c.context for c in listed)


def test_markdown_headings_front_matter_and_tables(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "qanun.md", QANUN_TEXT.encode())
    ident = doc.identity
    assert (ident.doc_type, ident.number, ident.year, ident.issuer) == ("Qanun", "1", 2023, "Aceh")
    pasal_6 = next(c for c in doc.chunks if c.section_path == ("BAB II", "Pasal 6"))
    assert pasal_6.legal_reference == "Qanun Aceh Nomor 1 Tahun 2023, Pasal 6"
    assert "title:" not in "".join(c.text for c in doc.chunks)  # front matter is never a chunk
    small = _doc(
        tmp_path,
        "qanun2.md",
        QANUN_TEXT.replace("| Kesehatan |", "| Kesehatan |\n| Lain |" * 1).encode(),
        max_chars=60,
    )
    table_chunks = [c for c in small.chunks if c.kind == "table"]
    assert table_chunks and all("| Urusan | Pagu (Rp) |" in c.context for c in table_chunks[1:])


def test_csv_rows_are_chunks_with_the_header_as_context(tmp_path: Path) -> None:
    doc = _doc(
        tmp_path,
        "t.csv",
        b"kode;uraian;pagu\n4.1.01;Pajak Daerah;1084650000000\n4.1.02;Retribusi;38415260000\n",
    )
    assert [c.kind for c in doc.chunks] == ["table", "table"]
    assert all(c.context == "kode | uraian | pagu" for c in doc.chunks)
    assert doc.chunks[0].text == "4.1.01 | Pajak Daerah | 1084650000000"
    assert doc.tables[0]["columns"] == ["kode", "uraian", "pagu"]
    assert doc.tables[0]["rows"][1] == [doc.chunks[1].chunk_id, ["4.1.02", "Retribusi", "38415260000"]]


def test_html_text_and_pdf_pages(tmp_path: Path) -> None:
    html = _doc(
        tmp_path,
        "s.html",
        b"<html><head><title>Judul</title><style>x{}</style></head><body><h2>Bagian A"
        b"</h2><p>Teks satu.</p></body></html>",
    )
    assert html.identity.title == "Judul"
    assert html.chunks[0].section_path == ("Bagian A",) and "x{}" not in html.text
    pdf = _doc(
        tmp_path,
        "p.pdf",
        minimal_pdf(["Halaman pertama tentang anggaran", "Halaman kedua tentang pajak"]),
        max_chars=40,
    )
    pages = {c.page for c in pdf.chunks}
    assert pages == {1, 2}
    assert next(c for c in pdf.chunks if "pajak" in c.text).page == 2


def test_xlsx_sheets_become_tables(tmp_path: Path) -> None:
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Belanja"
    sheet.append(["urusan", "pagu"])
    sheet.append(["Pendidikan", 871667219294])
    sheet.append(["Kesehatan", 612384905118.0])
    other = book.create_sheet("Kosong")
    other.append([None, None])
    buffer = io.BytesIO()
    book.save(buffer)
    doc = _doc(tmp_path, "apba.xlsx", buffer.getvalue())
    assert doc.identity.doc_type == "Dataset"
    assert [c.text for c in doc.chunks] == ["Pendidikan | 871667219294", "Kesehatan | 612384905118"]
    assert [t["name"] for t in doc.tables] == ["Belanja"]
    assert doc.chunks[0].section_path == ("Belanja", "baris 1") and doc.chunks[0].context == "urusan | pagu"
