"""The embedded writer's reading: passages cut into verifiable units, each scored against the question.

A unit is a verbatim substring of its passage: a sentence, a list item (with the lead-in sentence that
introduces its list), a table row (with its table's header, found in the passage or its context), or one
line of a tool result. A line that starts with ``|`` is only ever a table row: without a header it is not a
unit at all, so no answer carries a pipe row as prose.

Scoring (:mod:`serve_app.agent.writers.scoring`) is lexical and deterministic
(:func:`serve_app.agent.query.analyse` says what is asked): the question's words, weighted by rarity among
the units, matched by Indonesian stem, as a long-enough substring (``kedudukan`` in ``berkedudukan``), as a
cognate (``prevalence`` ~ ``prevalensi``), through a small English→Indonesian lexicon or an acronym
(``APBA``); found in the unit itself (weight 1), in its list lead-in (0.8), in what surrounds its passage
(0.5: title, section, acronyms of the title) or in the sentence before it (0.25).
Then:

* the asked period: the nearest level that states years decides (the unit, its lead-in or table header,
  its section, its document's title). The asked year there raises the unit; the asked year only
  mentioned in passing in a document of another year (a 2024 budget citing the 2023 figure) lowers it;
  another year only puts it out, and so does stating no period and not the kind of figure asked for;
* the asked article (``Pasal 5 ayat (2)``), the document named after ``menurut``, and a figure of the kind
  asked for (a percentage, an amount of money, …) raise a unit; a statement of change (``naik``,
  ``dibandingkan``) when no change was asked lowers it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from language.lexicon import ACRONYMS
from serve_app.agent.query import (
    QUESTION_WORDS,
    Term,
    expected_figure,
    query_terms,
)
from serve_app.agent.text import amount_goes_on, period_years, stem, title_acronyms, words
from serve_app.agent.writers.furniture import furniture_free_parts
from serve_app.answer.compose import validate_segments
from serve_app.answer.segments import Passage, Segment

__all__ = [
    "QUESTION_WORDS",
    "Unit",
    "expected_figure",
    "extract_units",
    "query_terms",
    "split_units",
    "strip_pipes",
    "valid_text",
]

_ABBREVIATIONS = frozenset(
    "no nomor rp dll dsb dst tgl kab kec kel prov jl hlm ps jo ttg sdr yth tbk pt cv dr ir drs hj st vol "
    "art pp uu".split()
)
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'“])|(?<=;)\s+|(?<=:)\s+(?=(?:[a-z]|\d{1,2})[.)]\s|\(\d)")
LEADING_MARKER = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|(?:\d{1,3}|[a-zA-Z])[.)]\s+)+")
_ITEM_LINE = re.compile(r"^\s*(?:[-*+]\s+|(?:\d{1,3}|[a-zA-Z])[.)]\s+)")
_JOINERS = frozenset({"dan", "atau", "serta", "dan/atau", "and", "or"})
_TRAILING_JOINER = re.compile(r"[;,]?\s+(?:dan|atau|serta|dan/atau)$|;$")
_NEW_PROVISION = re.compile(r"^(?:\(\d+[a-z]?\)|Pasal\s+\d|Ayat\s+\(|BAB\s)", re.IGNORECASE)
_AYAT_START = re.compile(r"^\((\d+[a-z]?)\)")
_PASAL = re.compile(r"(?i)\bPasal\s+(\d+[A-Z]?)\b")
_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
MIN_UNIT_CHARS = 20
VERB_LIKE = re.compile(r"^(?:me|di|ber|ter|mem|men|meng|meny)[a-z]{4,}$")
_ACRONYM_SKIP = frozenset("dan atau serta di ke dari untuk yang dalam".split())
# "Tahun Anggaran 2024" dates a statement; its "anggaran" is no budget the question asks about.
_FISCAL_YEAR = re.compile(r"(?i)\b(?:tahun\s+anggaran|TA)\s+\d{4}")
CELL_STOPWORDS = frozenset("dan atau yang di ke dari untuk dengan per pada dalam oleh serta".split())


@dataclass(slots=True, eq=False)
class Bag:
    """The words of a text as the scorer matches them. A bag never changes once built, so bags are shared
    through :func:`_bag` (the same passages come back request after request) and each keeps the answers
    to the word lookups already made (``has`` scans every word for substrings and cognates)."""

    words: frozenset[str] = frozenset()
    stems: frozenset[str] = frozenset()
    initials: frozenset[str] = frozenset()  # "sekolah menengah atas" → "sma": what an acronym may spell
    _seen: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str, extra: Sequence[str] = (), *, expand: bool = False) -> Bag:
        return _bag(text, tuple(extra), expand)

    def has(self, raw: str, stemmed: str) -> bool:
        known = self._seen.get(raw)
        if known is None:
            known = self._seen[raw] = self._lookup(raw, stemmed)
        return known

    def _lookup(self, raw: str, stemmed: str) -> bool:
        if raw in self.words:
            return True
        if len(raw) <= 3:
            return False  # "iii" is no stem of "ii" (the stemmer cuts a final -i): short words match whole
        if stemmed in self.stems:
            return True
        if len(raw) >= 6 and any(raw in w for w in self.words if len(w) > len(raw)):
            return True
        return len(raw) >= 7 and any(_cognate(raw, w) for w in self.words)

    def has_term(self, term: Term) -> bool:
        if self.has(term.raw, term.stem):
            return True
        if term.acronym and term.raw in self.initials:
            return True
        return any(all(self.has(w, stem(w)) for w in alt) for alt in term.alts)


@functools.lru_cache(maxsize=32768)
def _bag(text: str, extra: tuple[str, ...], expand: bool) -> Bag:
    ws = [*words(text), *extra]
    if expand:  # a document about "APBA" is about anggaran … aceh (not every sentence naming it)
        ws += [e for w in ws if w in ACRONYMS for e in ACRONYMS[w]]
    letters = [w[0] for w in words(text) if not w[0].isdigit() and w not in _ACRONYM_SKIP]
    initials = {"".join(letters[i:j]) for i in range(len(letters)) for j in range(i + 2, i + 6)}
    return Bag(frozenset(ws), frozenset(stem(w) for w in ws), frozenset(initials))


def _cognate(a: str, b: str) -> bool:
    """``prevalence`` ~ ``prevalensi``: a long common start that is most of the shorter word."""
    if len(b) < 7 or a[:6] != b[:6]:
        return False
    common = 6
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return common >= 0.75 * min(len(a), len(b))


@dataclass(slots=True)
class Unit:
    key: str
    text: str
    kind: str  # sentence | row | tool
    order: tuple[int, int]
    header: str = ""  # table rows: the header line, cells separated by " | "
    lead: str = ""  # list items and rows: the sentence that introduces them ("… sebagai berikut:")
    own: Bag = field(default_factory=Bag)
    lead_bag: Bag = field(default_factory=Bag)
    around: Bag = field(default_factory=Bag)
    before: Bag = field(default_factory=Bag)
    period_text: str = ""  # kept for callers that read it: title, section, lead
    score: float = 0.0
    coverage: float = 0.0
    label_match: float = 0.0  # rows: how exactly the question names the row (see _label_match)
    item: bool = False  # a list item under ``lead``
    short: bool = False  # too short to stand alone ("teguran lisan"): written only with its whole list
    is_lead: bool = False  # a sentence that introduces a list ("… berupa:")
    list_id: int | None = None  # the same for a lead-in and its items
    pasal: str | None = None
    ayat: str | None = None
    periods: tuple[tuple[str, ...], ...] = ()  # years stated by: unit, lead/header, section, document
    document: str = ""  # title (or dataset) of the unit's document
    document_ref: tuple[str | None, int | None] = (None, None)  # (number, year) of a regulation

    @property
    def own_text(self) -> str:
        return f"{self.text} {self.header}" if self.kind == "row" else self.text


def split_units(line: str) -> list[str]:
    """Sentences and list items of one line, each a verbatim substring of it, markers and joiners trimmed."""
    return [p for p in _pieces(line) if len(p) >= MIN_UNIT_CHARS and len(p.split()) >= 3]


@functools.lru_cache(maxsize=65536)
def _pieces(line: str) -> tuple[str, ...]:
    """A line cut into sentence-like pieces (cached: the same passage lines come back request after
    request)."""
    pieces: list[str] = []
    for part in furniture_free_parts(line):  # a running head or page stamp inside a line ends a piece
        for sentence in _sentences(part):
            pieces += _after_spelled_amount(sentence)
    out = []
    for piece in pieces:
        piece = LEADING_MARKER.sub("", piece.strip())
        piece = _TRAILING_JOINER.sub("", piece).strip()
        if piece and piece.lower().strip(";,.") not in _JOINERS:
            out.append(piece)
    return tuple(out)


# The spelled twin of an amount closes the statement of it: "... sebesar Rp9.000,00 (sembilan ribu rupiah),
# sebagaimana dimaksud ..." goes on with what the amount consists of or where it is detailed.
_SPELLED_END = re.compile(r"(?<=rupiah\))\s*[,;]?\s+(?=\S)")
LONG_PIECE = 300


def _after_spelled_amount(sentence: str) -> list[str]:
    """A long sentence and, after it, its pieces cut after each spelled amount: a claim can state the figure
    and its subject without the clauses that follow, and the whole stays a candidate when what is asked is
    in those clauses (each piece is a verbatim substring; the scoring picks)."""
    if len(sentence) <= LONG_PIECE:
        return [sentence]
    out: list[str] = []
    start = 0
    for m in _SPELLED_END.finditer(sentence):
        if m.start() - start >= 40:
            out.append(sentence[start : m.start()])
            start = m.end()
    out.append(sentence[start:])
    return [sentence, *out] if len(out) > 1 else out


def _sentences(line: str) -> list[str]:
    """``line`` cut at its sentence boundaries (abbreviations and amounts that go on are no boundary)."""
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(line):
        before = line[start : m.start()].rstrip()
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        token = last.rstrip(".!?").lower()
        single = len(token) <= 1 and len(before.split()) <= 1
        if before.endswith(".") and (token in _ABBREVIATIONS or single):
            continue
        if amount_goes_on(before, line, m.end()):
            continue
        pieces.append(line[start : m.start()])
        start = m.end()
    pieces.append(line[start:])
    return pieces


@functools.lru_cache(maxsize=65536)
def valid_text(text: str) -> bool:
    return not validate_segments([Segment(text, "fact", "paragraph")])


def _valid_row(header: str, row: str) -> bool:
    segments = [Segment(header, "framing", "table_header"), Segment(row, "fact", "table_row")]
    return not validate_segments(segments)


def strip_pipes(line: str) -> str:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return s.strip()


def _surroundings(p: Passage) -> str:
    if p.chunk is not None:
        c = p.chunk
        return " ".join(x for x in (c.document_title, " ".join(c.section_path), c.context) if x)
    return " ".join(str(v) for k, v in p.identity.items() if k in ("dataset", "period", "source") and v)


def _context_header(p: Passage) -> str:
    """A table header the passage's context carries (a table continued from an earlier chunk)."""
    if p.chunk is None:
        return ""
    lines = [ln.strip() for ln in p.chunk.context.splitlines() if "|" in ln]
    lines = [ln for ln in lines if not _SEPARATOR.match(ln)]
    return strip_pipes(lines[-1]) if lines else ""


@dataclass(slots=True)
class _Reader:
    """State while one passage is read line by line."""

    header: str = ""  # the table being read
    lead: str = ""
    lead_id: int | None = None
    lead_line: int = -1  # the line the lead-in ended on
    ayat: str | None = None
    previous: str = ""


class _AddUnit(Protocol):
    def __call__(self, text: str, kind: str, item: bool = False, short: bool = False) -> Unit | None: ...


def _is_pipe_line(p: Passage, line: str) -> bool:
    return line.startswith("|") or (p.chunk is not None and p.chunk.kind == "table" and "|" in line)


def extract_units(passages: Sequence[Passage]) -> list[Unit]:
    units: list[Unit] = []
    seen: set[tuple[str, str]] = set()
    for pi, p in enumerate(passages):
        if not p.citable:
            continue
        around_text = _surroundings(p)
        document = p.chunk.document_title if p.chunk is not None else str(p.identity.get("dataset") or "")
        around = Bag.of(around_text, title_acronyms(document), expand=True)
        section = " ".join((*p.chunk.section_path, p.chunk.context)) if p.chunk is not None else ""
        doc_years = tuple(period_years(document + " " + str(p.identity.get("period") or "")))
        section_years = tuple(period_years(section))
        pasals = _PASAL.findall(" ".join(p.chunk.section_path)) if p.chunk is not None else []
        ref = (p.chunk.identity.number, p.chunk.identity.year) if p.chunk is not None else (None, None)
        context_header = _context_header(p)
        state = _Reader(header=context_header)
        tabular = p.kind == "tool" or (p.chunk is not None and p.chunk.kind == "table")
        lines = p.text.splitlines() if tabular else unwrap_lines(p.text)
        position = 0

        def add(text: str, kind: str, item: bool = False, short: bool = False) -> Unit | None:
            nonlocal position
            lead = state.lead if (item or kind == "row") else ""
            if (lead, text) in seen:
                return None
            seen.add((lead, text))
            position += 1
            header = state.header if kind == "row" else ""
            unit = Unit(
                p.key,
                text,
                kind,
                (pi, position),
                header,
                lead,
                own=Bag.of(_FISCAL_YEAR.sub(" ", f"{text} {header}")),
                lead_bag=Bag.of(lead),
                around=around,
                before=Bag.of(state.previous if not lead else ""),
                period_text=f"{around_text} {lead}",
                item=item,
                short=short,
                list_id=state.lead_id if lead else None,
                pasal=pasals[-1] if pasals else None,
                ayat=state.ayat,
                periods=(tuple(period_years(f"{text} {header}")), tuple(period_years(lead)), section_years,
                         doc_years),
                document=document,
                document_ref=ref,
            )
            units.append(unit)
            return unit

        for index, raw_line in enumerate(lines):
            line = raw_line.strip()
            if not line:
                continue
            if p.kind != "tool" and _is_pipe_line(p, line):
                if _SEPARATOR.match(line):
                    continue
                following = next((ln.strip() for ln in lines[index + 1 :] if ln.strip()), "")
                if _SEPARATOR.match(following) or not state.header:
                    state.header = strip_pipes(line)  # a header line; or a table chunk's first line
                    continue
                row = strip_pipes(line)
                if row != state.header and _valid_row(state.header, row):
                    add(row, "row")
                continue  # a pipe line is a table row or nothing, never prose
            if p.chunk is None or p.chunk.kind != "table":
                state.header = ""
            if p.kind == "tool":
                # A tool result's line is one computed statement: kept whole, only its list marker cut.
                text = LEADING_MARKER.sub("", line)
                if text and valid_text(text):
                    add(text, "tool")
                continue
            _read_prose_line(line, index, state, add)
    return units


_SENTENCE_END = re.compile(r"[.;:!?)\]”\"']$")
_STARTS_BLOCK = re.compile(
    r"^(?:\||#|>|[-*+]\s|(?:\d{1,3}|[a-zA-Z])[.)]\s|\(\d+[a-z]?\)|Pasal\s+\d+[A-Z]?\s*$|BAB\s|Ayat\s+\()"
)


def unwrap_lines(text: str) -> list[str]:
    """The passage's lines with hard wraps undone: a prose line that ends mid-sentence ("… yang dimaksud
    dalam") runs on into the next line unless that one starts a new provision, item, table row or heading.
    A unit cut at the wrap would state half a provision (the asked figure in one half, what it is in the
    other), or end inside a legal reference. The two lines are joined by one space."""
    out: list[str] = []
    open_sentence = False
    for raw in text.splitlines():
        line = raw.strip()
        if open_sentence and line and "|" not in line and not _STARTS_BLOCK.match(line):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(raw)
        last = out[-1].strip()
        # a heading ("Pasal 36", "BAB IX", "KETENTUAN UMUM") or a table row opens no sentence
        heading = len(last.split()) < 4 or last.isupper()
        open_sentence = not heading and "|" not in last and not _SENTENCE_END.search(last)
    return out


def _read_prose_line(line: str, index: int, state: _Reader, add: _AddUnit) -> None:
    ayat = _AYAT_START.match(line)
    if ayat or _NEW_PROVISION.match(line):
        state.ayat = ayat.group(1) if ayat else None
        state.lead, state.lead_id = "", None  # a new ayat or Pasal ends the list the lead-in introduced
    item_line = bool(_ITEM_LINE.match(line))
    if not item_line and index != state.lead_line:
        state.lead, state.lead_id = "", None  # prose after a list ends it
    pieces = [x for x in _pieces(line) if valid_text(x)]
    for n, text in enumerate(pieces):
        in_list = bool(state.lead) and (item_line or n > 0)
        long_enough = len(text) >= MIN_UNIT_CHARS and len(text.split()) >= 3
        if not long_enough and not in_list:
            continue
        if _NEW_PROVISION.match(text) and n > 0:
            state.lead, state.lead_id = "", None
            in_list = False
        unit = add(text, "sentence", item=in_list, short=not long_enough)
        if unit is not None and text.endswith(":") and not unit.short:
            unit.is_lead, unit.item, unit.list_id = True, False, unit.order[1]
            state.lead, state.lead_id, state.lead_line = text, unit.order[1], index
        if unit is not None:
            state.previous = text
