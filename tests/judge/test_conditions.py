"""A bounded figure in one clause with another figure is its condition: both must be read together in the
passage (one list item, or an item and its lead-in). Synthetic passage written for these tests."""

from __future__ import annotations

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage

TIERS = JudgePassage(
    "P1",
    "(2) Besaran insentif bagi koperasi yang asetnya paling banyak Rp900.000.000,00 (sembilan ratus juta "
    "rupiah) ditetapkan sebagai berikut:\n"
    "a. 1,5% (satu koma lima persen) bagi koperasi dengan jumlah anggota sampai dengan 300 (tiga ratus) "
    "orang; atau\n"
    "b. 4% (empat persen) bagi koperasi dengan jumlah anggota lebih dari 300 (tiga ratus) orang.",
)


@pytest.mark.parametrize(
    ("claim", "verdict", "reason"),
    [
        # the rate of item a with the threshold of item b: each is written, the claim is not
        ("Insentif 1,5% berlaku bagi koperasi dengan jumlah anggota lebih dari 300 orang.", "unsupported",
         "condition_elsewhere"),
        ("Insentif 4% berlaku bagi koperasi dengan jumlah anggota lebih dari 300 orang.", "supported", None),
        ("Insentif 1,5% berlaku bagi koperasi dengan jumlah anggota sampai dengan 300 orang.", "supported",
         None),
        # the lead-in's threshold conditions every item
        ("Koperasi dengan aset paling banyak Rp900 juta mendapat insentif 4% bila jumlah anggota lebih dari "
         "300 orang.", "supported", None),
    ],
)  # fmt: skip
def test_a_condition_is_read_with_its_figure(claim: str, verdict: str, reason: str | None) -> None:
    check = check_claim(claim, [TIERS])
    assert check.verdict == verdict, check.reasons
    if reason:
        assert reason in check.reasons


DETENTION = JudgePassage(
    "P1",
    "(4) Barang yang disita wajib diserahkan dalam waktu tidak lebih dari 2x24 (dua kali dua puluh empat) "
    "jam setelah penyitaan.",
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Barang yang disita wajib diserahkan paling lama 48 jam setelah penyitaan.", "supported"),
        ("Barang yang disita wajib diserahkan paling lama 24 jam setelah penyitaan.", "unsupported"),
        ("Barang yang disita wajib diserahkan paling cepat 48 jam setelah penyitaan.", "unsupported"),
    ],
)
def test_a_count_of_time_spans_grounds_its_product(claim: str, verdict: str) -> None:
    assert check_claim(claim, [DETENTION]).verdict == verdict


SHARES = JudgePassage(
    "P1",
    "(5) Dana bagi hasil retribusi pasar dibagi dengan imbangan 60% (enam puluh persen) untuk kabupaten dan "
    "40% (empat puluh persen) untuk desa.",
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        # a ratio restates two shares of one whole written side by side, in their order
        ("Dana bagi hasil retribusi pasar dibagi 60:40 antara kabupaten dan desa.", "supported"),
        ("Dana bagi hasil retribusi pasar dibagi 40:60 antara kabupaten dan desa.", "unsupported"),
        ("Dana bagi hasil retribusi pasar dibagi 70:30 antara kabupaten dan desa.", "unsupported"),
        ("Dana bagi hasil retribusi pasar dibagi 60:40 antara provinsi dan desa.", "unsupported"),
    ],
)
def test_a_ratio_is_grounded_by_two_shares(claim: str, verdict: str) -> None:
    assert check_claim(claim, [SHARES]).verdict == verdict
