"""A tiny 4-document corpus (a UU with Penjelasan, a Qanun with front matter, a CSV table, an HTML page)
written into tmp dirs, and an index over it built with the deterministic HashingEncoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.embeddings import HashingEncoder
from retrieval.ingest import ingest
from retrieval.rerankers import FeatureReranker
from retrieval.retriever import Retriever

UU_TEXT = """UNDANG-UNDANG REPUBLIK INDONESIA UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2006 TENTANG PEMERINTAHAN ACEH
DENGAN RAHMAT TUHAN YANG MAHA ESA
Menimbang :
a. bahwa Aceh merupakan satuan pemerintahan daerah yang bersifat khusus atau istimewa;
b. bahwa perlu membentuk Undang-Undang tentang Pemerintahan Aceh;
Mengingat :
1. Pasal 18B Undang-Undang Dasar Negara Republik Indonesia Tahun 1945;
2. Undang-Undang Nomor 32 Tahun 2004 tentang Pemerintahan Daerah sebagaimana telah diubah dengan Undang-Undang Nomor 8 Tahun 2005;
MEMUTUSKAN:
Menetapkan : UNDANG-UNDANG TENTANG PEMERINTAHAN ACEH.
BAB I KETENTUAN UMUM
Pasal 1
Dalam Undang-Undang ini yang dimaksud dengan:
1. Aceh adalah daerah provinsi yang bersifat istimewa.
2. Qanun Aceh adalah peraturan perundang-undangan sejenis peraturan daerah provinsi.
BAB XXIV KEUANGAN
Bagian Kedua Sumber Penerimaan
Pasal 182
(1) Tambahan Dana Bagi Hasil minyak dan gas bumi merupakan pendapatan Pemerintah Aceh.
(2) Pengelolaan tambahan dana bagi hasil diatur dalam Qanun Aceh.
Pasal 183
(1) Dana Otonomi Khusus sebagaimana dimaksud dalam Pasal 179 ayat (2) huruf c, merupakan penerimaan Pemerintah Aceh yang ditujukan untuk membiayai pembangunan terutama pembangunan dan pemeliharaan infrastruktur, pemberdayaan ekonomi rakyat, pengentasan kemiskinan, serta pendanaan pendidikan, sosial, dan kesehatan.
(2) Dana Otonomi Khusus sebagaimana dimaksud pada ayat (1) berlaku untuk jangka waktu 20 (dua puluh) tahun, dengan rincian untuk tahun pertama sampai dengan tahun kelima belas yang besarnya setara dengan 2% (dua persen) plafon Dana Alokasi Umum Nasional dan untuk tahun keenam belas sampai dengan tahun kedua puluh yang besarnya setara dengan 1% (satu persen) plafon Dana Alokasi Umum Nasional.
(3) Ketentuan sebagaimana dimaksud pada ayat (1) berlaku untuk daerah Aceh sesuai dengan batas wilayah Aceh.
(4) Program pembangunan sebagaimana dimaksud pada ayat (1) dituangkan dalam program pembangunan provinsi dan kabupaten/kota di Aceh dengan memperhatikan keseimbangan kemajuan pembangunan antarkabupaten/kota untuk dijadikan dasar pemanfaatan dana otonomi khusus yang pengelolaannya diadministrasikan pada Pemerintah Provinsi Aceh.
(5) Penggunaan Dana Otonomi Khusus sebagaimana dimaksud pada ayat (2) dilakukan untuk setiap tahun anggaran yang diatur lebih lanjut dalam Qanun Aceh.
BAB XL KETENTUAN PENUTUP
Pasal 273
Pada saat Undang-Undang ini mulai berlaku, Undang-Undang Nomor 18 Tahun 2001 tentang Otonomi Khusus bagi Provinsi Daerah Istimewa Aceh dicabut dan dinyatakan tidak berlaku.
PENJELASAN ATAS UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2006 TENTANG PEMERINTAHAN ACEH
Pasal 1
Cukup jelas.
Pasal 183
Ayat (1) Pendanaan pendidikan dalam ketentuan ini termasuk beasiswa. Ayat (2) Cukup jelas.
"""  # noqa: E501

QANUN_TEXT = """---
title: Qanun Aceh Nomor 1 Tahun 2023 tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2023
type: Qanun
number: 1
year: 2023
issuer: Aceh
---
# Qanun Aceh Nomor 1 Tahun 2023 tentang Anggaran Pendapatan dan Belanja Aceh

## BAB I KETENTUAN UMUM

### Pasal 1

Qanun ini melaksanakan ketentuan Pasal 183 ayat (5) Undang-Undang Nomor 11 Tahun 2006 tentang Pemerintahan Aceh.

## BAB II BELANJA

### Pasal 6

(1) Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294 (delapan ratus tujuh puluh satu miliar).

(2) Belanja urusan kesehatan ditetapkan sebesar Rp612.384.905.118 atau 14,1 persen dari total belanja.

### Pasal 7

| Urusan | Pagu (Rp) |
| --- | --- |
| Pendidikan | 871.667.219.294 |
| Kesehatan | 612.384.905.118 |
"""  # noqa: E501

CSV_TEXT = """kode_rekening,uraian,pagu_2023
4.1.01,Pajak Daerah,1084650000000
4.1.02,Retribusi Daerah,38415260000
5.1.01,Belanja Pegawai,2100000000000
"""

HTML_TEXT = """<html><head><title>Statistik Kemiskinan Aceh 2023</title><script>var x = 1;</script></head>
<body><h1>Statistik Kemiskinan Aceh 2023</h1>
<p>Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 806.250 jiwa (14,44 persen).</p>
<h2>Garis kemiskinan</h2>
<p>Garis kemiskinan naik menjadi Rp627.310 per kapita per bulan pada 2023.</p>
<ul><li>Perkotaan: 10,4 persen</li><li>Perdesaan: 16,8 persen</li></ul>
</body></html>
"""


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "uu").mkdir()
    (root / "uu" / "uu_11_2006.md").write_text(UU_TEXT, encoding="utf-8")
    (root / "qanun_apba_2023.md").write_text(QANUN_TEXT, encoding="utf-8")
    (root / "lampiran_apba_2023.csv").write_text(CSV_TEXT, encoding="utf-8")
    (root / "statistik_kemiskinan.html").write_text(HTML_TEXT, encoding="utf-8")
    return root


def minimal_pdf(pages: list[str]) -> bytes:
    """A valid PDF with one Helvetica text line per page (enough for pypdf's text extraction)."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_id = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 "
            f"{font_id} 0 R >> >> /Contents {4 + 2 * i} 0 R >>".encode()
        )
        objects.append(
            b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


@pytest.fixture
def encoder() -> HashingEncoder:
    return HashingEncoder(dim=128)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def index(tmp_path: Path, corpus: Path, encoder: HashingEncoder) -> Path:
    index_dir = tmp_path / "index"
    report = ingest([corpus], index_dir, encoder=encoder, progress=False)
    assert not report.failed, report.summary()
    return index_dir


@pytest.fixture
def retriever(index: Path, encoder: HashingEncoder) -> Retriever:
    return Retriever.load(index, encoder=encoder, reranker=FeatureReranker())
