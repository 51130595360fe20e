"""Page furniture inside a passage's line (a portal's running head, the scan's stamp, the split letterhead,
page numbers, runs of bare ayat numbers) ends a unit: the written claim is a verbatim piece of the passage
without it. Invented text."""

from __future__ import annotations

import pytest

from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.agent.writers.furniture import furniture_free_parts
from serve_app.answer.segments import Passage
from tests.support.agents import make_chunk

FURNITURE = [
    "jdih.contoh.go.id",
    "SK No OO4?15 A",
    "PRES I DEN REPIJBLIK INDONESIA -7 -",
    "- 12 -",
    "(2) (3) (4)",
]


@pytest.mark.parametrize("furniture", FURNITURE)
def test_the_claim_leaves_the_furniture_out(furniture: str) -> None:
    text = (
        f"Pasal 4\n\nDana cadangan pangan dikelola oleh menteri. {furniture} Belanja lumbung pangan desa "
        "untuk tahun anggaran 2041 diperkirakan sebesar Rp8.250.000.000,00."
    )
    chunk = make_chunk("lumbung", 4, text, title="Undang-Undang Nomor 9 Tahun 2040 tentang Lumbung Pangan")
    segments = EmbeddedWriter().segments(
        "Berapa belanja lumbung pangan desa tahun anggaran 2041?", [Passage("P1", text, chunk=chunk)]
    )
    facts = [s.text for s in segments if s.kind == "fact"]
    assert any("Rp8.250.000.000,00" in f for f in facts), segments
    for fact in facts:
        assert fact in text
        assert furniture not in fact


def test_the_laws_own_markers_are_kept() -> None:
    line = "(2) Belanja sebagaimana dimaksud pada ayat (1) huruf a sebesar Rp5,00 - 10 persen dari pagu."
    assert furniture_free_parts(line) == [line]
