"""English questions are answered from Indonesian passages as often as Indonesian ones: an English question
refused "not found" while a shown passage states what it asks is a defect. A name no passage mentions is
still refused. Invented laws and figures."""

from __future__ import annotations

import pytest

from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.answer.segments import Passage
from tests.support.agents import make_chunk

TITLE = "Undang-Undang Nomor 4 Tahun 2040 tentang Lumbung Pangan Desa"
TEXTS = [
    "Pasal 7\n\n(1) Badan Lumbung Pangan mulai beroperasi menyelenggarakan program cadangan pangan desa pada "
    "tanggal 1 Maret 2041.",
    "Pasal 8\n\nKuitansi dengan nilai nominal melebihi Rp7.500.000,00 dikenakan iuran lumbung.",
    "Pasal 9\n\nTarif uang tebusan atas gabah yang disimpan di lumbung desa sebesar 3% (tiga persen).",
    "Pasal 10\n\nPengurus lumbung desa dipilih oleh musyawarah desa untuk masa jabatan 5 (lima) tahun.",
]


def _shown() -> list[Passage]:
    return [
        Passage(f"P{i}", text, chunk=make_chunk("lumbung", i, text, title=TITLE, doc_type="UU"))
        for i, text in enumerate(TEXTS, 1)
    ]


def _facts(query: str) -> list[str]:
    return [s.text for s in EmbeddedWriter().segments(query, _shown()) if s.kind == "fact"]


@pytest.mark.parametrize(
    ("question", "stated"),
    [
        (
            "From what date did the Food Granary Agency begin running the village food reserve programme?",
            "1 Maret 2041",
        ),
        (
            "Beyond what face value is a receipt charged the granary levy?",
            "Rp7.500.000,00",
        ),
        ("What redemption-money tariff applies to grain held in a village granary?", "3% (tiga persen)"),
    ],
)
def test_an_english_question_is_answered_by_the_passage_that_states_it(question: str, stated: str) -> None:
    facts = _facts(question)
    assert any(stated in f for f in facts), facts


def test_an_english_question_about_a_name_no_passage_mentions_is_refused() -> None:
    assert not _facts("How much money did the Kartu Tani Emas programme receive for village granaries?")
