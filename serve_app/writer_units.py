"""The embedded writer's reading: passages cut into verifiable units, each scored against the question.

A unit is a verbatim substring of its passage: a sentence, a list item, a table row (with its header), or
one line of a tool result. Scoring is lexical and deterministic: the question's words (without question
words, the regulation it names, or what to compute) weighted by rarity among the units, matched by
Indonesian stem or as a long-enough substring (``kedudukan`` in ``berkedudukan``), found in the unit itself
(weight 1), in its list lead-in (0.8: "… dihitung dengan bobot:"), in what surrounds its passage (0.5:
title, section, table header) or in the sentence before it (0.25). The asked year must appear in the unit or
its surroundings, and a question that asks for a kind of figure (a percentage, a duration, an amount of
money, a count of people) prefers units that state one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from serve_app.compose import validate_segments
from serve_app.segments import Passage, Segment
from serve_app.tools_table import OPERATION_WORDS
from serve_app.tools_text import content_terms, stem, words, years

QUESTION_WORDS = frozenset(
    "berapa berapakah apa apakah siapa siapakah kapan dimana mana bagaimana mengapa kenapa jelaskan sebutkan "
    "tunjukkan berikan uraikan ringkas ringkasan rangkum rangkuman isi mengenai terkait soal menurut saja "
    "uu undang pp perpu perppu perpres permen qanun perda pergub nomor".split()
)
_WEAK_WORDS = frozenset("minimal maksimal paling batas tinggi rendah sedikit banyak lambat wajib".split())
_OPERATION_TERMS = frozenset(w for ws in OPERATION_WORDS.values() for w in ws)
_ABBREVIATIONS = frozenset(
    "no nomor rp dll dsb dst tgl kab kec kel prov jl hlm ps jo ttg sdr yth tbk pt cv dr ir drs hj st vol "
    "art pp uu".split()
)
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'“])|(?<=;)\s+|(?<=:)\s+(?=(?:[a-z]|\d{1,2})[.)]\s|\(\d)")
LEADING_MARKER = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|(?:\d{1,3}|[a-zA-Z])[.)]\s+)+")
_TRAILING_JOINER = re.compile(r"[;,]?\s+(?:dan|atau|serta)$|;$")
_NEW_PROVISION = re.compile(r"^(?:\(\d+[a-z]?\)|Pasal\s+\d|Ayat\s+\(|BAB\s)", re.IGNORECASE)
# "Nomor 11 Tahun 2006", "UU 11/2006": the regulation's own year, not a period the question asks about.
_REGULATION_ID = re.compile(
    r"(?i)\b(?:(?:UU|PP|Perpu|Perppu|Perpres|Permen\w*|Qanun(?:\s+Aceh)?|Perda|Pergub|Undang-Undang)\s*)?"
    r"(?:(?:Nomor|No\.?)\s*[\w./-]+\s+Tahun\s+\d{4}|\d+\s*/\s*\d{4})"
)
_FIGURES: dict[str, re.Pattern[str]] = {
    "percent": re.compile(r"\d[\d.,]*\s?(?:%|persen|per\s?seratus|perseratus)", re.IGNORECASE),
    "duration": re.compile(r"\d+\s*(?:\([^)]*\)\s*)?(?:tahun|bulan|hari|minggu)\b", re.IGNORECASE),
    "times": re.compile(r"\d+\s*(?:\([^)]*\)\s*)?kali\b", re.IGNORECASE),
    "people": re.compile(r"\d[\d.]*\s*(?:\([^)]*\)\s*)?(?:orang|anggota|jiwa)\b", re.IGNORECASE),
    "money": re.compile(r"Rp\.?\s?\d", re.IGNORECASE),
    "number": re.compile(r"\d"),
}
MIN_UNIT_CHARS = 20


@dataclass(slots=True)
class _Bag:
    words: frozenset[str] = frozenset()
    stems: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str) -> _Bag:
        ws = words(text)
        return cls(frozenset(ws), frozenset(stem(w) for w in ws))

    def has(self, raw: str, stemmed: str) -> bool:
        if stemmed in self.stems or raw in self.words:
            return True
        return len(raw) >= 6 and any(raw in w for w in self.words if len(w) > len(raw))


@dataclass(slots=True)
class Unit:
    key: str
    text: str
    kind: str  # sentence | row | tool
    order: tuple[int, int]
    header: str = ""  # table rows: the header line, cells separated by " | "
    lead: str = ""  # list items: the sentence that introduces the list ("… sebagai berikut:")
    own: _Bag = field(default_factory=_Bag)
    lead_bag: _Bag = field(default_factory=_Bag)
    around: _Bag = field(default_factory=_Bag)
    before: _Bag = field(default_factory=_Bag)
    period_text: str = ""  # where an asked year may stand besides the unit: title, section, lead
    score: float = 0.0
    coverage: float = 0.0


def split_units(line: str) -> list[str]:
    """Sentences and list items of one line, each a verbatim substring of it, markers and joiners trimmed."""
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(line):
        before = line[start : m.start()].rstrip()
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        token = last.rstrip(".!?").lower()
        single = len(token) <= 1 and len(before.split()) <= 1
        if before.endswith(".") and (token in _ABBREVIATIONS or single):
            continue
        pieces.append(line[start : m.start()])
        start = m.end()
    pieces.append(line[start:])
    out = []
    for piece in pieces:
        piece = LEADING_MARKER.sub("", piece.strip())
        piece = _TRAILING_JOINER.sub("", piece).strip()
        if len(piece) >= MIN_UNIT_CHARS and len(piece.split()) >= 3:
            out.append(piece)
    return out


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


def _table_header(p: Passage) -> str:
    if p.chunk is None or p.chunk.kind != "table":
        return ""
    context = p.chunk.context.strip()
    head = context.splitlines()[0] if context else (p.text.splitlines() or [""])[0]
    return strip_pipes(head) if "|" in head else ""


def _line_units(p: Passage, line: str, header: str) -> list[tuple[str, str]]:
    if header and "|" in line:
        row = strip_pipes(line)
        if row == header or set(row) <= set("-|: "):
            return []
        if _valid_row(header, row):
            return [(row, "row")]
    if p.kind == "tool":
        # A tool result's line is one computed statement: kept whole, only its list marker cut.
        text = LEADING_MARKER.sub("", line.strip())
        return [(text, "tool")] if text and valid_text(text) else []
    return [(u, "sentence") for u in split_units(line) if valid_text(u)]


def extract_units(passages: Sequence[Passage]) -> list[Unit]:
    units: list[Unit] = []
    seen: set[str] = set()
    for pi, p in enumerate(passages):
        if not p.citable:
            continue
        around_text = _surroundings(p)
        around = _Bag.of(around_text)
        period_base = _REGULATION_ID.sub(" ", around_text)
        header = _table_header(p)
        lead = ""
        previous = ""
        position = 0
        for line in p.text.splitlines():
            for text, kind in _line_units(p, line, header) if line.strip() else []:
                if kind != "sentence" or _NEW_PROVISION.match(text):
                    lead = ""  # a new ayat or Pasal ends the list the lead-in introduced
                if text not in seen:
                    seen.add(text)
                    position += 1
                    own_text = f"{text} {header}" if kind == "row" else text
                    units.append(
                        Unit(
                            p.key,
                            text,
                            kind,
                            (pi, position),
                            header if kind == "row" else "",
                            lead,
                            own=_Bag.of(own_text),
                            lead_bag=_Bag.of(lead),
                            around=around,
                            before=_Bag.of(previous if not lead else ""),
                            period_text=f"{period_base} {lead}",
                        )
                    )
                if kind == "sentence" and text.endswith(":"):
                    lead = text
                previous = text
    return units


def query_terms(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(raw word, stem) of the words that say what is asked, and the asked years (not a regulation's)."""
    topic = _REGULATION_ID.sub(" ", query)
    asked_years = years(topic)
    terms = []
    for raw in content_terms(topic):
        if raw in QUESTION_WORDS or raw in _OPERATION_TERMS or raw in asked_years:
            continue
        terms.append((raw, stem(raw)))
    return terms, asked_years


def expected_figure(query: str) -> str | None:
    tokens = words(query)
    text = " ".join(tokens)
    if any(t in ("persen", "persentase", "bobot", "tarif") for t in tokens) or "%" in query:
        return "percent"
    if "berapa lama" in text or any(t in ("umur", "usia", "jangka", "masa") for t in tokens):
        return "duration"
    if "berapa kali" in text:
        return "times"
    if "berapa orang" in text or "jumlah anggota" in text or "berapa anggota" in text:
        return "people"
    if any(
        t in ("anggaran", "dana", "alokasi", "pagu", "penerimaan", "belanja", "pendapatan", "biaya", "rp")
        for t in tokens
    ) and any(t in ("berapa", "jumlah", "besar", "nilai", "target") for t in tokens):
        return "money"
    if any(t in ("berapa", "jumlah", "besaran") for t in tokens):
        return "number"
    return None


def score_units(query: str, units: list[Unit]) -> None:
    terms, asked_years = query_terms(query)
    figure = expected_figure(query)
    n = len(units) or 1
    df = Counter(
        raw
        for u in units
        for raw, st in terms
        if u.own.has(raw, st) or u.lead_bag.has(raw, st) or u.around.has(raw, st)
    )
    idf = {raw: math.log((n + 1) / (df[raw] + 0.5)) + 0.1 for raw, _ in terms}
    # A word no unit uses weighs like the rarest word some unit uses: it still lowers coverage (the asked
    # entity may be missing) without drowning every other word.
    cap = max((idf[raw] for raw, _ in terms if df[raw]), default=1.0)
    weight = {raw: min(w, cap) * (0.3 if raw in _WEAK_WORDS else 1.0) for raw, w in idf.items()}
    total = sum(weight.values()) or 1.0
    for u in units:
        matched = 0.0
        for raw, st in terms:
            if u.own.has(raw, st):
                matched += weight[raw]
            elif u.lead_bag.has(raw, st):
                matched += 0.8 * weight[raw]
            elif u.around.has(raw, st):
                matched += 0.5 * weight[raw]
            elif u.before.has(raw, st):
                matched += 0.25 * weight[raw]
        score = matched
        u.coverage = matched / total if terms else 0.0
        if asked_years:
            if any(y in u.text or y in u.header for y in asked_years):
                score += 1.0
                u.coverage = min(1.0, u.coverage + 0.15)
            elif not any(y in u.period_text for y in asked_years):
                score *= 0.4
        if figure is not None:
            if _FIGURES[figure].search(u.text):
                score *= 1.5
            elif _FIGURES["number"].search(u.text):
                score *= 0.7
            else:
                score *= 0.5
        if len(u.text) > 500:
            score *= 0.8
        u.score = score
