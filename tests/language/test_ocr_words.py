"""OCR damage inside words and digit runs, general verbs of the bilingual lexicon, statute connectives that do
not tell a list item apart. Synthetic passages written for these tests."""

from __future__ import annotations

import pytest

from language.numbers import extract_figures
from language.ocr_words import fold, ocr_match, one_edit_apart
from language.textunits import Token, names_term, word_keys
from tests.support.claims import ClaimCase, claim_cases


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

SCAN_DAMAGED_CLAIM_WORD = claim_cases(
    "clinic_damaged",
    CLINIC_DAMAGED,
    ("Memperjualbelikan arsip negara bisa dipenjara paling lama 7 tahun.", "supported"),
    ("Memperjualbelikan arsip negara bisa dipenjara paling lama 3 tahun.", "unsupported"),
    ("Memperjualbelikan arsip negara bisa dipenjara paling lama 8 tahun.", "unsupported"),
)


LOOKALIKE = (
    "(4) Belanja pegawai direncanakan sebesar Rp12.345. l 67.000.000,00 (dua belas triliun tiga ratus "
    "empat puluh lima miliar seratus enam puluh tujuh juta rupiah)."
)
LOOKALIKE_READ_WITH_THE_WORDS = claim_cases(
    "lookalike",
    LOOKALIKE,
    ("Belanja pegawai direncanakan sekitar Rp12,35 triliun.", "supported"),
    ("Belanja pegawai direncanakan Rp12.345 juta.", "unsupported"),
)


def test_a_lone_lookalike_letter_inside_a_digit_run_is_read_with_the_words() -> None:
    amounts = [int(f.value) for f in extract_figures(LOOKALIKE) if f.kind == "amount"]
    assert amounts == [12345167000000]


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

ENGLISH_GENERAL_VERBS = claim_cases(
    "rate",
    RATE,
    ("The quarterly fee is the reference rate plus 3%, divided by 4.", "supported"),
    ("The quarterly fee is the reference rate plus 2%, divided by 4.", "unsupported"),
    ("The quarterly fee is the reference rate plus 3%, divided by 3.", "unsupported"),
)


LEVY = (
    "(1) Tarif retribusi parkir yaitu:\na. sebesar 4% (empat persen) untuk kendaraan roda dua; dan\n"
    "b. sebesar 6% (enam persen) untuk kendaraan roda empat.\n"
    "(2) Tarif retribusi parkir sebesar 0% (nol persen) diterapkan atas:\na. kendaraan dinas; dan\n"
    "b. kendaraan ambulans."
)

CONNECTIVE_IN_A_LIST_ITEM = claim_cases(
    "levy",
    LEVY,
    ("Kendaraan dinas dan kendaraan ambulans dikenai tarif retribusi parkir 0%.", "supported"),
    ("Kendaraan dinas dan kendaraan ambulans dikenai tarif retribusi parkir 4%.", "unsupported"),
)


# an amount the scanner split holds no sentence end
SCANNER_SPLIT = (
    "Anggaran belanja modal direncanakan sebesar Rp1.234.567. 89 0,00 (satu miliar dua ratus tiga puluh "
    "empat juta lima ratus enam puluh tujuh ribu delapan ratus sembilan puluh rupiah), yang digunakan "
    "untuk:\na. pembangunan jembatan; dan\nb. pemeliharaan jalan."
)
SPLIT_CLAIM = "Belanja modal untuk pembangunan jembatan dan pemeliharaan jalan Rp{}."
SPLIT_AMOUNT_HOLDS_NO_SENTENCE_END = claim_cases(
    "scanner_split",
    SCANNER_SPLIT,
    (SPLIT_CLAIM.format("1.234.567.890"), "supported"),
    (SPLIT_CLAIM.format("1.234.576.890"), "unsupported"),
    (SPLIT_CLAIM.format("1.234.567"), "unsupported"),  # a prefix is not the amount
)


PENALTY = (
    "(4) Dalam hal permohonan izin ditolak, pemohon dikenai biaya administrasi sebesar 2% (dua persen) dari "
    "nilai jaminan yang telah disetor sebelum mengajukan permohonan. (5) Dalam hal pemohon "
    "mengajukan keberatan, biaya administrasi sebesar 2% (dua persen) sebagaimana dimaksud pada ayat (4) "
    "tidak dikenakan."
)

AYAT_CONDITION_TELLS_EQUAL_FIGURES_APART = claim_cases(
    "penalty",
    PENALTY,
    ("Jika pemohon mengajukan keberatan, biaya administrasi 2% tidak dikenakan.", "supported"),
    ("Jika pemohon mengajukan keberatan, biaya administrasi 2% tetap dikenakan.", "unsupported"),
    (
        "Jika permohonan izin ditolak, pemohon dikenai biaya administrasi 2% dari nilai jaminan.",
        "supported",
    ),
)


@pytest.mark.parametrize(
    "case",
    [
        *SCAN_DAMAGED_CLAIM_WORD,
        *LOOKALIKE_READ_WITH_THE_WORDS,
        *ENGLISH_GENERAL_VERBS,
        *CONNECTIVE_IN_A_LIST_ITEM,
        *SPLIT_AMOUNT_HOLDS_NO_SENTENCE_END,
        *AYAT_CONDITION_TELLS_EQUAL_FIGURES_APART,
    ],
)
def test_claims_against_damaged_and_connected_passages(case: ClaimCase) -> None:
    case.check()
