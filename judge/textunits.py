"""Words, stem keys, sentences, table cells, and each figure's neighbourhood in a text.

A word's keys are its lower-case form and its Indonesian stem, plus the stems of its translations when it is
an English government term (judge.lexicon.BILINGUAL). PyStemmer's Indonesian algorithm strips "peN-"/"meN-"
without restoring the assimilated consonant ("penerimaan" → "erima", "diterima" → "terima"), so a stem that
starts with a vowel also gets the candidates "t…", "k…", "p…", "r…", "s…".

A figure's neighbourhood is where its entity is written: in a table row, the row's other cells and the column
header; in prose, the words since the previous figure (its label), the sentence's lead-in (up to ":" or
"terdiri atas"), and the words after it when they start with a linking word ("untuk", "bagi", "for").
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

import Stemmer

from judge.lexicon import (
    ACRONYMS,
    BILINGUAL,
    CURRENCY_SUFFIX,
    MONTHS,
    PERCENT_WORDS,
    SCALE_WORDS,
    STOPWORDS,
)
from judge.numbers import PERIOD_KINDS, Figure, ParsedText, parse_text
from judge.references import Reference
from judge.spelled import VOCAB as NUMBER_WORDS

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
_LEAD_IN_RE = re.compile(
    r":|\b(?:terdiri\s+(?:atas|dari)|meliputi|mencakup|sebagai\s+berikut|consists?\s+of"
    r"|comprising|as\s+follows)\b",
    re.IGNORECASE,
)
_LINK_RE = re.compile(
    r"\s*(?:\)\s*)?(?:untuk|bagi|kepada|pada|dari|yang|sebagai|di|for|to|of|in|on|by)\b", re.IGNORECASE
)
# A sentence-initial scope ("Pada Dinas Pendidikan, …"), read as the topic of every figure after it.
_SCOPE_RE = re.compile(
    r"\s*(?:\(\d+\)\s*)?(?:pada|untuk|di|dalam|menurut|berdasarkan|sesuai|in|for|at|under)\b"
    r"[^,.;:\n]{0,80},",
    re.IGNORECASE,
)
_TOPIC_REACH = 200
# Where a list's next item starts: the words after the last figure of a sentence stop there.
_ITEM_BREAK_RE = re.compile(r"[;:]|\s[-–•]\s|\s[a-z]\.\s|\s\(\d{1,2}\)\s|\s\d{1,2}\.\s")
# The words right after a count name what is counted ("37 obyek wisata", "8% wilayah Indonesia").
_HEAD_RE = re.compile(
    r"\s*((?:(?!(?:dan|atau|serta|yang|dengan|untuk|bagi|pada|dari|di|ke|dalam|sebagai|and|or|"
    r"which|that|with|for|of|in|to)\b)[A-Za-z][\w-]*\s*){1,4})",
    re.IGNORECASE,
)
_CLAUSE_END_RE = re.compile(r"[,;.](?:\s|$)|\s(?:dan|serta|and)\s")
_ABBREVIATIONS = frozenset(
    {
        "rp",
        "no",
        "nomor",
        "s.d",
        "d",
        "dll",
        "dsb",
        "dst",
        "jo",
        "tgl",
        "hlm",
        "kab",
        "kec",
        "prov",
        "dr",
        "ir",
        "h",
        "st",
        "mr",
        "mrs",
        "dr",
        "prof",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "ta",
        "pt",
        "cv",
        "tbk",
        "u.s",
        "us",
    }
)
_BOUNDARY_RE = re.compile(r"[.!?](?=\s+[\"“(A-Z0-9])|\n+")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}")
# Between a figure and its spelled twin: "(", after OCR leftovers of the cents (", 00", ",-").
TWIN_GAP_RE = re.compile(r"\s*(?:,\s*[0O]{2}|,\s*-)?\s*\(\s*")


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


@lru_cache(maxsize=65536)
def word_keys(low: str, english: bool = False) -> frozenset[str]:
    """Matching keys for one lower-case word."""
    keys = _stem_keys(low, english)
    for word in BILINGUAL.get(low, ()):
        keys |= _stem_keys(word, False)
    return frozenset(keys)


@lru_cache(maxsize=4096)
def acronym_keys(low: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(_stem_keys(word, False)) for word in ACRONYMS.get(low, ()))


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    low: str
    keys: frozenset[str]
    capital: bool  # written with a capital (a name is likely): it must be grounded, never tolerated


def is_grounded(token: Token, keys: frozenset[str] | set[str]) -> bool:
    if not token.keys.isdisjoint(keys):
        return True
    expansion = acronym_keys(token.low)
    return bool(expansion) and all(not part.isdisjoint(keys) for part in expansion)


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
    _key_cache: dict[tuple[tuple[int, int], ...], frozenset[str]] = field(default_factory=dict)
    memo: dict[tuple[str, int], object] = field(default_factory=dict)  # per-figure results of callers

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

    def periods_in(self, ranges: tuple[tuple[int, int], ...]) -> list[Figure]:
        return [
            fig
            for fig in self.figures
            if fig.kind in PERIOD_KINDS and any(fig.start < end and start < fig.end for start, end in ranges)
        ]


def _tokenize(text: str, english: bool, references: tuple[Reference, ...]) -> tuple[Token, ...]:
    """Words, plus one pseudo-word per reference ("§huruf=a"): which clause a figure sits in is part of
    its entity ("ayat (1) huruf a" versus "huruf b")."""
    tokens = []
    for match in _WORD_RE.finditer(text):
        word = match.group()
        low = word.lower()
        parts = low.split("-")
        if (
            len(parts) == 2
            and parts[0]
            and parts[1]
            and parts[0] not in parts[1]
            and parts[1] not in parts[0]
        ):
            # "Fisik-TPG", "Kantor-Alat" are two words; "undang-undang", "sebesar-besarnya" are one
            start = match.start()
            for part, raw in zip(parts, word.split("-"), strict=True):
                tokens.append(
                    Token(start, start + len(part), part, word_keys(part, english), raw[:1].isupper())
                )
                start += len(part) + 1
            continue
        tokens.append(Token(match.start(), match.end(), low, word_keys(low, english), word[0].isupper()))
    for ref in references:
        if ref.kind != "marker":
            name = f"§{ref.kind}={ref.value}"
            tokens.append(Token(ref.start, ref.end, name, frozenset({name}), False))
    tokens.sort(key=lambda token: token.start)
    return tuple(tokens)


def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    spans = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        if match.group().startswith(".") and text[match.start() - 1 : match.start()] in (".", "…"):
            continue  # dotted leaders and ellipses ("Bumi ....... Rp5.000.000") do not end a sentence
        if match.group().startswith("."):
            before = re.search(r"(\S+)$", text[start : match.start()])
            word = before.group(1).lower().lstrip("(") if before else ""
            if (
                len(word) <= 1
                or word in _ABBREVIATIONS
                or (word.isdigit() and len(word) <= 2)
                or re.fullmatch(r"[ivxl]+", word)
            ):
                continue
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return tuple(spans) or ((0, 0),)


def _table_cells(line_start: int, line: str) -> list[tuple[int, int]]:
    cells = []
    offset = 0
    for part in line.split("|"):
        stripped = part.strip()
        if stripped:
            begin = line.index(stripped, offset)
            cells.append((line_start + begin, line_start + begin + len(stripped)))
        offset += len(part) + 1
    return cells


def _table_regions(
    text: str,
    figures: tuple[Figure, ...],
    regions: dict[int, tuple[tuple[int, int], ...]],
    labels: dict[int, tuple[tuple[int, int], ...]],
) -> set[int]:
    """Neighbourhoods of figures inside Markdown-style table rows; returns the figure indexes handled."""
    handled: set[int] = set()
    if "|" not in text:
        return handled
    header: list[tuple[int, int]] | None = None
    lead_in: tuple[int, int] | None = None
    position = 0
    previous_line: tuple[int, int] | None = None
    for line in text.split("\n"):
        line_start, position = position, position + len(line) + 1
        if line.count("|") < 2:
            header = None
            if line.strip():
                previous_line = (line_start, line_start + len(line))
            continue
        if _TABLE_SEPARATOR_RE.match(line):
            continue
        cells = _table_cells(line_start, line)
        if header is None:
            header, lead_in = cells, previous_line
            continue
        figure_cells = {}
        for index, fig in enumerate(figures):
            if line_start <= fig.start < line_start + len(line) and fig.kind not in PERIOD_KINDS:
                column = next((c for c, (s, e) in enumerate(cells) if s <= fig.start < e), None)
                if column is not None:
                    figure_cells[index] = column
        used_columns = set(figure_cells.values())
        row_labels = tuple(cell for c, cell in enumerate(cells) if c not in used_columns)
        for index, column in figure_cells.items():
            extra = (header[column],) if column < len(header) else ()
            regions[index] = row_labels + extra + ((lead_in,) if lead_in else ())
            labels[index] = row_labels
            handled.add(index)
    return handled


def _twins(text: str, figures: tuple[Figure, ...]) -> dict[int, int]:
    """Spelled twins in parentheses right after a digit figure: twin index → digit figure index."""
    twins = {}
    for index in range(1, len(figures)):
        fig, before = figures[index], figures[index - 1]
        if fig.spelled and not before.spelled and TWIN_GAP_RE.fullmatch(text[before.end : fig.start]):
            twins[index] = index - 1
    return twins


def _prose_regions(
    view_text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    sentences: tuple[tuple[int, int], ...],
    handled: set[int],
    twins: dict[int, int],
    regions: dict[int, tuple[tuple[int, int], ...]],
    labels: dict[int, tuple[tuple[int, int], ...]],
) -> None:
    sentence_starts = [s for s, _ in sentences]
    twin_of_digit = {digit: twin for twin, digit in twins.items()}
    ordered = [i for i in quantities if i not in handled and i not in twins]
    sentence_of = {
        i: sentences[max(bisect.bisect_right(sentence_starts, figures[i].start) - 1, 0)] for i in ordered
    }
    last_in_sentence = {sentence_of[i][0]: i for i in ordered}
    previous_end: dict[int, int] = {}
    for index in ordered:
        fig = figures[index]
        sentence = sentence_of[index]
        end = figures[twin_of_digit[index]].end if index in twin_of_digit else fig.end
        label_start = previous_end.get(sentence[0], sentence[0])
        if label_start == sentence[0]:
            scope = _SCOPE_RE.match(view_text, label_start)
            if scope and scope.end() <= fig.start:
                label_start = scope.end()  # "Pada Dinas X," is the topic, not this figure's label
        ranges = [(label_start, fig.start)]
        own = [(label_start, fig.start)]
        lead = _LEAD_IN_RE.search(view_text, sentence[0], fig.start)
        if lead and lead.start() < label_start:
            ranges.append((sentence[0], lead.end()))
        if _LINK_RE.match(view_text, end):
            clause_end = _CLAUSE_END_RE.search(view_text, end, sentence[1])
            own.append((end, clause_end.start() if clause_end else sentence[1]))
        elif fig.kind in ("count", "percent", "permille") and (
            head := _HEAD_RE.match(view_text, end, sentence[1])
        ):
            own.append((end, head.end(1)))
        if last_in_sentence[sentence[0]] == index:
            item_break = _ITEM_BREAK_RE.search(view_text, end, sentence[1])
            ranges.append((end, item_break.start() if item_break else max(end, sentence[1])))
        elif len(own) > 1:
            ranges.append(own[1])
        regions[index] = tuple(ranges)
        labels[index] = tuple(own)
        if index in twin_of_digit:
            regions[twin_of_digit[index]] = regions[index]
            labels[twin_of_digit[index]] = labels[index]
        previous_end[sentence[0]] = end


def _topic(
    text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    sentences: tuple[tuple[int, int], ...],
) -> tuple[tuple[int, int], ...]:
    """What the passage is about before its first figure: the text just before the sentence holding the
    first figure (a heading, a caption, the previous sentence) and that sentence's opening scope phrase."""
    if not quantities:
        return ()
    first = figures[quantities[0]].start
    start = next((s for s, e in sentences if s <= first < max(e, s + 1)), 0)
    ranges = []
    if start > 0:
        ranges.append((max(0, start - _TOPIC_REACH), start))
    scope = _SCOPE_RE.match(text, start)
    if scope and scope.end() <= first:
        ranges.append((start, scope.end()))
    return tuple(ranges)


@lru_cache(maxsize=4096)
def build_view(text: str, lang: str | None = None) -> TextView:
    """The parsed view of a text; cached, so a passage cited by many claims is parsed once."""
    parsed = parse_text(text, lang)
    tokens = _tokenize(parsed.text, parsed.lang == "en", parsed.references)
    all_keys: set[str] = set()
    for token in tokens:
        if token.low in NUMBER_WORDS:
            continue  # "dua" in "dua belas juta" must not ground "kedua"
        all_keys |= token.keys
        for part in acronym_keys(token.low):
            all_keys |= part
    sentences = _sentences(parsed.text)
    quantities = tuple(i for i, fig in enumerate(parsed.figures) if fig.kind not in PERIOD_KINDS)
    regions: dict[int, tuple[tuple[int, int], ...]] = {}
    labels: dict[int, tuple[tuple[int, int], ...]] = {}
    handled = _table_regions(parsed.text, parsed.figures, regions, labels)
    twins = _twins(parsed.text, parsed.figures)
    _prose_regions(parsed.text, parsed.figures, quantities, sentences, handled, twins, regions, labels)
    topic = _topic(parsed.text, parsed.figures, quantities, sentences)
    for twin, digit in twins.items():
        if digit in handled:
            regions[twin] = regions[digit]
            labels[twin] = labels[digit]
    return TextView(
        parsed,
        tokens,
        [t.start for t in tokens],
        frozenset(all_keys),
        sentences,
        quantities,
        regions,
        labels,
        topic,
        frozenset(handled),
    )


def content_tokens(view: TextView, start: int = 0, end: int | None = None) -> list[Token]:
    """Words that carry meaning (not function words, figures, references, markers)."""
    content = view.memo.get(("content", 0))
    if content is None:
        spans = [(f.start, f.end) for f in view.figures] + [(r.start, r.end) for r in view.parsed.references]
        flags = []
        for token in view.tokens:
            flags.append(
                token.low not in NON_CONTENT
                and len(token.low) >= 2
                and (token.low[0] == "§" or not any(s <= token.start < e for s, e in spans))
            )
        content = view.memo[("content", 0)] = tuple(flags)
    first = bisect.bisect_left(view.starts, start)
    last = len(view.tokens) if end is None else bisect.bisect_left(view.starts, end)
    return [token for token, keep in zip(view.tokens[first:last], content[first:last], strict=True) if keep]
