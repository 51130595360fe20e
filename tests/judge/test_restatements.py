"""Restatements the rule judge must accept, each beside the wrong claim of the same kind it must still reject:
a prohibition or a negated modal before a bound, list lead-ins, OCR-damaged entity words. Invented passages
(invented qanun, regions and amounts) written for these tests."""

from __future__ import annotations

import pytest

from language.qualifiers import qualifiers
from tests.support.claims import ClaimCase, claim_cases

PROHIBITED = (
    "(2) Iuran pengelolaan pasar yang dipungut dari setiap pedagang di Kabupaten Lhok Sembilan dilarang "
    "melebihi Rp 75.000,00 (tujuh puluh lima ribu rupiah) dan dari koperasi pasar tidak boleh lebih dari "
    "Rp420.000,00 (empat ratus dua puluh ribu rupiah) setiap bulan."
)

NEGATED_BOUNDS = [
    *claim_cases(
        "prohibited",
        PROHIBITED,
        ("Iuran pengelolaan pasar dari setiap pedagang paling banyak Rp75 ribu setiap bulan.", "supported"),
        ("Iuran pengelolaan pasar dari koperasi pasar maksimal Rp420 ribu setiap bulan.", "supported"),
        # the bound flips to a maximum, never a minimum, and the figure itself must still agree
        ("Iuran pengelolaan pasar dari setiap pedagang paling sedikit Rp75 ribu per bulan.", "unsupported"),
        ("Iuran pengelolaan pasar dari koperasi pasar lebih dari Rp420 ribu setiap bulan.", "unsupported"),
        ("Iuran pengelolaan pasar dari setiap pedagang paling banyak Rp57 ribu setiap bulan.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", NEGATED_BOUNDS)
def test_negated_bounds(case: ClaimCase) -> None:
    case.check()


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("dilarang melebihi ", "max"),
        ("tidak boleh lebih dari ", "max"),
        ("tidak dapat kurang dari ", "min"),
        ("dilarang kurang dari ", "min"),
        ("dapat lebih dari ", "gt"),  # a modal alone negates nothing
        ("boleh kurang dari ", "lt"),
    ],
)
def test_negation_before_a_bound(text: str, bound: str) -> None:
    assert qualifiers(text + "12 hari", len(text))[1] == bound
