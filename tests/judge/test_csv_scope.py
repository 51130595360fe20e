"""A CSV row read as prose (judge.csv_rows), the scope/flow words of judge.scope: invented rows and laws."""

from __future__ import annotations

import pytest

from judge.csv_rows import csv_prose, rupiah
from judge.rules import check_claim
from judge.scope import flow_conflict, scope_unsupported
from judge.types import JudgePassage

HEADER = "row_id,kode_rekening,nama_skpd,kategori_belanja,uraian,jumlah_rp,tahun_anggaran"
ROW = (
    "17,5.1.02.03.04,Dinas Kelautan Aceh,Belanja Barang dan Jasa,Belanja Sewa Perahu Patroli,375912440.5,2031"
)
CSV = JudgePassage("C1", f"{HEADER}\n{ROW}")
SHARED = JudgePassage(
    "C2",
    f"{HEADER}\n18,5.1.01.02.09,Dinas Kelautan Aceh,Belanja Pegawai,"
    "Belanja Honorarium Ketua dan Anggota Dewan Pengawas,64800000.0,2031",
)
TRANSFER = JudgePassage(
    "C3",
    f"{HEADER}\n19,5.4.01.01.02,Dinas Kelautan Aceh,Belanja Transfer,"
    "Belanja Bantuan Keuangan Kepada Pemerintahan Gampong,912000000.0,2031",
)


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("375912440.5", "Rp375.912.440,50"),
        ("375912440", "Rp375.912.440,00"),
        ("3.759124405e8", "Rp375.912.440,50"),
        ("-1200.0", "minus Rp1.200,00"),
        ("5.1.02", None),
        ("", None),
    ],
)
def test_rupiah_reads_any_numeric_notation(cell: str, written: str | None) -> None:
    assert rupiah(cell) == written


def test_csv_row_becomes_prose_without_codes() -> None:
    prose = csv_prose(CSV.text)
    assert prose is not None
    assert "Belanja Sewa Perahu Patroli sebesar Rp375.912.440,50 pada tahun anggaran 2031" in prose.text
    assert "5.1.02" not in prose.text  # account codes count nothing
    start = prose.text.index("Rp375")
    cell_start, cell_end = prose.origin(start, start + 5)
    assert CSV.text[cell_start:cell_end] == "375912440.5"  # a span points back at the cited cell


def test_plain_text_is_not_a_csv_row() -> None:
    assert csv_prose("Belanja pegawai sebesar Rp5.000.000,00.") is None
    assert csv_prose("a,b,c\nsatu,dua") is None  # cells do not match the header


@pytest.mark.parametrize(
    "claim",
    [
        "Belanja sewa perahu patroli Dinas Kelautan Aceh tahun anggaran 2031 sebesar Rp375.912.440,50.",
        "Belanja sewa perahu patroli tahun anggaran 2031 sekitar Rp375,91 juta.",
    ],
)
def test_csv_amount_in_float_notation_grounds_its_restatement(claim: str) -> None:
    check = check_claim(claim, [CSV])
    assert check.verdict == "supported", check.reasons
    assert check.spans and CSV.text[check.spans[0][1] : check.spans[0][2]] == "375912440.5"


@pytest.mark.parametrize(
    "claim",
    [
        "Belanja sewa perahu patroli tahun anggaran 2031 sebesar Rp375,91 miliar.",  # another scale
        "Belanja sewa perahu patroli tahun anggaran 2031 sebesar Rp375.912.441.",  # another figure
        "Belanja sewa perahu patroli tahun anggaran 2030 sebesar Rp375.912.440,50.",  # another year
        "Belanja sewa perahu patroli sebesar Rp5.102.",  # a code is no amount
    ],
)
def test_csv_wrong_claims_still_fail(claim: str) -> None:
    assert check_claim(claim, [CSV]).verdict == "unsupported"


def test_scope_word_the_passage_lacks_fails() -> None:
    good = "Belanja honorarium ketua dan anggota dewan pengawas tahun 2031 sebesar Rp64.800.000."
    assert check_claim(good, [SHARED]).verdict == "supported"
    wrong = "Setiap anggota dewan pengawas menerima honorarium sebesar Rp64.800.000 pada tahun 2031."
    check = check_claim(wrong, [SHARED])
    assert check.verdict == "unsupported" and "scope_unsupported" in check.reasons
    assert check_claim("Seluruh belanja pegawai tahun 2031 sebesar Rp64.800.000.", [SHARED]).verdict == (
        "unsupported"
    )


def test_scope_words() -> None:
    law = ["Calon dapat didaftarkan apabila memperoleh 20% kursi atau 20% suara."]
    assert scope_unsupported("Calon didaftarkan hanya jika memperoleh 20% kursi.", law)
    assert scope_unsupported("A candidate registers only if it wins 20% of seats.", law)
    assert not scope_unsupported("The appeal was only partly granted.", law)  # an adverb, not a condition
    assert not scope_unsupported("Setiap calon wajib mendaftar.", ["Tiap calon wajib mendaftar."])


def test_flow_side_must_agree() -> None:
    good = "Belanja bantuan keuangan kepada pemerintahan gampong tahun 2031 sebesar Rp912.000.000."
    assert check_claim(good, [TRANSFER]).verdict == "supported"
    wrong = "Dinas Kelautan Aceh menerima bantuan keuangan dari pemerintahan gampong sebesar Rp912.000.000."
    assert check_claim(wrong, [TRANSFER]).verdict == "unsupported"
    assert flow_conflict("dana dari kabupaten", ["dana kepada kabupaten"])
    assert not flow_conflict("dana dari kabupaten", ["dana dari kabupaten dan kepada kabupaten"])
