"""The embedded writer: deterministic and extractive, no weights, the CPU default of the agent role.

It cuts every passage into units a strict judge can verify on their own (a sentence or list item copied
verbatim, a table row with its header, a line of a tool result), scores them against the question (the
asked words, weighted by rarity among the passages, Indonesian stems; the asked year; a figure when the
question asks for one), and writes:

* a framing lead-in (``LEAD_IN_FRAMING``), then one ``fact`` segment per chosen unit citing its passage:
  one paragraph for a single statement, list items for several, a table (header as framing, rows as
  facts) for table rows;
* ``SUMMARY_LEAD_IN`` and the document's most central statements for a summary;
* only ``NOT_FOUND_FRAMING`` when nothing in the passages answers the question.

Every fact's text is a verbatim substring of its passage (table rows keep their cells and pipes), so the
judge compares like with like. v1 and v2 get the same segments.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from models.base import CallRecord
from models.tokens import estimate_tokens
from serve_app.budget import RequestBudget
from serve_app.compose import validate_segments
from serve_app.refusals import GREETING_FRAMING, LEAD_IN_FRAMING, NOT_FOUND_FRAMING, SUMMARY_LEAD_IN
from serve_app.segments import Passage, Segment
from serve_app.tools_table import OPERATION_WORDS
from serve_app.tools_text import content_terms as _content_terms
from serve_app.tools_text import has_amount, stem, stems, words, years
from serve_app.writer_base import Writer, WriterOutput

_QUESTION_WORDS = frozenset(
    "berapa berapakah apa apakah siapa siapakah kapan dimana mana bagaimana mengapa kenapa jelaskan sebutkan "
    "tunjukkan berikan uraikan ringkas ringkasan rangkum rangkuman isi mengenai terkait soal".split()
)
_FIGURE_WORDS = frozenset(
    "berapa jumlah besar besaran nilai anggaran total persen persentase tarif pagu realisasi alokasi dana "
    "biaya harga luas target".split()
)
_ABBREVIATIONS = frozenset(
    "no nomor rp dll dsb dst tgl kab kec kel prov jl hlm ps jo ttg sdr yth tbk pt cv dr ir drs hj st vol "
    "art pp uu".split()
)
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'“])|(?<=;)\s+|(?<=:)\s+(?=(?:[a-z]|\d{1,2})[.)]\s|\(\d)")
_LEADING_MARKER = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|(?:\d{1,3}|[a-zA-Z])[.)]\s+)+")
_TRAILING_JOINER = re.compile(r"[;,]?\s+(?:dan|atau|serta)$|;$")
_OPERATION_TERMS = frozenset(w for ws in OPERATION_WORDS.values() for w in ws)
MIN_UNIT_CHARS = 20
MAX_FACTS = 5
MAX_ROWS = 8


@dataclass(slots=True)
class _Unit:
    key: str
    text: str
    kind: str  # sentence | row | tool
    order: tuple[int, int]
    header: str = ""
    context: str = ""
    stems: frozenset[str] = field(default_factory=frozenset)
    context_stems: frozenset[str] = field(default_factory=frozenset)
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
        if before.endswith(".") and (
            token in _ABBREVIATIONS or (len(token) <= 1 and len(before.split()) <= 1)
        ):
            continue
        pieces.append(line[start : m.start()])
        start = m.end()
    pieces.append(line[start:])
    out = []
    for piece in pieces:
        piece = _LEADING_MARKER.sub("", piece.strip())
        piece = _TRAILING_JOINER.sub("", piece).strip()
        if len(piece) >= MIN_UNIT_CHARS and len(piece.split()) >= 3:
            out.append(piece)
    return out


def _valid(text: str) -> bool:
    return not validate_segments([Segment(text, "fact", "paragraph")])


def _valid_row(header: str, row: str) -> bool:
    segments = [Segment(header, "framing", "table_header"), Segment(row, "fact", "table_row")]
    return not validate_segments(segments)


def _strip_pipes(line: str) -> str:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return s.strip()


def _passage_context(p: Passage) -> str:
    if p.chunk is not None:
        c = p.chunk
        return " ".join(
            x for x in (c.document_title, " ".join(c.section_path), c.legal_reference or "", c.context) if x
        )
    return " ".join(str(v) for k, v in p.identity.items() if k in ("dataset", "period", "source") and v)


def extract_units(passages: Sequence[Passage]) -> list[_Unit]:
    units: list[_Unit] = []
    seen: set[str] = set()
    for pi, p in enumerate(passages):
        if not p.citable:
            continue
        context = _passage_context(p)
        header = ""
        if p.chunk is not None and p.chunk.kind == "table":
            head = (
                p.chunk.context.strip().splitlines()[0] if p.chunk.context.strip() else p.text.splitlines()[0]
            )
            header = _strip_pipes(head) if "|" in head else ""
        position = 0
        for line in p.text.splitlines():
            if not line.strip():
                continue
            candidates: list[tuple[str, str]] = []
            if header and "|" in line:
                row = _strip_pipes(line)
                if row == header or set(row) <= set("-|: "):
                    continue
                if _valid_row(header, row):
                    candidates.append((row, "row"))
            if not candidates and p.kind == "tool":
                # A tool result's line is one computed statement: kept whole, only its list marker cut.
                text = _LEADING_MARKER.sub("", line.strip())
                candidates = [(text, "tool")] if text and _valid(text) else []
            elif not candidates:
                candidates = [(u, "sentence") for u in split_units(line) if _valid(u)]
            for text, kind in candidates:
                if text in seen:
                    continue
                seen.add(text)
                position += 1
                unit = _Unit(p.key, text, kind, (pi, position), header if kind == "row" else "", context)
                unit.stems = frozenset(stems(text + (" " + header if kind == "row" else "")))
                unit.context_stems = frozenset(stems(context))
                units.append(unit)
    return units


def _query_terms(query: str) -> list[str]:
    """Stems of the words that say what is asked (not how to ask it or what to compute)."""
    return [stem(t) for t in _content_terms(query) if t not in _QUESTION_WORDS and t not in _OPERATION_TERMS]


def score_units(query: str, units: list[_Unit]) -> None:
    terms = list(dict.fromkeys(_query_terms(query)))
    asked_years = years(query)
    year_stems = set(asked_years)
    topical = [t for t in terms if t not in year_stems]
    wants_figure = any(w in _FIGURE_WORDS for w in words(query))
    n = len(units) or 1
    df = Counter(t for u in units for t in topical if t in u.stems or t in u.context_stems)
    idf = {t: math.log((n + 1) / (df[t] + 0.5)) + 0.1 for t in topical}
    # A word no passage uses weighs like the rarest word some passage uses: it still lowers coverage
    # (the asked entity may be missing), without drowning every other word.
    present = [idf[t] for t in topical if df[t]]
    cap = max(present, default=1.0)
    idf = {t: min(w, cap) for t, w in idf.items()}
    total = sum(idf.values()) or 1.0
    for u in units:
        in_text = sum(idf[t] for t in topical if t in u.stems)
        in_context = sum(0.5 * idf[t] for t in topical if t not in u.stems and t in u.context_stems)
        score = in_text + in_context
        u.coverage = (in_text + in_context) / total if topical else 0.0
        if asked_years:
            if any(y in u.text or y in u.header for y in asked_years):
                score += 1.0
                u.coverage = min(1.0, u.coverage + 0.15)
            elif not any(y in u.context for y in asked_years):
                score *= 0.4
        if wants_figure:
            score *= 1.4 if has_amount(u.text) else 0.6
        if len(u.text) > 500:
            score *= 0.8
        u.score = score


def choose(units: list[_Unit], query: str) -> list[_Unit]:
    ranked = sorted((u for u in units if u.score > 0), key=lambda u: (-u.score, u.order))
    tools = [u for u in ranked if u.kind == "tool" and u.coverage >= 0.3]
    if tools:
        return _with_tool_results(units, ranked, tools)
    if not ranked or ranked[0].coverage < 0.5:
        return []
    best = ranked[0]
    wants_figure = any(w in _FIGURE_WORDS for w in words(query))
    chosen = [best]
    limit = MAX_ROWS if best.kind == "row" else MAX_FACTS
    for u in ranked[1:]:
        if len(chosen) >= limit:
            break
        if u.score < 0.7 * best.score or u.coverage < 0.4:
            continue
        if best.kind == "row" and (u.kind != "row" or u.header != best.header):
            continue
        if wants_figure and has_amount(best.text) and not has_amount(u.text):
            continue
        chosen.append(u)
    return chosen


def _with_tool_results(units: list[_Unit], ranked: list[_Unit], tools: list[_Unit]) -> list[_Unit]:
    """A tool ran for this question (an aggregate, live records): its matching results come first, whole
    (every line of a multi-line result such as a top-n list), then the table rows it used."""
    keys = list(dict.fromkeys(u.key for u in tools))[:MAX_FACTS]
    chosen = [u for u in units if u.kind == "tool" and u.key in keys][: MAX_ROWS + 2]
    rows = [u for u in ranked if u.kind == "row" and u.coverage >= 0.4]
    if rows:
        header = rows[0].header
        chosen += [u for u in rows if u.header == header and u.score >= 0.5 * rows[0].score][:MAX_ROWS]
    return chosen


def summarize(units: list[_Unit], query: str, limit: int = 6) -> list[_Unit]:
    """The document's most central statements (words it uses most), in document order."""
    freq = Counter(t for u in units for t in u.stems if not t[0].isdigit() and len(t) > 3)
    for u in units:
        u.score = sum(freq[t] for t in u.stems) / (len(u.stems) ** 0.5 or 1.0)
    picked = sorted(units, key=lambda u: -u.score)[:limit]
    return sorted(picked, key=lambda u: u.order)


def layout_segments(chosen: list[_Unit], lead_in: str, notices: Sequence[str] = ()) -> list[Segment]:
    segments = [Segment(n, "framing", "paragraph") for n in notices]
    segments.append(Segment(lead_in, "framing", "paragraph"))
    rows = [u for u in chosen if u.kind == "row"]
    others = [u for u in chosen if u.kind != "row"]
    if others and others[0].kind == "tool" and others[0].text.endswith(":") and len(others) > 1:
        # A tool result that introduces a list (top-n): its first line is the list's lead-in.
        segments.append(Segment(others[0].text, "fact", "paragraph", (others[0].key,)))
        others = others[1:]
    if len(others) == 1:
        segments.append(Segment(others[0].text, "fact", "paragraph", (others[0].key,)))
    else:
        segments.extend(Segment(u.text, "fact", "list_item", (u.key,)) for u in others)
    headers = list(dict.fromkeys(u.header for u in rows))
    for header in headers:
        segments.append(Segment(header, "framing", "table_header"))
        segments.extend(Segment(u.text, "fact", "table_row", (u.key,)) for u in rows if u.header == header)
    return segments


class EmbeddedWriter(Writer):
    """Implements :class:`~serve_app.writer_base.Writer` without a model; it still charges one call
    (engine ``embedded``) so budgets and ``model_call_log`` read the same on every engine."""

    name = "embedded"
    model = "extractive-v1"
    max_output_tokens = 1024

    async def write(
        self,
        *,
        query: str,
        passages: Sequence[Passage],
        history: Sequence[Mapping[str, str]],
        mode: str,
        editorial_prompt: str | None,
        budget: RequestBudget,
        regenerate_feedback: list[str] | None = None,
        task: str = "answer",
        notices: Sequence[str] = (),
        previous_output: str = "",
    ) -> WriterOutput:
        started = time.perf_counter()
        segments = self.segments(query, passages, task=task, notices=notices)
        record = CallRecord(
            role="agent",
            engine=self.name,
            model=self.model,
            prompt_tokens=estimate_tokens(query) + sum(estimate_tokens(p.text) for p in passages),
            completion_tokens=sum(estimate_tokens(s.text) for s in segments),
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        return WriterOutput(segments, record)

    def segments(
        self, query: str, passages: Sequence[Passage], *, task: str = "answer", notices: Sequence[str] = ()
    ) -> list[Segment]:
        if task == "chitchat":
            return [Segment(GREETING_FRAMING, "framing", "paragraph")]
        units = extract_units(passages)
        if task == "summarize" and units:
            return layout_segments(summarize(units, query), SUMMARY_LEAD_IN, notices)
        score_units(query, units)
        chosen = choose(units, query)
        if not chosen:
            return [Segment(n, "framing", "paragraph") for n in notices] + [
                Segment(NOT_FOUND_FRAMING, "framing", "paragraph")
            ]
        return layout_segments(chosen, LEAD_IN_FRAMING, notices)
