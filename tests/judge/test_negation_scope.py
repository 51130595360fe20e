"""Negation by prefix (non-), by another case of the passage, by a denial elsewhere; English compound units.
Invented laws; every relaxing or tightening rule shows its wrong claim failing and its true claim standing."""

from __future__ import annotations

from decimal import Decimal

from judge.claims import claim_parts
from judge.rules import check_claim
from judge.scope import prefix_conflict
from judge.types import JudgePassage

MATCHING = JudgePassage(
    "N1",
    "(1) Daerah wajib menyediakan dana pendamping sekurang-kurangnya 12% (dua belas persen). "
    "(2) Dana pendamping digunakan untuk mendanai kegiatan yang bersifat kegiatan fisik.",
)
REFUND = JudgePassage(
    "N2",
    "(1) Apabila peserta mengundurkan diri dan tidak memberi tahu panitia, peserta tidak memperoleh "
    "pengembalian biaya. (2) Apabila peserta mengundurkan diri dan memberi tahu panitia, peserta memperoleh "
    "pengembalian sebesar 60% (enam puluh persen) dari biaya pendaftaran.",
)
SCHOOL = JudgePassage(
    "N3",
    "(1) Setiap anak yang berusia 7 (tujuh) tahun mengikuti sekolah rakyat. (2) Pemerintah menyelenggarakan "
    "sekolah rakyat tanpa memungut iuran.",
)


def test_prefix_negation_is_another_entity() -> None:
    assert prefix_conflict("kegiatan nonfisik", ["kegiatan fisik"])
    assert prefix_conflict("DAK Fisik", ["DAK Non Fisik"])
    assert not prefix_conflict("kegiatan non-fisik", ["kegiatan fisik dan nonfisik"])
    wrong = "Dana pendamping sekurang-kurangnya 12% digunakan untuk kegiatan yang bersifat nonfisik."
    assert check_claim(wrong, [MATCHING]).verdict == "unsupported"
    assert "polarity_conflict" not in check_claim(wrong.replace("nonfisik", "fisik"), [MATCHING]).reasons


def test_denied_case_does_not_take_the_asserted_case_figure() -> None:
    wrong = "Peserta yang mengundurkan diri dan tidak memberi tahu panitia memperoleh pengembalian 60% biaya."
    check = check_claim(wrong, [REFUND])
    assert check.verdict == "unsupported" and "polarity_conflict" in check.reasons
    right = "Peserta yang mengundurkan diri dan memberi tahu panitia memperoleh pengembalian 60% biaya."
    assert "polarity_conflict" not in check_claim(right, [REFUND]).reasons


def test_assertion_the_passage_only_denies_fails() -> None:
    wrong = "Sekolah rakyat bagi anak berusia 7 tahun diselenggarakan dengan memungut iuran."
    check = check_claim(wrong, [SCHOOL])
    assert check.verdict == "unsupported" and "polarity_conflict" in check.reasons


def test_english_compound_unit_is_read() -> None:
    (figure,) = claim_parts("A ward chief serves a four-year term.", "").figures
    assert (figure.figure.value, figure.figure.unit) == (Decimal(4), "year")
    (digits,) = claim_parts("A ward chief serves a 4-year term.", "").figures
    assert digits.figure.unit == "year"


BRACKETS = JudgePassage(
    "N4",
    "Tarif retribusi atas omzet: sampai dengan Rp40.000.000,00 (empat puluh juta rupiah) 2% (dua persen) di "
    "atas Rp40.000.000,00 (empat puluh juta rupiah) sampai dengan Rp90.000.000,00 (sembilan puluh juta "
    "rupiah) 7% (tujuh persen) di atas Rp90.000.000,00 (sembilan puluh juta rupiah) 11% (sebelas persen).",
)
LABEL = JudgePassage(
    "N5",
    "Produsen yang membuat rokok dengan tidak mencantumkan peringatan kesehatan dipidana penjara paling "
    "lama 4 (empat) tahun.",
)


def test_a_rate_belongs_to_its_own_bracket() -> None:
    right = "Omzet di atas Rp40 juta sampai dengan Rp90 juta dikenai tarif retribusi 7%."
    assert check_claim(right, [BRACKETS]).verdict == "supported"
    wrong = "Omzet di atas Rp40 juta sampai dengan Rp90 juta dikenai tarif retribusi 11%."
    check = check_claim(wrong, [BRACKETS])
    assert check.verdict == "unsupported" and "condition_elsewhere" in check.reasons


def test_english_claim_dropping_the_passage_denial_fails() -> None:
    wrong = "Making cigarettes that carry a health warning means up to four years in prison."
    check = check_claim(wrong, [LABEL])
    assert check.verdict == "unsupported" and "negation_unaligned" in check.reasons
    kept = "Making cigarettes without a health warning means up to four years in prison."
    assert "negation_unaligned" not in check_claim(kept, [LABEL]).reasons
    failing = "Failing to carry a health warning on cigarettes means up to four years in prison."
    assert check_claim(failing, [LABEL]).verdict == "supported"


def test_denial_in_the_figure_own_sentence_is_no_other_case() -> None:
    note = JudgePassage(
        "N6", "Data contoh: kecamatan: Bukit Sunyi; jumlah sekolah: 41 unit (catatan: bukan data resmi)."
    )
    assert check_claim(note.text, [note]).verdict == "supported"  # the passage restated word for word
    assert check_claim("Data contoh: kecamatan: Bukit Sunyi; jumlah sekolah: 41 unit.", [note]).verdict == (
        "supported"
    )
