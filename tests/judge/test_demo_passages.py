"""Regressions on passages as chunked from configs/demo_corpus (fictitious figures, copied here so the tests
do not move with the demo files): a figure restated in another form ("Rp… atau 99,96 persen"), the end of a
change ("naik dari A menjadi B"), and an ayat pointing back to another ("sebagaimana dimaksud pada ayat (1)")
are supported when restated, and every one-thing change to them stays unsupported."""

from __future__ import annotations

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage
from tests.support.claims import ClaimCase, claim_cases

# qanun_apba_2023.md, BAB III › Pasal 6
PASAL_6 = JudgePassage(
    "P1",
    "Pasal 6\n\n(1) Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294 (delapan ratus tujuh "
    "puluh satu miliar enam ratus enam puluh tujuh juta dua ratus sembilan belas ribu dua ratus sembilan "
    "puluh empat rupiah).\n\n(2) Belanja sebagaimana dimaksud pada ayat (1) setara dengan 20,1 persen dari "
    "total belanja, sesuai dengan ketentuan alokasi pendidikan paling sedikit 20 (dua puluh) persen dalam "
    "Qanun Aceh Nomor 9 Tahun 2022 tentang Penyelenggaraan Pendidikan.",
    {"title": "Qanun Aceh Nomor 1 Tahun 2023", "type": "Qanun", "number": "1", "year": 2023},
)
# laporan_realisasi_2023.md, Ringkasan
REALISASI = JudgePassage(
    "P2",
    "- Realisasi Pendapatan Aceh mencapai Rp4.011.303.699.490 atau 99,96 persen dari target "
    "Rp4.012.785.301.118.\n- Realisasi Belanja Aceh mencapai Rp4.006.200.990.234 atau 92,35 persen dari pagu "
    "Rp4.338.210.745.602.\n- Realisasi belanja urusan pendidikan sebesar Rp822.592.351.730 atau 94,37 persen "
    "dari pagu Rp871.667.219.294.",
    {"title": "Laporan Realisasi Anggaran Pemerintah Aceh Tahun Anggaran 2023", "section": "Ringkasan"},
)
# statistik_kemiskinan.md, Ringkasan
KEMISKINAN = JudgePassage(
    "P3",
    "- Jumlah penduduk Aceh tahun 2022 sebanyak 5.548.610 jiwa dan tahun 2023 sebanyak 5.584.820 jiwa.\n"
    "- Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 806.250 jiwa (14,44 persen), turun 12.220 jiwa "
    "dibandingkan Maret 2022 sebanyak 818.470 jiwa (14,75 persen).\n"
    "- Persentase penduduk miskin turun 0,31 poin persen dalam satu tahun.\n"
    "- Garis kemiskinan naik dari Rp592.483 per kapita per bulan pada 2022 menjadi Rp627.310 per kapita per "
    "bulan pada 2023.",
    {"title": "Statistik Kemiskinan dan Kependudukan Aceh 2022-2023", "section": "Ringkasan"},
)
# statistik_kesehatan_2022_2023.md, Fasilitas Pelayanan Kesehatan
FASILITAS = JudgePassage(
    "P4",
    "- Jumlah puskesmas bertambah dari 356 unit pada 2022 menjadi 361 unit pada 2023.\n"
    "- Jumlah rumah sakit (pemerintah dan swasta) bertambah dari 71 unit menjadi 73 unit.",
)
# qanun_apba_2024.md, Pasal 6 ayat (1) and (3)
PASAL_6_2024 = JudgePassage(
    "P5",
    "(1) Belanja urusan pendidikan ditetapkan sebesar Rp934.512.880.150.\n\n"
    "(3) Belanja urusan pendidikan Tahun Anggaran 2024 naik sebesar Rp62.845.660.856 atau 7,21 persen "
    "dibandingkan dengan Tahun Anggaran 2023 sebesar Rp871.667.219.294.",
)

RESTATED = [
    *claim_cases(
        "pasal_6",
        PASAL_6,
        ("Belanja pendidikan setara dengan 20,1 persen dari total belanja.", "supported"),
        ("Belanja urusan pendidikan setara dengan 20,1 persen dari total belanja.", "supported"),
    ),
    *claim_cases(
        "realisasi",
        REALISASI,
        ("Realisasi Pendapatan Aceh 2023 mencapai 99,96 persen dari target.", "supported"),
        ("Realisasi belanja urusan pendidikan mencapai 94,37 persen dari pagu.", "supported"),
    ),
    *claim_cases(
        "kemiskinan",
        KEMISKINAN,
        ("Garis kemiskinan naik menjadi Rp627.310 per kapita per bulan pada 2023.", "supported"),
        (
            "Garis kemiskinan naik dari Rp592.483 per kapita per bulan pada 2022 menjadi Rp627.310 per "
            "kapita per bulan pada 2023.",
            "supported",
        ),
        ("Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 14,44 persen.", "supported"),
    ),
    *claim_cases(
        "fasilitas",
        FASILITAS,
        ("Jumlah puskesmas bertambah menjadi 361 unit pada 2023.", "supported"),
    ),
    *claim_cases(
        "pasal_6_2024",
        PASAL_6_2024,
        ("Belanja urusan pendidikan tahun 2024 naik sebesar Rp62.845.660.856.", "supported"),
    ),
]

CHANGED = [
    *claim_cases(
        "pasal_6",
        PASAL_6,
        ("Belanja kesehatan setara dengan 20,1 persen dari total belanja.", "entity_missing"),
        ("Belanja pendidikan setara dengan 21,1 persen dari total belanja.", "figure_mismatch"),
        ("Belanja pendidikan tidak setara dengan 20,1 persen dari total belanja.", "polarity_conflict"),
        ("Belanja pendidikan paling sedikit 20,1 persen dari total belanja.", "polarity_conflict"),
    ),
    *claim_cases(
        "realisasi",
        REALISASI,
        ("Realisasi Belanja Aceh 2023 mencapai 99,96 persen dari target.", "entity_missing"),
        ("Realisasi Pendapatan Aceh 2023 mencapai 92,35 persen dari pagu.", "entity_missing"),
        ("Realisasi Aceh mencapai Rp4.011.303.699.490.", "entity_missing"),
        ("Target Pendapatan Aceh sebesar Rp4.011.303.699.490.", "entity_missing"),
    ),
    *claim_cases(
        "kemiskinan",
        KEMISKINAN,
        ("Garis kemiskinan turun menjadi Rp627.310 per kapita per bulan pada 2023.", "polarity_conflict"),
        ("Garis kemiskinan naik menjadi Rp627.310 per kapita per bulan pada 2022.", "period_mismatch"),
        # the start of the change is dated by the year written after it, not by its end's
        ("Garis kemiskinan pada 2023 sebesar Rp592.483 per kapita per bulan.", "period_mismatch"),
        ("Penduduk miskin naik menjadi Rp627.310 per kapita per bulan pada 2023.", "entity_missing"),
        ("Penduduk miskin Aceh pada Maret 2022 sebanyak 14,44 persen.", "period_mismatch"),
    ),
    *claim_cases(
        "fasilitas",
        FASILITAS,
        # the start of a change never grounds its end
        ("Jumlah puskesmas bertambah dari 356 unit pada 2022 menjadi 356 unit pada 2023.", "unsupported"),
        ("Jumlah rumah sakit bertambah dari 73 unit menjadi 71 unit.", "unsupported"),
    ),
    *claim_cases(
        "pasal_6_2024",
        PASAL_6_2024,
        # "naik sebesar X" read off "ditetapkan sebesar X": the other figures' "naik" does not carry over
        (
            "Belanja urusan pendidikan Tahun Anggaran 2024 naik sebesar Rp934.512.880.150 atau 7,21 persen.",
            "direction_unsupported",
        ),
    ),
]


@pytest.mark.parametrize("case", RESTATED)
def test_restated_figure_change_end_and_ayat_pointer_are_supported(case: ClaimCase) -> None:
    case.check()


@pytest.mark.parametrize("case", CHANGED)
def test_one_change_stays_unsupported(case: ClaimCase) -> None:
    case.check()


def test_ayat_pointer_with_huruf_is_not_resolved_to_the_whole_ayat() -> None:
    passage = JudgePassage(
        "P1",
        "(1) Pendapatan negara terdiri atas:\na. Penerimaan perpajakan;\nb. Penerimaan negara bukan pajak.\n"
        "(2) Penerimaan sebagaimana dimaksud pada ayat (1) huruf a direncanakan sebesar Rp591,98 triliun.",
    )
    # "bukan pajak" of huruf b must not enter the neighbourhood of the figure of huruf a
    claim = "Penerimaan perpajakan sebagaimana dimaksud pada ayat (1) huruf a direncanakan Rp591,98 triliun."
    assert check_claim(claim, [passage]).verdict == "supported"
    assert check_claim(claim.replace("huruf a", "huruf b"), [passage]).verdict == "unsupported"
