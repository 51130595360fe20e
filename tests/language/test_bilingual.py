"""The bilingual lexicon: its API, and that every Indonesian side is general statute language (it stands in at
least three statutes of ../shared/data/indo_legal_corpus; skipped when the corpus is absent)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from language.bilingual import (
    TERMS,
    abbreviation_of,
    english_to_indonesian,
    expand_abbreviation,
    expand_tokens,
    find_phrases,
    indonesian_to_english,
)

DATA = Path(
    os.environ.get("ACEH_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)
CORPUS = DATA / "indo_legal_corpus"
MIN_STATUTES = 3


def test_english_to_indonesian_and_back() -> None:
    assert english_to_indonesian("General Allocation Fund") == ["dana alokasi umum"]
    assert english_to_indonesian("special allocation funds") == ["dana alokasi khusus"]  # plural
    assert "penerimaan negara bukan pajak" in english_to_indonesian("non-tax state revenue")
    assert english_to_indonesian("import duty") == ["bea masuk"]
    assert english_to_indonesian("no such phrase") == []
    assert "state budget" in indonesian_to_english("APBN")
    assert indonesian_to_english("bea keluar") == ["export duty", "export duties"]


def test_abbreviations_both_ways() -> None:
    for abbreviation, expansion in (
        ("APBN", "anggaran pendapatan dan belanja negara"),
        ("apbd", "anggaran pendapatan dan belanja daerah"),
        ("PNBP", "penerimaan negara bukan pajak"),
        ("DAU", "dana alokasi umum"),
        ("DAK", "dana alokasi khusus"),
        ("otsus", "otonomi khusus"),
        ("PAD", "pendapatan asli daerah"),
        ("PKB", "pajak kendaraan bermotor"),
        ("BPHTB", "bea perolehan hak atas tanah dan bangunan"),
        ("DBH", "dana bagi hasil"),
        ("SiLPA", "sisa lebih pembiayaan anggaran"),
    ):
        assert expand_abbreviation(abbreviation) == expansion
        assert (abbreviation_of(expansion) or "").lower() == abbreviation.lower()


def test_phrases_longest_first_and_expansion() -> None:
    tokens = "the general allocation fund and tax revenue".split()
    found = [(m.start, m.end, m.language) for m in find_phrases(tokens)]
    assert found == [(1, 4, "en"), (5, 7, "en")]
    expanded = expand_tokens(tokens)
    assert expanded[: len(tokens)] == tokens
    assert {"dana", "alokasi", "umum", "penerimaan", "perpajakan", "pajak"} <= set(expanded)
    assert "anggaran" in expand_tokens(["APBN"])
    assert "state" in expand_tokens(["belanja", "negara"])


def test_abbreviations_that_are_english_words_need_capitals() -> None:
    assert expand_tokens(["the", "sun"]) == ["the", "sun"]
    assert "surat" in expand_tokens(["SUN"])
    assert "otonomi" in expand_tokens(["dana", "otsus"])  # written in lower case as a rule


def test_entries_are_well_formed() -> None:
    names = [term.indonesian for term in TERMS]
    assert len(names) == len(set(names)), "an Indonesian term is listed twice"
    for term in TERMS:
        assert term.english and all(term.english), term
        assert term.indonesian == term.indonesian.lower().strip(), term


def _normalised(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9-]+", " ", text.lower()) + " "


@pytest.mark.data
def test_every_indonesian_side_stands_in_three_statutes() -> None:
    if not CORPUS.exists():
        pytest.skip(f"{CORPUS} is absent")
    wanted = {term.indonesian: 0 for term in TERMS}
    files = sorted(CORPUS.glob("*/*/*.md"), key=lambda p: (-int(p.parent.name), p.name))
    for path in files:  # newest first: budget and tax laws carry most terms; stop when all are found
        text = _normalised(path.read_text(encoding="utf-8", errors="replace"))
        for phrase, count in wanted.items():
            if count < MIN_STATUTES and f" {phrase} " in text:
                wanted[phrase] = count + 1
        if all(count >= MIN_STATUTES for count in wanted.values()):
            break
    rare = sorted(phrase for phrase, count in wanted.items() if count < MIN_STATUTES)
    assert not rare, f"in fewer than {MIN_STATUTES} statutes: {rare}"
