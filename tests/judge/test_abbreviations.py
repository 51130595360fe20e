"""An abbreviation and the words it stands for are one entity (language.abbreviations); a wrong entity, figure
or inclusion still fails. Invented laws."""

from __future__ import annotations

import pytest

from judge.rules import check_claim
from judge.scope import inclusion_conflict
from judge.types import JudgePassage
from language.abbreviations import align_abbreviations

STATION = JudgePassage(
    "A1",
    "Setiap PPKL menerima insentif paling banyak Rp2.500.000,00 (dua juta lima ratus ribu rupiah).",
)
FUND = JudgePassage(
    "A2",
    "Dana alokasi khusus bidang perikanan dialokasikan paling sedikit 15% (lima belas persen) dari pagu "
    "belanja modal di luar belanja pegawai.",
)


@pytest.mark.parametrize(
    ("claim", "passage", "read"),
    [
        ("Pos Pemantau Kualitas Lingkungan", "PPKL", "PPKL"),
        ("DAK perikanan", "dana alokasi khusus bidang perikanan", "dana alokasi khusus perikanan"),
        ("SiLPA tahun lalu", "sisa lebih pembiayaan anggaran tahun lalu", "sisa lebih pembiayaan anggaran"),
        ("DAU perikanan", "dana alokasi khusus perikanan", "DAU perikanan"),  # U opens no word there
        ("pajak negara sebesar Rp5", "PNS", "pajak negara sebesar Rp5"),  # lower-case words name nothing
    ],
)
def test_abbreviation_read_as_the_passage_writes_it(claim: str, passage: str, read: str) -> None:
    assert read in align_abbreviations(claim, (passage,))


def test_spelled_out_abbreviation_grounds_and_wrong_figure_fails() -> None:
    right = "Setiap Pos Pemantau Kualitas Lingkungan menerima insentif paling banyak Rp2,5 juta."
    assert check_claim(right, [STATION]).verdict == "supported"
    wrong = "Setiap Pos Pemantau Kualitas Lingkungan menerima insentif paling banyak Rp3,5 juta."
    assert check_claim(wrong, [STATION]).verdict == "unsupported"


def test_abbreviated_entity_grounds_and_another_entity_fails() -> None:
    right = "DAK bidang perikanan paling sedikit 15% dari pagu belanja modal di luar belanja pegawai."
    assert check_claim(right, [FUND]).verdict == "supported"
    other = "DAU bidang perikanan paling sedikit 15% dari pagu belanja modal di luar belanja pegawai."
    assert check_claim(other, [FUND]).verdict == "unsupported"
    included = "DAK bidang perikanan paling sedikit 15% dari pagu belanja modal termasuk belanja pegawai."
    check = check_claim(included, [FUND])
    assert check.verdict == "unsupported" and "polarity_conflict" in check.reasons


def test_inclusion_conflict() -> None:
    assert inclusion_conflict("sudah termasuk gaji", ["di luar gaji"])
    assert inclusion_conflict("excluding salaries", ["termasuk salaries"])
    assert not inclusion_conflict("tidak termasuk gaji", ["di luar gaji"])


OFFICE_PAIR = JudgePassage(
    "A3",
    "Tunjangan komunikasi bagi KWH/WKWH Kabupaten Pante Raja dianggarkan sebesar Rp12.000.000,00 (dua belas "
    "juta rupiah) setiap bulan.",
)


@pytest.mark.parametrize(
    ("claim", "passage", "read"),
    [
        # the last piece may be its word's first and last letters ("WH" for "wilayah")
        ("Kepala Wilayah/Wakil Kepala Wilayah", "KWH/WKWH", "KWH/WKWH"),
        ("Kepala Wisma", "KWH", "Kepala Wisma"),  # "wisma" ends in a: not "WH"
        ("Kepala Wilayah Sementara", "KWHS", "Kepala Wilayah Sementara"),  # only the last piece
        ("Kepala Wilayah Hulu", "KWH", "KWH"),  # initials as before
    ],
)
def test_last_piece_as_first_and_last_letters(claim: str, passage: str, read: str) -> None:
    assert read in align_abbreviations(claim, (passage,))


@pytest.mark.parametrize("order", [("WKWH", "KWH"), ("KWH", "WKWH")])
def test_longer_abbreviation_is_matched_first(order: tuple[str, str]) -> None:
    passage = f"bagi {order[0]} dan {order[1]}"
    claim = "bagi Wakil Kepala Wilayah dan Kepala Wilayah"
    assert align_abbreviations(claim, (passage,)) == "bagi WKWH dan KWH"


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        (
            "Tunjangan komunikasi bagi Kepala Wilayah/Wakil Kepala Wilayah Kabupaten Pante Raja Rp12 juta "
            "setiap bulan.",
            "supported",
        ),
        (
            "Tunjangan komunikasi bagi Kepala Wisma Kabupaten Pante Raja Rp12 juta setiap bulan.",
            "unsupported",
        ),
        (
            "Tunjangan komunikasi bagi Kepala Dinas Kabupaten Pante Raja Rp12 juta setiap bulan.",
            "unsupported",
        ),
    ],
)
def test_first_and_last_letter_abbreviation_grounds_only_its_entity(claim: str, verdict: str) -> None:
    result = check_claim(claim, [OFFICE_PAIR])
    assert result.verdict == verdict, result
