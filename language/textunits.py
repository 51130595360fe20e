"""Words, stem keys and sentences of a text, gathered in a cached ``TextView`` with each figure's regions.

A word's keys are its lower-case form and its Indonesian stem, plus the stems of its translations when it is
an English government term (language.lexicon.BILINGUAL). PyStemmer's Indonesian algorithm strips "peN-"/"meN-"
without restoring the assimilated consonant ("penerimaan" → "erima", "diterima" → "terima"), so a stem that
starts with a vowel also gets the candidates "t…", "k…", "p…", "r…", "s…".

Where each figure's entity is written (its neighbourhood and label) is worked out in language.regions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import Stemmer

from language.bilingual import GENERAL_TERMS, GENERAL_WORDS, TERMS, find_phrases
from language.lexicon import (
    ACRONYMS,
    BILINGUAL,
    CONTRASTS,
    CURRENCY_SUFFIX,
    MONTHS,
    PERCENT_WORDS,
    SCALE_WORDS,
    STOPWORDS,
    SYNONYMS,
)
from language.numbers import PERIOD_KINDS, Figure, ParsedText, parse_text, parse_uncached
from language.references import Reference
from language.regions import figure_regions
from language.spelled import VOCAB as NUMBER_WORDS

_WORD_RE = re.compile(r"[A-Za-zÀ-ÿ]+(?:['’-][A-Za-zÀ-ÿ]+)*")
_ID_STEMMER = Stemmer.Stemmer("indonesian")
_EN_STEMMER = Stemmer.Stemmer("english")
_VOWELS = frozenset("aeiou")
NON_CONTENT = frozenset(
    {
        *STOPWORDS,
        *NUMBER_WORDS,
        *SCALE_WORDS,
        *CURRENCY_SUFFIX,
        *PERCENT_WORDS,
        *MONTHS,
        "rp",
        "idr",
        "usd",
        "us",
        "per",
        "sebesar",
        "senilai",
        "sebanyak",
        "sejumlah",
        "tahun",
    }
)
# Abbreviations whose full stop ends no sentence ("Rp.", "No.", "Kab.", "s.d.", "e.g.").
_ABBREVIATIONS = frozenset(
    "rp no nomor s.d d dll dsb dst jo tgl hlm kab kec prov dr ir h st mr mrs prof vs etc e.g i.e ta pt "
    "cv tbk u.s us".split()
)
_LAST_WORD_RE = re.compile(r"(\S+)$")
_ROMAN_RE = re.compile(r"[ivxl]+")
# A sentence ends at "." "!" "?" before a capital, digit or opening mark, or at line breaks. One character
# class opens the pattern so the scan skips ordinary letters in C (as "[.!?](?=…)|\n+" it does not).
_BOUNDARY_RE = re.compile(r"[.!?\n](?:(?<=[.!?])(?=\s+[\"“(A-Z0-9])|(?<=\n)\n*)")


def _stem_keys(low: str, english: bool) -> set[str]:
    keys = {low}
    for part in low.split("-") if "-" in low else (low,):
        stem = _ID_STEMMER.stemWord(part)
        keys.add(stem)
        if stem and stem[0] in _VOWELS and len(stem) >= 3:
            keys.update(prefix + stem for prefix in "tkprs")
        if english:
            keys.add(_EN_STEMMER.stemWord(part))
    return keys


def _content(phrase: str) -> tuple[str, ...]:
    return tuple(word for word in phrase.split() if word not in STOPWORDS)


# The bilingual lexicon (language.bilingual) joins the word tables: its abbreviations ground their expansions,
# its one-word English names translate like BILINGUAL's, its English phrases are matched whole (_PHRASES).
_ACRONYMS = dict(ACRONYMS)
_TRANSLATIONS: dict[str, tuple[str, ...]] = dict(BILINGUAL)
_PHRASES: dict[str, tuple[tuple[str, ...], ...]] = {}
for _term in TERMS:
    if _term.abbreviation and _term.abbreviation.lower() not in _ACRONYMS:
        _ACRONYMS[_term.abbreviation.lower()] = _content(_term.indonesian)
    for _english in _term.english:
        if " " in _english:
            _PHRASES[_english] = (*_PHRASES.get(_english, ()), _content(_term.indonesian))
        else:
            _TRANSLATIONS[_english] = tuple(
                dict.fromkeys(_TRANSLATIONS.get(_english, ()) + _content(_term.indonesian))
            )


def _term_heads() -> frozenset[str]:
    """The head word of every Indonesian lexicon term (Indonesian puts it first: "dana" of "dana alokasi
    umum", "bea" of "bea masuk"). Modifiers are told apart by the contrast and other-label checks."""
    heads = {term.indonesian.split()[0] for term in TERMS if term not in GENERAL_TERMS}
    heads.update(words[0] for words in BILINGUAL.values() if words)
    heads.update(words[0] for words in ACRONYMS.values() if words)
    return frozenset(heads - STOPWORDS)


_TERM_HEADS = _term_heads()


def names_term(token: Token) -> bool:
    """Does the word name a budget, tax or legal term ("kesehatan", "cukai", "DAU", an English term the
    lexicon translates)? Such a word must be found in the passage: it is never a mere restatement. Surface
    forms only: "dibagi" is not "bagi", "terutang" is not "utang"."""
    low = token.low
    if " " in low or low in _ACRONYMS:
        return True
    if low in SYNONYMS or low in GENERAL_WORDS:
        return False  # a general word ("termasuk", "dikenakan", "dibagi") with restatements of its own
    return low in _TERM_HEADS or (low in _TRANSLATIONS and low not in CONTRASTS)


@lru_cache(maxsize=65536)
def word_keys(low: str, english: bool = False) -> frozenset[str]:
    """Matching keys for one lower-case word."""
    keys = _stem_keys(low, english)
    for word in _TRANSLATIONS.get(low, ()):
        keys |= _stem_keys(word, False)
    for word in SYNONYMS.get(low, ()):
        keys |= _stem_keys(word, False)
    return frozenset(keys)


@lru_cache(maxsize=4096)
def acronym_keys(low: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(_stem_keys(word, False)) for word in _ACRONYMS.get(low, ()))


@lru_cache(maxsize=4096)
def phrase_keys(low: str) -> tuple[tuple[frozenset[str], ...], ...]:
    """For an English lexicon phrase ("import duty"): the keys of each word of each Indonesian equivalent."""
    return tuple(
        tuple(frozenset(_stem_keys(word, False)) for word in words) for words in _PHRASES.get(low, ())
    )


@lru_cache(maxsize=8192)
def contrast_keys(low: str, english: bool = False) -> frozenset[str]:
    """Keys of the words naming the other member of a pair with ``low`` (language.lexicon.CONTRASTS)."""
    keys: set[str] = set()
    for word in CONTRASTS.get(low, ()):
        keys |= word_keys(word, english)
    return frozenset(keys)


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Token(NamedTuple):
    start: int
    end: int
    low: str
    keys: frozenset[str]
    capital: bool  # written with a capital (a name is likely): it must be grounded, never tolerated


def is_grounded(token: Token, keys: frozenset[str] | set[str]) -> bool:
    if not token.keys.isdisjoint(keys):
        return True
    expansion = acronym_keys(token.low)
    if expansion:
        return all(not part.isdisjoint(keys) for part in expansion)
    if " " in token.low:  # an English lexicon phrase: grounded by every word of one Indonesian equivalent
        return any(all(not part.isdisjoint(keys) for part in words) for words in phrase_keys(token.low))
    return False


@dataclass
class TextView:
    """A parsed text: its figures, words and structure, with lazily computed neighbourhoods."""

    parsed: ParsedText
    tokens: tuple[Token, ...]
    starts: list[int]
    all_keys: frozenset[str]
    sentences: tuple[tuple[int, int], ...]
    quantities: tuple[int, ...]  # indexes into figures of the non-period figures
    regions: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    labels: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # own label, no topic
    topic: tuple[tuple[int, int], ...] = ()
    in_table: frozenset[int] = frozenset()  # figures read from a table row
    anaphors: frozenset[int] = frozenset()  # starts of "ayat (1)" pointers resolved within the text
    dating: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # see Regions.dating
    roles: dict[int, str] = field(default_factory=dict)  # "from" / "to" of a change ("dari A menjadi B")
    _key_cache: dict[tuple[tuple[int, int], ...], frozenset[str]] = field(default_factory=dict)
    memo: dict[tuple[str, object], object] = field(default_factory=dict)  # results of callers, per figure
    content_flags: tuple[bool, ...] | None = None  # which tokens are content words (set on first use)
    designations: frozenset[int] = frozenset()  # measures that are part of a name (language.regions)

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def figures(self) -> tuple[Figure, ...]:
        return self.parsed.figures

    def tokens_in(self, start: int, end: int) -> tuple[Token, ...]:
        return self.tokens[bisect.bisect_left(self.starts, start) : bisect.bisect_left(self.starts, end)]

    def keys_in(self, ranges: tuple[tuple[int, int], ...]) -> frozenset[str]:
        cached = self._key_cache.get(ranges)
        if cached is None:
            keys: set[str] = set()
            for start, end in ranges:
                for token in self.tokens_in(start, end):
                    keys |= token.keys
                    for part in acronym_keys(token.low):
                        keys |= part
            cached = self._key_cache[ranges] = frozenset(keys)
        return cached

    def sentence_at(self, pos: int) -> tuple[int, int]:
        index = bisect.bisect_right([s for s, _ in self.sentences], pos) - 1
        return self.sentences[max(index, 0)]

    def neighbourhood(self, figure_index: int) -> tuple[tuple[int, int], ...]:
        """Where the figure's entity may be written: its label, lead-in, linked words, and the topic."""
        own = self.regions.get(figure_index, ())
        return own + self.topic if own else ()

    def dating_ranges(self, figure_index: int) -> tuple[tuple[int, int], ...]:
        """Where the figure's periods are read: its regions, less what dates a neighbour ("dari A pada 2022
        menjadi B": 2022 dates A)."""
        dated = self.dating.get(figure_index)
        return self.regions.get(figure_index, ()) if dated is None else dated

    def periods_in(self, ranges: tuple[tuple[int, int], ...]) -> list[Figure]:
        return [
            fig
            for fig in self.figures
            if fig.kind in PERIOD_KINDS and any(fig.start < end and start < fig.end for start, end in ranges)
        ]


# What a written word yields apart from where it stands: one part per word it counts as, each (offset,
# length, lower-case form, keys, capital, capital only if no sentence opens there). A text's words repeat
# across claims, so this is worked out once per distinct written word.
_Part = tuple[int, int, str, frozenset[str], bool, bool]


@lru_cache(maxsize=65536)
def _word_parts(word: str, english: bool) -> tuple[_Part, ...]:
    low = word.lower()
    parts = low.split("-")
    if (
        len(parts) >= 2
        and all(parts)
        and parts[0] not in parts[1]
        and parts[1] not in parts[0]
        and parts[0] != "non"  # "non-tax" is one word: a negated compound (judge.polarity)
    ):
        # "Fisik-TPG", "Kantor-Alat" are two words; "undang-undang", "sebesar-besarnya" are one
        out = []
        offset = 0
        for part, raw in zip(parts, word.split("-"), strict=True):
            out.append((offset, len(part), part, word_keys(part, english), raw[:1].isupper(), False))
            offset += len(part) + 1
        return tuple(out)
    upper = word[0].isupper()
    # a capital opening the text or a sentence marks the sentence, not a name ("Porsi kuota …"); an
    # all-capital word ("APBN") is a name wherever it stands
    return ((0, len(word), low, word_keys(low, english), upper, upper and not word[1:2].isupper()),)


# tuple.__new__ builds a Token in C, without the Python-level __new__ a NamedTuple call runs (a text makes one
# per word: about a twentieth of a claim's parse).
_new_token = tuple.__new__


def _tokenize(text: str, english: bool, references: tuple[Reference, ...]) -> tuple[Token, ...]:
    """Words, plus one pseudo-word per reference ("§huruf=a"): which clause a figure sits in is part of
    its entity ("ayat (1) huruf a" versus "huruf b")."""
    tokens = []
    for match in _WORD_RE.finditer(text):
        start = match.start()
        for offset, length, low, keys, capital, sentence_test in _word_parts(match.group(), english):
            if sentence_test:
                capital = not _opens_sentence(text, start)
            tokens.append(_new_token(Token, (start + offset, start + offset + length, low, keys, capital)))
    if english:
        tokens = _join_phrases(tokens)
    for ref in references:
        if ref.kind != "marker":
            name = f"§{ref.kind}={ref.value}"
            tokens.append(Token(ref.start, ref.end, name, frozenset({name}), False))
    if references or english:
        tokens.sort(key=lambda token: token.start)  # words come in order; references and phrases may not
    return tuple(tokens)


def _opens_sentence(text: str, start: int) -> bool:
    position = start - 1
    while position >= 0 and text[position] in ' \t"“(':
        position -= 1
    return position < 0 or text[position] in ".!?:;)\n"


def _join_phrases(tokens: list[Token]) -> list[Token]:
    """English lexicon phrases ("general allocation fund") become one token, grounded by its Indonesian
    equivalent as a whole (language.bilingual): "import duty" is "bea masuk", never "bea keluar"."""
    found = [m for m in find_phrases([t.low for t in tokens]) if m.language == "en" and m.end - m.start > 1]
    if not found:
        return tokens
    out: list[Token] = []
    position = 0
    for match in found:
        out.extend(tokens[position : match.start])
        words = tokens[match.start : match.end]
        low = " ".join(t.low for t in words)
        out.append(Token(words[0].start, words[-1].end, low, frozenset({low}), any(t.capital for t in words)))
        position = match.end
    out.extend(tokens[position:])
    return out


def _sentences(text: str, figures: Sequence[Figure] = ()) -> tuple[tuple[int, int], ...]:
    spans = []
    start = 0
    # an amount the scanner split ("Rp 2 . 640.519 …", read whole by language.ocr_runs) holds no sentence end
    joined = [(f.start, f.end) for f in figures if ". " in f.text or "\n" in f.text]
    for match in _BOUNDARY_RE.finditer(text):
        if joined and any(s < match.start() < e for s, e in joined):
            continue
        if match.group().startswith(".") and text[match.start() - 1 : match.start()] in (".", "…"):
            continue  # dotted leaders and ellipses ("Bumi ....... Rp5.000.000") do not end a sentence
        if match.group().startswith("."):
            before = _LAST_WORD_RE.search(text, start, match.start())
            word = before.group(1).lower().lstrip("(") if before else ""
            if (
                len(word) <= 1
                or word in _ABBREVIATIONS
                or (word.isdigit() and len(word) <= 2)
                or _ROMAN_RE.fullmatch(word)
            ):
                continue
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return tuple(spans) or ((0, 0),)


@lru_cache(maxsize=4096)
def build_view(text: str, lang: str | None = None) -> TextView:
    """The parsed view of a text; cached, so a passage cited by many claims is parsed once."""
    return fresh_view(text, lang, cached=True)


def fresh_view(text: str, lang: str | None = None, *, cached: bool = False) -> TextView:
    """The parsed view of a text, built anew and kept nowhere: for claims, each checked once or twice.
    Keeping them in the caches would only fill them, and every object kept alive makes Python's cyclic
    garbage collector's full passes longer."""
    parsed = parse_text(text, lang) if cached else parse_uncached(text, lang)
    tokens = _tokenize(parsed.text, parsed.lang == "en", parsed.references)
    all_keys: set[str] = set()
    for token in tokens:
        if token.low in NUMBER_WORDS:
            continue  # "dua" in "dua belas juta" must not ground "kedua"
        all_keys |= token.keys
        for part in acronym_keys(token.low):
            all_keys |= part
    sentences = _sentences(parsed.text, parsed.figures)
    quantities = tuple(i for i, fig in enumerate(parsed.figures) if fig.kind not in PERIOD_KINDS)
    found = figure_regions(parsed.text, parsed.figures, quantities, sentences, parsed.references)
    starts = [t.start for t in tokens]
    return TextView(
        parsed,
        tokens,
        starts,
        frozenset(all_keys),
        sentences,
        quantities,
        found.regions,
        found.labels,
        found.topic,
        found.in_table,
        found.anaphors,
        found.dating or {},
        found.roles or {},
        designations=found.designations,
    )


def content_tokens(view: TextView, start: int = 0, end: int | None = None) -> list[Token]:
    """Words that carry meaning (not function words, figures, references, markers)."""
    content = view.content_flags
    if content is None:
        spans = sorted(
            [(f.start, f.end) for f in view.figures] + [(r.start, r.end) for r in view.parsed.references]
        )
        span_starts = [s for s, _ in spans]
        reach = []  # reach[i]: the furthest end of spans[: i + 1] (references may nest: "ayat (1)")
        furthest = -1
        for _, end_ in spans:
            furthest = max(furthest, end_)
            reach.append(furthest)
        flags = []
        for token in view.tokens:
            low = token.low
            if low in NON_CONTENT or len(low) < 2:
                flags.append(False)
            elif low[0] == "§":
                flags.append(True)
            else:
                index = bisect.bisect_right(span_starts, token.start) - 1
                flags.append(index < 0 or reach[index] <= token.start)  # inside no figure or reference
        content = view.content_flags = tuple(flags)
    first = bisect.bisect_left(view.starts, start)
    last = len(view.tokens) if end is None else bisect.bisect_left(view.starts, end)
    return [token for token, keep in zip(view.tokens[first:last], content[first:last], strict=True) if keep]
