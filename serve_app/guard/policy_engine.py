"""The deterministic Policy Guard engine: lexicon lookup, rule scoring and the sourced-only check.

A category blocks when the weights of its distinct matching rules reach its threshold. Allow-rules
(legal context, for instance) switch off named weak rules for one text; strong rules are simply never
listed in an allow-rule, so no wording can switch them off.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from serve_app.guard.policy_config import Category, PolicyConfig, Rule, SourcedPattern
from serve_app.guard.textnorm import Folder, NormalizedText, clean, normalize

_SUFFIXES = ("nya", "lah", "kah", "pun", "kan", "an", "i", "ku", "mu")
_PREFIXES = (
    ("memper", ""), ("diper", ""), ("meny", "s"), ("peny", "s"), ("meng", ""), ("meng", "k"), ("peng", ""),
    ("peng", "k"), ("mem", ""), ("mem", "p"), ("pem", ""), ("pem", "p"), ("men", ""), ("men", "t"),
    ("pen", ""), ("pen", "t"), ("ber", ""), ("ter", ""), ("per", ""), ("me", ""), ("pe", ""), ("be", ""),
    ("di", ""), ("ke", ""), ("se", ""), ("kau", ""), ("ku", ""),
)
_MIN_STEM = 3


@lru_cache(maxsize=131072)
def _stems(token: str) -> tuple[str, ...]:
    """Candidate base words of an Indonesian word (affixes stripped), the word itself first."""
    stems = {token}
    for suf in _SUFFIXES:
        if token.endswith(suf) and len(token) - len(suf) >= _MIN_STEM:
            base = token[: -len(suf)]
            stems.add(base)
            for suf2 in ("kan", "an", "i"):  # -kannya, -annya
                if base.endswith(suf2) and len(base) - len(suf2) >= _MIN_STEM:
                    stems.add(base[: -len(suf2)])
    for stem in list(stems):
        for pre, repl in _PREFIXES:
            if stem.startswith(pre) and len(stem) - len(pre) >= _MIN_STEM:
                stems.add(repl + stem[len(pre):])
    stems.discard(token)
    return (token, *sorted(stems))


class LexiconIndex:
    """Finds where each lexicon's terms occur in a token list.

    Terms are folded like the text. A single-word term also matches affixed forms (``kafir`` finds
    ``dikafirkan``) unless it is written ``=term`` or is three letters or fewer. ``re:`` terms are regular
    expressions over the space-joined tokens, for phrase families the plain lists cannot express.
    """

    def __init__(self, lexicons: Mapping[str, Sequence[str]], folder: Folder) -> None:
        self._exact: dict[str, set[str]] = {}
        self._stemmed: dict[str, set[str]] = {}
        self._phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._regexes: list[tuple[re.Pattern[str], str]] = []
        for name, terms in lexicons.items():
            for term in terms:
                if term.startswith("re:"):
                    self._regexes.append((re.compile(term[3:]), name))
                    continue
                exact = term.startswith("=")
                folded = folder.fold_term(term.lstrip("="))
                if not folded:
                    continue
                if len(folded) > 1:
                    self._phrases.setdefault(folded[0], []).append((folded, name))
                elif exact or len(folded[0]) <= 3:
                    self._exact.setdefault(folded[0], set()).add(name)
                else:
                    self._stemmed.setdefault(folded[0], set()).add(name)

    def positions(self, tokens: Sequence[str], token_text: str) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for i, tok in enumerate(tokens):
            names: set[str] = set(self._exact.get(tok, ()))
            for stem in _stems(tok):
                names.update(self._stemmed.get(stem, ()))
            for phrase, name in self._phrases.get(tok, ()):
                if tuple(tokens[i : i + len(phrase)]) == phrase:
                    names.add(name)
            for name in names:
                found.setdefault(name, []).append(i)
        for pattern, name in self._regexes:
            for m in pattern.finditer(token_text):
                # A phrase sits at its first and at its last word, so "islam dilarang" is next to "islam".
                first = max(token_text.count(" ", 0, m.start()) - 1, 0)
                last = max(token_text.count(" ", 0, m.start() + len(m.group(0).rstrip())) - 1, first)
                found.setdefault(name, []).extend((first, last) if last != first else (first,))
        return found


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\s*[\n|]+\s*")


def inner_text(cased: str, stage: str) -> str:
    """The part of a text that is someone else's document rather than the speaker's own ask.

    A passage is all document. In a request (or a history turn) that pastes a document, the user's ask is
    the question sentence at either end (or both ends when neither is a question); the rest is the
    pasted text, where an instruction addressed to the assistant is an injection, not the user's wish.
    The ask is the run of sentences at one end holding a question (``?`` or ``Q:``) in its last two
    sentences (or first two); with no question at either end, the first and last sentences are kept out.
    An ask marked ``Q:`` at the start wins over an unmarked question at the end (that one is pasted text).
    """
    if stage == "answer":
        return ""
    sentences = [s for s in _SENTENCE_SPLIT.split(cased) if s.strip()]
    if stage == "passage":
        return "\n".join(sentences).casefold()
    if len(sentences) < 3 or len(cased) < 160:
        return ""

    def is_marked(s: str) -> bool:
        return s.strip().casefold().startswith(("q:", "question:", "pertanyaan:"))

    def is_ask(s: str) -> bool:
        return "?" in s or is_marked(s)

    # An ask marked as such ("Q: ...") at the start wins over a bare question at the end, which may
    # well be part of the pasted text.
    marked_first = is_marked(sentences[0]) and not any(is_marked(s) for s in sentences[-2:])
    if not marked_first and any(is_ask(s) for s in sentences[-2:]):
        cut = len(sentences) - 2 if is_ask(sentences[-2]) else len(sentences) - 1
        body = sentences[:cut]
        if body and body[0].strip().endswith(":"):  # "Baca email ini:" introduces the paste
            body = body[1:]
    elif any(is_ask(s) for s in sentences[:2]):
        body = sentences[2:] if is_ask(sentences[1]) else sentences[1:]
    else:
        body = sentences[1:-1]
    return "\n".join(body).casefold()


@dataclass(frozen=True, slots=True)
class Finding:
    category: str
    rule: str
    score: float
    rules: tuple[str, ...]


class RuleEngine:
    def __init__(self, config: PolicyConfig) -> None:
        self.config = config
        self.index = LexiconIndex(config.lexicons, config.folder)

    def scan(self, text: str, stage: str, *, categories: Iterable[str] | None = None) -> Finding | None:
        """The first category (in policy-file order) whose rules block ``text`` at ``stage``, or None."""
        norm = normalize(text, self.config.folder)
        wanted = set(categories) if categories is not None else None
        state = _ScanState(self, norm, stage)
        for cat in self.config.categories:
            if stage not in cat.stages or (wanted is not None and cat.name not in wanted):
                continue
            finding = state.score(cat)
            if finding is not None:
                return finding
        return None


def _enough(rule: Rule, text: str) -> bool:
    assert rule.regex is not None
    if rule.min_count == 1:
        return rule.regex.search(text) is not None
    count = 0
    for _ in rule.regex.finditer(text):
        count += 1
        if count >= rule.min_count:
            return True
    return False


class _ScanState:
    """Per-text lazy views, so a short benign question pays only for the rules it reaches."""

    def __init__(self, engine: RuleEngine, norm: NormalizedText, stage: str) -> None:
        self.engine, self.norm, self.stage = engine, norm, stage
        self._positions: dict[str, list[int]] | None = None
        self._inner: str | None = None
        self._suppress: list[tuple[str, ...]] | None = None

    def positions(self) -> dict[str, list[int]]:
        if self._positions is None:
            self._positions = self.engine.index.positions(self.norm.tokens, self.norm.token_text)
        return self._positions

    def inner(self) -> str:
        if self._inner is None:
            self._inner = inner_text(self.norm.cased, self.stage)
        return self._inner

    def suppressed(self, rule_id: str) -> bool:
        if self._suppress is None:
            active: list[tuple[str, ...]] = []
            for allow in self.engine.config.allow_rules:
                if self.stage not in allow.stages:
                    continue
                hit = bool(allow.regex.search(self.norm.plain)) if allow.regex is not None else any(
                    name in self.positions() for name in allow.lexicons
                )
                if hit:
                    active.append(allow.suppresses)
            self._suppress = active
        return any(fnmatch.fnmatchcase(rule_id, pat) for pats in self._suppress for pat in pats)

    def matches(self, rule: Rule) -> bool:
        if rule.regex is not None:
            if rule.view == "plain":
                texts: tuple[str, ...] = (self.norm.plain, self.norm.folded)
            elif rule.view == "cased":
                texts = (self.norm.cased,)
            else:
                texts = (self.inner(),)
            return any(text and _enough(rule, text) for text in texts)
        pos = self.positions()
        if rule.near is None:
            return any(name in pos for name in rule.lexicons)
        a, b = pos.get(rule.near[0]), pos.get(rule.near[1])
        if not a or not b:
            return False
        return any(0 < abs(i - j) <= rule.window for i in a for j in b)

    def score(self, cat: Category) -> Finding | None:
        total, hits = 0.0, []
        for rule in cat.rules:
            if rule.stages is not None and self.stage not in rule.stages:
                continue
            if not self.matches(rule) or self.suppressed(rule.id):
                continue
            total += rule.weight
            hits.append(rule)
            if total >= cat.threshold:
                top = max(hits, key=lambda r: r.weight)
                return Finding(cat.name, top.id, total, tuple(r.id for r in hits))
        return None


# --- sourced-only patterns (personal data, links): allowed only when a cited passage has them too ---

_DIGIT_RUN = re.compile(r"\d[\d .\-]*\d")


def canonical(kind: str, value: str) -> str:
    low = value.casefold()
    if kind in ("digits", "phone"):
        digits = re.sub(r"\D", "", value)
        if kind == "phone" and digits.startswith("62"):
            digits = "0" + digits[2:]
        return digits
    if kind == "url":
        low = re.sub(r"^[a-z]+://", "", low)
        return re.sub(r"^www\.", "", low).rstrip("/.")
    if kind == "text":
        return re.sub(r"[^0-9a-z]", "", low)
    return low.strip()


class SourcedIndex:
    """What the cited passages contain, in the canonical forms :func:`canonical` produces."""

    def __init__(self, patterns: Sequence[SourcedPattern], passages: Sequence[str]) -> None:
        joined = "\n".join(clean(p) for p in passages)
        self._forms = {canonical(p.kind, m.group(0)) for p in patterns for m in p.regex.finditer(joined)}
        self._digit_runs = [canonical("digits", m.group(0)) for m in _DIGIT_RUN.finditer(joined)]
        self._phone_runs = [canonical("phone", m.group(0)) for m in _DIGIT_RUN.finditer(joined)]
        low = joined.casefold()
        self._text = re.sub(r"[^0-9a-z]", "", low)
        self._low = re.sub(r"[a-z]+://(www\.)?", "", low)

    def contains(self, kind: str, form: str) -> bool:
        if form in self._forms:
            return True
        if kind == "digits":
            return any(form in run for run in self._digit_runs)
        if kind == "phone":
            return any(form in run for run in self._phone_runs)
        if kind == "text":
            return form in self._text
        return form in self._low


def _nik_plausible(digits: str) -> bool:
    # NIK: province code 11-94, then regency/district, then birth date (day + 40 for women), month.
    if len(digits) != 16:
        return False
    province, day, month = int(digits[:2]), int(digits[6:8]), int(digits[8:10])
    return 11 <= province <= 94 and (1 <= day <= 31 or 41 <= day <= 71) and 1 <= month <= 12


def unsourced(
    patterns: Sequence[SourcedPattern], answer: str, passages: Sequence[str]
) -> SourcedPattern | None:
    """The first sourced-only pattern the answer uses with a value no passage contains."""
    text = clean(answer)
    index: SourcedIndex | None = None
    for pat in patterns:
        for m in pat.regex.finditer(text):
            form = canonical(pat.kind, m.group(0))
            if pat.kind == "digits" and len(form) == 16 and not _nik_plausible(form):
                continue
            if index is None:
                index = SourcedIndex(patterns, passages)
            if not index.contains(pat.kind, form):
                return pat
    return None
