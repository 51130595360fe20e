"""No committed source copies the dev sets (judge_numeric_dev, legal_qa_dev), which exist to measure us.

The dev items are read at run time from ../shared/data (or ACEH_SHARED_DATA); the test skips when they are
absent, and it holds no dev text itself. Over the git-tracked .py/.ts/.js/.yaml/.yml/.md files (less
benchmarks/results/, our own outputs) it fails on:

- any run of 8 words of a dev claim or question: those are hand-written sentences, so a match is a copy;
- a dev amount of six or more digits written as the item writes it ("7.300.000.000", grouped by dots)
  together with a run of 5 words of that same item's passage, quote, claim or question in the same file:
  the figure in its context. A round figure alone, or statute boilerplate alone, is not a copy;
- an OCR-damaged amount of the item written verbatim (digit chunks split by spaces or look-alike letters):
  such damage is unique to one scan, so it can only have come from the item.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ACEH_SHARED_DATA", REPO.parent / "shared" / "data"))
JUDGE_DEV = DATA / "judge_numeric_dev" / "judge_numeric_dev.jsonl"
QA_DEV = DATA / "legal_qa_dev" / "legal_qa_dev.jsonl"

SCANNED_SUFFIXES = (".py", ".ts", ".js", ".yaml", ".yml", ".md")
OWN_OUTPUTS = "benchmarks/results/"
SENTENCE_RUN = 8
CONTEXT_RUN = 5
AMOUNT_DIGITS = 6

# A word as the scans count it: letters/digits, with inner dots and commas kept ("rp4.800.000.000,00").
_WORD = re.compile(r"\w+(?:[.,]\w+)*")
# A dot-grouped amount ("12.345.678"), not part of a longer number on either side.
_AMOUNT = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3})+(?![\d]|[.,]\d{3})")
# A figure as a scan may break it: chunks of digits, separators and look-alike letters joined by spaces.
_CHUNK = r"[0-9OolI|.,]*[0-9][0-9OolI|.,]*|[OolI|.,]"
_DAMAGED_RUN = re.compile(rf"(?<!\S)(?:Rp\.?\s?)?(?:{_CHUNK})(?:\s(?:{_CHUNK}))+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def runs(seq: list[str], n: int) -> set[str]:
    return {" ".join(seq[i : i + n]) for i in range(len(seq) - n + 1)}


def _digit_count(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


def damaged_amounts(text: str) -> Iterator[str]:
    """Figures of six or more digits the scan split into chunks, whole and cut right after their sixth digit
    ("1 . 234.56" of "Rp 1 . 234.567.890 …"), so a comment quoting only the head of one is caught too."""
    for match in _DAMAGED_RUN.finditer(text):
        chunks = match.group(0).split()
        if chunks[0].startswith("Rp"):
            chunks = chunks[1:] if chunks[0].rstrip(".") == "Rp" else [chunks[0][2:].lstrip("."), *chunks[1:]]
        while chunks and not re.search(r"\d", chunks[0]):
            chunks = chunks[1:]  # a lone look-alike letter (a table's "|") opens no figure
        run = " ".join(chunks)
        sixth = [i for i, ch in enumerate(run) if ch.isdigit()][AMOUNT_DIGITS - 1 : AMOUNT_DIGITS]
        if not sixth:
            continue
        for figure in (run[: sixth[0] + 1], run):  # its head, and the whole figure (damage further on)
            if " " in figure and re.search(r"\d[.,]|[.,]\d", figure):
                yield figure


@dataclass(repr=False)
class DevSets:
    sentence_runs: dict[str, str] = field(default_factory=dict)  # 8-word run -> item id
    amounts: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # amount -> item ids
    context_runs: dict[str, set[str]] = field(default_factory=dict)  # item id -> its 5-word runs
    damaged: dict[str, str] = field(default_factory=dict)  # damaged figure head -> item id

    def add_item(self, item_id: str, sentences: list[str], context: list[str]) -> None:
        for sentence in sentences:
            for run in runs(words(sentence), SENTENCE_RUN):
                self.sentence_runs.setdefault(run, item_id)
        item_runs: set[str] = set()
        for text in sentences + context:
            item_runs |= runs(words(text), CONTEXT_RUN)
            for amount in _AMOUNT.findall(text):
                if _digit_count(amount) >= AMOUNT_DIGITS:
                    self.amounts[amount].add(item_id)
            for head in damaged_amounts(text):
                self.damaged.setdefault(head, item_id)
        self.context_runs[item_id] = item_runs


def _load_dev_sets() -> DevSets:
    dev = DevSets()
    with JUDGE_DEV.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            dev.add_item(item["id"], [item.get("claim") or ""], [item.get("passage") or ""])
    with QA_DEV.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            context = [item.get("gold_quote") or "", item.get("answer_short") or ""]
            dev.add_item(item["id"], [item.get("question") or ""], context)
    return dev


def _tracked_sources() -> list[str]:
    listing = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=False
    )
    if listing.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [
        name
        for name in listing.stdout.split("\0")
        if name.endswith(SCANNED_SUFFIXES) and not name.startswith(OWN_OUTPUTS) and (REPO / name).is_file()
    ]


def copies_in(text: str, dev: DevSets) -> list[str]:
    """What of the dev sets ``text`` repeats, one line per dev item (without quoting the dev text)."""
    found: list[str] = []
    seq = words(text)
    copied_items = {dev.sentence_runs[r] for r in runs(seq, SENTENCE_RUN) if r in dev.sentence_runs}
    found += [f"an {SENTENCE_RUN}-word run of the claim/question of {item}" for item in sorted(copied_items)]
    figure_items: set[str] = set()
    for amount in set(_AMOUNT.findall(text)):
        figure_items |= dev.amounts.get(amount, set())
    if figure_items:
        text_runs = runs(seq, CONTEXT_RUN)
        found += [
            f"a figure of {item} beside a {CONTEXT_RUN}-word run of its text"
            for item in sorted(figure_items)
            if dev.context_runs[item] & text_runs
        ]
    squeezed = " ".join(text.split())
    found += sorted(
        {f"the OCR-damaged figure of {item}" for head, item in dev.damaged.items() if head in squeezed}
    )
    return found


@pytest.fixture(scope="module")
def dev_sets() -> DevSets:
    if not (JUDGE_DEV.is_file() and QA_DEV.is_file()):
        pytest.skip(f"dev sets not found under {DATA} (set ACEH_SHARED_DATA)")
    return _load_dev_sets()


def test_the_detector_sees_each_kind_of_copy() -> None:
    """The three rules on a made-up item, so the guard below is known to bite."""
    dev = DevSets()
    dev.add_item(
        "made-up",
        ["Retribusi parkir tepi jalan umum naik menjadi Rp7.300.000.000,00 mulai tahun depan."],
        [
            "(4) Retribusi parkir tepi jalan umum ditetapkan sebesar Rp7.300.000.000,00 (tujuh miliar tiga "
            "ratus juta rupiah) dan dicatat sebagai Rp 2 . 450. l 30.000,00 dalam lampiran."
        ],
    )
    assert copies_in("# retribusi parkir tepi jalan umum naik menjadi Rp7.300.000.000,00 mulai", dev)
    assert copies_in("x = 'Rp7.300.000.000,00'  # tujuh miliar tiga ratus juta rupiah", dev)
    assert copies_in("a comment quoting 2 . 450. l 30 as scanned", dev)
    assert not copies_in("x = 'Rp7.300.000.000,00'  # a round figure on its own", dev)
    assert not copies_in("retribusi parkir tepi jalan umum ditetapkan, with no figure", dev)


def test_no_tracked_source_copies_the_dev_sets(dev_sets: DevSets) -> None:
    offences = [
        f"{name}: {what}"
        for name in _tracked_sources()
        for what in copies_in((REPO / name).read_text(encoding="utf-8", errors="replace"), dev_sets)
    ]
    assert not offences, "dev-set text in committed files:\n" + "\n".join(offences)
