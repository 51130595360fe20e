"""Fractions are one figure, their value the quotient (language.fractions). Invented text."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage
from language.numbers import extract_figures

PASSAGE = JudgePassage(
    "P1",
    "(2) Belanja pegawai Kabupaten Lamteuba dibatasi paling banyak 2/5 (dua perlima) dari total belanja "
    "daerah, dan paling sedikit 1/1.000 (satu perseribu) dari belanja daerah untuk pelatihan aparatur.",
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Belanja pegawai Kabupaten Lamteuba paling banyak 2/5 dari total belanja daerah.", "supported"),
        (
            "Belanja pegawai Kabupaten Lamteuba paling banyak dua perlima dari total belanja daerah.",
            "supported",
        ),
        ("Pelatihan aparatur paling sedikit satu perseribu dari belanja daerah.", "supported"),
        # a fraction is its quotient: another denominator, the numerator alone, a percent or the other
        # bound are other figures
        ("Belanja pegawai Kabupaten Lamteuba paling banyak 2/3 dari total belanja daerah.", "unsupported"),
        (
            "Belanja pegawai Kabupaten Lamteuba paling banyak dua pertiga dari total belanja daerah.",
            "unsupported",
        ),
        ("Belanja pegawai Kabupaten Lamteuba paling banyak 2 dari total belanja daerah.", "unsupported"),
        ("Belanja pegawai Kabupaten Lamteuba paling banyak 40% dari total belanja daerah.", "unsupported"),
        ("Belanja pegawai Kabupaten Lamteuba paling sedikit 2/5 dari total belanja daerah.", "unsupported"),
        ("Pelatihan aparatur paling sedikit 1/100 dari belanja daerah.", "unsupported"),
    ],
)
def test_fractions_are_their_quotient(claim: str, verdict: str) -> None:
    result = check_claim(claim, [PASSAGE])
    assert result.verdict == verdict, result


def test_what_is_no_fraction() -> None:
    kinds = [f.kind for f in extract_figures("Qanun Nomor 7/2021 berlaku 1/3/2022 dan melayani 24/7.")]
    assert "fraction" not in kinds
    half = extract_figures("sebesar 12,5% (dua belas setengah persen)")
    assert "fraction" not in [f.kind for f in half]
    assert half[0].value == Decimal("12.5")
    tenths = extract_figures("sebesar 7,3% (tujuh tiga persepuluh persen)")
    assert "fraction" not in [f.kind for f in tenths]
