"""A bounded figure in one clause with another figure is its condition: both must be read together in the
passage (one list item, or an item and its lead-in). Synthetic passage written for these tests."""

from __future__ import annotations

import pytest

from judge.types import JudgePassage
from tests.support.claims import ClaimCase, claim_cases

TIERS = JudgePassage(
    "P1",
    "(2) Besaran insentif bagi koperasi yang asetnya paling banyak Rp900.000.000,00 (sembilan ratus juta "
    "rupiah) ditetapkan sebagai berikut:\n"
    "a. 1,5% (satu koma lima persen) bagi koperasi dengan jumlah anggota sampai dengan 300 (tiga ratus) "
    "orang; atau\n"
    "b. 4% (empat persen) bagi koperasi dengan jumlah anggota lebih dari 300 (tiga ratus) orang.",
)

CONDITIONS_READ_WITH_THEIR_FIGURE = claim_cases(
    "tiers",
    TIERS,
    # the rate of item a with the threshold of item b: each is written, the claim is not
    (
        "Insentif 1,5% berlaku bagi koperasi dengan jumlah anggota lebih dari 300 orang.",
        "condition_elsewhere",
    ),
    ("Insentif 4% berlaku bagi koperasi dengan jumlah anggota lebih dari 300 orang.", "supported"),
    ("Insentif 1,5% berlaku bagi koperasi dengan jumlah anggota sampai dengan 300 orang.", "supported"),
    # the lead-in's threshold conditions every item
    (
        "Koperasi dengan aset paling banyak Rp900 juta mendapat insentif 4% bila jumlah anggota lebih dari "
        "300 orang.",
        "supported",
    ),
)


DETENTION = JudgePassage(
    "P1",
    "(4) Barang yang disita wajib diserahkan dalam waktu tidak lebih dari 2x24 (dua kali dua puluh empat) "
    "jam setelah penyitaan.",
)

TIME_SPANS_GROUND_THEIR_PRODUCT = claim_cases(
    "detention",
    DETENTION,
    ("Barang yang disita wajib diserahkan paling lama 48 jam setelah penyitaan.", "supported"),
    ("Barang yang disita wajib diserahkan paling lama 24 jam setelah penyitaan.", "unsupported"),
    ("Barang yang disita wajib diserahkan paling cepat 48 jam setelah penyitaan.", "unsupported"),
)


SHARES = JudgePassage(
    "P1",
    "(5) Dana bagi hasil retribusi pasar dibagi dengan imbangan 60% (enam puluh persen) untuk kabupaten dan "
    "40% (empat puluh persen) untuk desa.",
)

RATIOS_GROUNDED_BY_TWO_SHARES = claim_cases(
    "shares",
    SHARES,
    # a ratio restates two shares of one whole written side by side, in their order
    ("Dana bagi hasil retribusi pasar dibagi 60:40 antara kabupaten dan desa.", "supported"),
    ("Dana bagi hasil retribusi pasar dibagi 40:60 antara kabupaten dan desa.", "unsupported"),
    ("Dana bagi hasil retribusi pasar dibagi 70:30 antara kabupaten dan desa.", "unsupported"),
    ("Dana bagi hasil retribusi pasar dibagi 60:40 antara provinsi dan desa.", "unsupported"),
)


@pytest.mark.parametrize(
    "case",
    [
        *CONDITIONS_READ_WITH_THEIR_FIGURE,
        *TIME_SPANS_GROUND_THEIR_PRODUCT,
        *RATIOS_GROUNDED_BY_TWO_SHARES,
    ],
)
def test_a_figure_is_read_with_its_condition_its_factors_and_its_shares(case: ClaimCase) -> None:
    case.check()
