"""OCR damage inside words and digit runs, general verbs of the bilingual lexicon, statute connectives that do
not tell a list item apart. Synthetic passages written for these tests."""

from __future__ import annotations

import pytest

from judge.numbers import extract_figures
from judge.ocr_words import fold, ocr_match, one_edit_apart
from judge.rules import check_claim
from judge.textunits import Token, names_term, word_keys
from judge.types import JudgePassage


def _verdict(claim: str, passage: str) -> str:
    return check_claim(claim, [JudgePassage("P1", passage)]).verdict


def test_one_edit_apart() -> None:
    assert one_edit_apart("pemeliharaan", "pemeliharaan")
    assert one_edit_apart("pemeliharaan", "pemelihraan")  # a dropped letter
    assert one_edit_apart("pemeliharaan", "pemeliharaaan")  # an inserted letter
    assert one_edit_apart("pemeliharaan", "pemelibaraan")  # a substituted letter
    assert not one_edit_apart("pemeliharaan", "pemelibraan")  # two edits
    assert fold("pemerintah") == fold("pernerintah")  # "rn" read for "m"
    assert ocr_match("retribusi", ["retr1busi"])  # a "1" read for "i"


def test_ocr_match_needs_a_long_word_and_its_first_letter() -> None:
    assert ocr_match("pemeliharaan", ["gedung", "pemelibaraan"])
    assert not ocr_match("pemeliharaan", ["gedung", "xemeliharaan"])  # first letter changed
    assert not ocr_match("impor", ["ekspor", "impar"])  # short words: one letter is another word
    assert not ocr_match("penerimaan", ["pengeluaran"])


CLINIC = (
    "(1) Setiap Orang yang dengan sengaja memusnahkan arsip negara dipidana dengan pidana penjara paling "
    "lama 3 (tiga) tahun. (2) Setiap Orang yang dengan sengaja memperjualbelikan arsip negara dipidana "
    "dengan pidana penjara paling lama 7 (tujuh) tahun."
)
CLINIC_DAMAGED = CLINIC.replace("memperjualbelikan", "memperjualbelilan")


@pytest.mark.parametrize(
    ("claim", "passage", "verdict"),
    [
        (
            "Memperjualbelikan arsip negara diancam pidana penjara paling lama 7 tahun.",
            CLINIC_DAMAGED,
            "supported",
        ),
        (
            "Memperjualbelikan arsip negara diancam pidana penjara paling lama 3 tahun.",
            CLINIC_DAMAGED,
            "unsupported",
        ),
        (
            "Memperjualbelikan arsip negara diancam pidana penjara paling lama 8 tahun.",
            CLINIC_DAMAGED,
            "unsupported",
        ),
    ],
)
def test_a_claim_word_the_scan_damaged_is_still_found(claim: str, passage: str, verdict: str) -> None:
    assert _verdict(claim, passage) == verdict


def test_a_lone_lookalike_letter_inside_a_digit_run_is_read_with_the_words() -> None:
    text = (
        "(4) Belanja pegawai direncanakan sebesar Rp12.345. l 67.000.000,00 (dua belas triliun tiga ratus "
        "empat puluh lima miliar seratus enam puluh tujuh juta rupiah)."
    )
    amounts = [int(f.value) for f in extract_figures(text) if f.kind == "amount"]
    assert amounts == [12345167000000]
    assert _verdict("Belanja pegawai direncanakan sekitar Rp12,35 triliun.", text) == "supported"
    assert _verdict("Belanja pegawai direncanakan Rp12.345 juta.", text) == "unsupported"


def test_general_verbs_translate_but_are_not_terms() -> None:
    divided = Token(0, 7, "divided", word_keys("divided", True), False)
    assert not names_term(divided)
    assert not word_keys("divided", True).isdisjoint(word_keys("dibagi"))
    assert not word_keys("plus", True).isdisjoint(word_keys("ditambah"))
    assert names_term(Token(0, 5, "grant", word_keys("grant", True), False))  # a budget term stays one


RATE = (
    "(2) Imbalan jasa per triwulan ditetapkan dari suku bunga acuan, ditambah 3% (tiga persen), lalu dibagi "
    "4 (empat)."
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("The quarterly fee is the reference rate plus 3%, divided by 4.", "supported"),
        ("The quarterly fee is the reference rate plus 2%, divided by 4.", "unsupported"),
        ("The quarterly fee is the reference rate plus 3%, divided by 3.", "unsupported"),
    ],
)
def test_english_general_verbs(claim: str, verdict: str) -> None:
    assert _verdict(claim, RATE) == verdict


LEVY = (
    "(1) Tarif retribusi parkir yaitu:\na. sebesar 4% (empat persen) untuk kendaraan roda dua; dan\n"
    "b. sebesar 6% (enam persen) untuk kendaraan roda empat.\n"
    "(2) Tarif retribusi parkir sebesar 0% (nol persen) diterapkan atas:\na. kendaraan dinas; dan\n"
    "b. kendaraan ambulans."
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Kendaraan dinas dan kendaraan ambulans dikenai tarif retribusi parkir 0%.", "supported"),
        ("Kendaraan dinas dan kendaraan ambulans dikenai tarif retribusi parkir 4%.", "unsupported"),
    ],
)
def test_a_connective_does_not_set_a_list_item_apart(claim: str, verdict: str) -> None:
    assert _verdict(claim, LEVY) == verdict


def test_an_amount_the_scanner_split_holds_no_sentence_end() -> None:
    text = (
        "Anggaran belanja modal direncanakan sebesar Rp1.234.567. 89 0,00 (satu miliar dua ratus tiga puluh "
        "empat juta lima ratus enam puluh tujuh ribu delapan ratus sembilan puluh rupiah), yang digunakan "
        "untuk:\na. pembangunan jembatan; dan\nb. pemeliharaan jalan."
    )
    claim = "Belanja modal untuk pembangunan jembatan dan pemeliharaan jalan Rp{}."
    assert _verdict(claim.format("1.234.567.890"), text) == "supported"
    assert _verdict(claim.format("1.234.576.890"), text) == "unsupported"
    assert _verdict(claim.format("1.234.567"), text) == "unsupported"  # a prefix is not the amount


PENALTY = (
    "(4) Dalam hal permohonan izin ditolak, pemohon dikenai biaya administrasi sebesar 2% (dua persen) dari "
    "nilai jaminan yang telah disetor sebelum mengajukan permohonan. (5) Dalam hal pemohon "
    "mengajukan keberatan, biaya administrasi sebesar 2% (dua persen) sebagaimana dimaksud pada ayat (4) "
    "tidak dikenakan."
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Jika pemohon mengajukan keberatan, biaya administrasi 2% tidak dikenakan.", "supported"),
        ("Jika pemohon mengajukan keberatan, biaya administrasi 2% tetap dikenakan.", "unsupported"),
        (
            "Jika permohonan izin ditolak, pemohon dikenai biaya administrasi 2% dari nilai jaminan.",
            "supported",
        ),
    ],
)
def test_an_ayat_condition_tells_equal_figures_apart(claim: str, verdict: str) -> None:
    assert _verdict(claim, PENALTY) == verdict
