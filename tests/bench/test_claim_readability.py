"""The furniture check of the legal_qa_dev benchmarks: page text found, the law's own text left alone.
Invented claims."""

from __future__ import annotations

import pytest

from benchmarks.claim_readability import furniture_in, readability


@pytest.mark.parametrize(
    "claim",
    [
        "Belanja hibah sebesar Rp5.000.000,00 SK No 204417 A jdih.contoh.go.id untuk lumbung desa.",
        "Dana cadangan pangan PRES I DEN REPUBLIK INDONESIA ditetapkan sebesar Rp7.000.000,00.",
        "Dana cadangan pangan untuk desa PRESIDEN REPUBLIK INDONESIA sebesar Rp7.000.000,00.",
        "Pendapatan hibah (2) (3) (4) sebesar Rp9.000.000,00.",
        "Belanja lumbung desa - 12 - sebesar Rp9.000.000,00.",
        "Belanja lumbung desa Halaman 3 dari 9 sebesar Rp9.000.000,00.",
    ],
)
def test_page_furniture_is_found(claim: str) -> None:
    assert furniture_in(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "(2) Belanja hibah sebagaimana dimaksud pada ayat (1) sebesar Rp5.000.000,00.",
        "DENGAN RAHMAT TUHAN YANG MAHA ESA PRESIDEN REPUBLIK INDONESIA,",
        "Defisit anggaran sebesar 2,1% (dua koma satu persen) dari produk domestik bruto.",
        "Tarif sebesar 10-12 persen berlaku bagi lumbung desa.",
    ],
)
def test_the_laws_own_text_is_not_furniture(claim: str) -> None:
    assert not furniture_in(claim)


def test_readability_counts_and_median() -> None:
    report = readability(
        [("q1", ["a" * 100, "Hibah (2) (3) sebesar Rp1,00."]), ("q2", ["b" * 500]), ("q3", [])]
    )
    assert report["supported_claims"] == 3
    assert report["supported_claims_with_furniture"] == 1
    assert report["supported_claim_chars_median"] == 100
    assert report["supported_claims_over_400_chars"] == 1
