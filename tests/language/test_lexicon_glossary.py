"""Every English side of the bilingual lexicon that stands in a development item names the public glossary it
follows (a trailing ``# KEY`` on its table line, KEY one of language.bilingual_statute.GLOSSARIES).

The dev sets exist to measure the judge: an English name that only they use would fit the lexicon to them.
They are read at run time from ../shared/data (or ACEH_SHARED_DATA), every text field of every item; the test
skips when they are absent and holds no dev text itself."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from language.bilingual import TERMS
from language.bilingual_statute import GLOSSARIES

DATA = Path(
    os.environ.get("ACEH_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)
DEV_SETS = ("judge_numeric_dev", "judge_numeric_dev2", "legal_qa_dev", "legal_qa_dev2")


def _normalised(text: str) -> str:
    # hyphens count as spaces, so "x-y" and "x y" are one phrase (the tokenizer splits hyphens too)
    return " " + re.sub(r"[^a-z0-9']+", " ", text.lower()) + " "


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _dev_texts() -> list[str]:
    texts = []
    for name in DEV_SETS:
        for path in sorted((DATA / name).glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    texts.append(_normalised(" ".join(_strings(json.loads(line)))))
    return texts


def _stands_in(phrase: str, texts: list[str]) -> bool:
    # the lexicon also matches a final plural (language.bilingual._singular), so the plural counts too
    forms = [_normalised(phrase + suffix) for suffix in ("", "s", "es")]
    return any(form in text for text in texts for form in forms)


def test_glossary_keys_are_known_and_name_a_source() -> None:
    for term in TERMS:
        assert term.glossary is None or all(k in GLOSSARIES for k in term.glossary.split(", ")), term
    for key, source in GLOSSARIES.items():
        assert re.search(r"https?://\S+", source), f"{key} names no address"


@pytest.mark.data
def test_english_sides_in_dev_items_name_a_glossary() -> None:
    missing_sets = [name for name in DEV_SETS if not (DATA / name).is_dir()]
    if missing_sets:
        pytest.skip(f"dev sets absent under {DATA}: {missing_sets}")
    texts = _dev_texts()
    unjustified = sorted(
        f"{term.indonesian} : {english}"
        for term in TERMS
        if term.glossary is None
        for english in term.english
        if _stands_in(english, texts)
    )
    assert not unjustified, (
        "English sides that stand in dev items but name no glossary (name one or remove them):\n"
        + "\n".join(unjustified)
    )
