"""Two-part questions get both parts answered: each ask is scored on its own, the scope words before the
first question word carried into the second. Invented text."""

from __future__ import annotations

from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.agent.writers.parts import question_parts
from serve_app.answer.segments import Passage
from tests.support.agents import make_chunk

TITLE = "Undang-Undang Nomor 4 Tahun 2040 tentang Lumbung Pangan Desa"
TEXTS = [
    "Pasal 3\n\nJumlah hibah lumbung pangan desa ditetapkan sebesar Rp4.100.000.000,00.",
    "Pasal 4\n\nJumlah belanja pemeliharaan jalan tani ditetapkan sebesar Rp9.300.000.000,00.",
    "Pasal 5\n\nPengurus lumbung dipilih oleh musyawarah desa untuk masa jabatan 5 (lima) tahun.",
]


def _facts(query: str) -> list[str]:
    shown = [
        Passage(f"P{i}", t, chunk=make_chunk("lumbung", i, t, title=TITLE, doc_type="UU"))
        for i, t in enumerate(TEXTS, 1)
    ]
    return [s.text for s in EmbeddedWriter().segments(query, shown) if s.kind == "fact"]


def test_the_parts_of_a_question() -> None:
    assert question_parts("Menurut UU Lumbung, berapa hibah lumbung dan berapa belanja jalan tani?") == [
        "Menurut UU Lumbung, berapa hibah lumbung",
        "Menurut UU Lumbung, berapa belanja jalan tani?",
    ]
    assert question_parts("How much went to granaries and how much to farm roads?") == [
        "How much went to granaries",
        "how much to farm roads?",
    ]
    one = "Apa tugas dan wewenang pengurus lumbung?"
    assert question_parts(one) == [one]


def test_both_parts_are_answered() -> None:
    facts = " ".join(
        _facts("Berapa jumlah hibah lumbung pangan desa dan berapa jumlah belanja pemeliharaan jalan tani?")
    )
    assert "Rp4.100.000.000,00" in facts and "Rp9.300.000.000,00" in facts


def test_a_part_nothing_answers_adds_nothing() -> None:
    facts = _facts("Berapa jumlah hibah lumbung pangan desa dan berapa tarif retribusi pasar ikan?")
    assert facts and all("Rp9.300.000.000,00" not in f for f in facts)
