"""Claims without figures: every content word aligned to the passage, and the same polarity as the sentence
they are aligned to; otherwise unsupported with a reason (invented sentences)."""

from __future__ import annotations

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage

HARBOUR = JudgePassage(
    "H1", "Otoritas pelabuhan tidak mengizinkan kapal nelayan bersandar di dermaga barat pada malam hari."
)
MARKET = JudgePassage("H2", "Pemerintah kota membangun pasar ikan baru di dekat muara sungai.")


def test_restatement_with_every_word_aligned_is_supported() -> None:
    assert check_claim("Pemerintah kota membangun pasar ikan baru.", [MARKET]).verdict == "supported"


@pytest.mark.parametrize(
    ("claim", "passage", "reason"),
    [
        ("Pemerintah kota membangun pasar ikan modern.", MARKET, "low_coverage"),  # a word it lacks
        ("Pemerintah provinsi membangun pasar ikan baru.", MARKET, "low_coverage"),  # another subject
        ("Kapal nelayan bersandar di dermaga barat pada malam hari.", HARBOUR, "negation_unaligned"),
        ("Pemerintah kota tidak membangun pasar ikan baru.", MARKET, "negation_unaligned"),
    ],
)
def test_unaligned_word_or_polarity_is_unsupported(claim: str, passage: JudgePassage, reason: str) -> None:
    check = check_claim(claim, [passage])
    assert check.verdict == "unsupported"
    assert reason in check.reasons or "polarity_conflict" in check.reasons


HANDOVER = JudgePassage("H3", "Kota Lembah menyerahkan gedung arsip lama kepada Kabupaten Tanjung.")


def test_swapped_roles_are_order_unaligned() -> None:
    same = "Kota Lembah menyerahkan gedung arsip lama kepada Kabupaten Tanjung."
    assert check_claim(same, [HANDOVER]).verdict == "supported"
    swapped = "Kabupaten Tanjung menyerahkan gedung arsip lama kepada Kota Lembah."
    check = check_claim(swapped, [HANDOVER])
    assert check.verdict == "unsupported" and "order_unaligned" in check.reasons
