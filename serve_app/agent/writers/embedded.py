"""The embedded writer: deterministic and extractive, no weights, the CPU default of the agent role.

It cuts every passage into units a strict judge can verify on their own (a sentence or list item copied
verbatim, a table row with its header, a line of a tool result), scores them against the question
(:mod:`serve_app.agent.writers.units`), and writes:

* a framing lead-in (``LEAD_IN_FRAMING``), then the chosen units in blocks, best block first: a paragraph
  for one statement; a list under its lead-in sentence (written once, as a fact; a list the question asks
  for, or whose lead-in was chosen, is written whole, short items included); a table (the header as
  framing, rows as facts, whichever chunk of the table they came from) for table rows;
* ``SUMMARY_LEAD_IN`` and the document's most central statements for a summary;
* only ``NOT_FOUND_FRAMING`` when nothing in the passages answers the question, or when the question names
  a place or company no passage mentions.

When a tool computed an aggregate and the documents also state the figure, the stated one is written when
it covers the question better (a total the budget law states beats a sum over an annex table).

Every fact's text is a verbatim substring of its passage (table rows keep their cells and inner pipes), so
the judge compares like with like. v1 and v2 get the same segments.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence

from models.base import CallRecord
from models.tokens import estimate_tokens
from retrieval.querying import is_english
from serve_app.agent.query import FIGURES, Query, analyse
from serve_app.agent.text import has_amount, words
from serve_app.agent.writers.base import Writer, WriteRequest, WriterOutput
from serve_app.agent.writers.budget_scope import answering_passages
from serve_app.agent.writers.parts import question_parts
from serve_app.agent.writers.scoring import missing_names, score_units
from serve_app.agent.writers.units import Unit, expected_figure, extract_units, split_units, valid_text
from serve_app.answer.refusals import (
    GREETING_FRAMING,
    LEAD_IN_FRAMING,
    NOT_FOUND_FRAMING,
    SUMMARY_LEAD_IN,
    framing_in,
)
from serve_app.answer.segments import Passage, Segment
from serve_app.budget import RequestBudget

__all__ = [
    "EmbeddedWriter",
    "choose",
    "expected_figure",
    "extract_units",
    "layout_segments",
    "score_units",
    "split_units",
]

MIN_COVERAGE = 0.45
MAX_FACTS = 4
MAX_ROWS = 8
MAX_ITEMS = 12
MAX_FIGURE_FACTS = 2
# Numbers that are no figure: article, paragraph and regulation numbers, list markers.
_NOT_A_FIGURE = re.compile(
    r"(?i)\b(?:pasal|ayat|huruf|angka|nomor|no\.?|bab|bagian|paragraf)\s*\(?\d+[a-z]?\)?|^\(?\d{1,2}[.)]\s"
    r"|\b\d+\s*/\s*\d{4}\b|\btahun\s+\d{4}\b(?=.{0,40}?\btentang\b)"
    r"|\b\d{1,2}\s+(?:januari|februari|maret|april|mei|juni|juli|agustus|september|oktober|november|desember)"
    r"\s+\d{4}\b"  # a date ("8 Juni 2021"): when a text was signed, no figure
)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def _states_figure(u: Unit, q: Query) -> bool:
    """The unit states a figure: a number outside references and the question's own years (the kind asked
    for is preferred by the scoring; the guess of that kind from the question's words is not exact enough to
    refuse by)."""
    text = _NOT_A_FIGURE.sub(" ", u.text)
    return any(m.group(0) not in q.years for m in _DIGITS.finditer(text))


def choose(units: list[Unit], query: str | Query) -> list[Unit]:
    """The units that answer the question, best first; empty when none covers enough of it."""
    q = analyse(query) if isinstance(query, str) else query
    if missing_names(q, units):
        return []
    ranked = sorted((u for u in units if u.score > 0 and not u.short), key=lambda u: (-u.score, u.order))
    tools = [u for u in ranked if u.kind == "tool" and u.coverage >= 0.3]
    stated = [u for u in ranked if u.kind != "tool"]
    if tools and not _stated_answers_better(stated, tools[0], q):
        return _with_tool_results(units, ranked, tools)
    ranked = stated
    if q.figure is not None:
        # A question for a figure is answered by a statement of that kind of figure, or not at all: a
        # definition of the asked term states no amount, and the nearest amount of another line or year is
        # no answer (scoring already lowers both; this keeps them out when nothing better was shown).
        ranked = [u for u in ranked if _states_figure(u, q)]
    if not ranked or ranked[0].coverage < MIN_COVERAGE:
        return []
    best = ranked[0]
    chosen = [best]
    limit = MAX_ROWS if best.kind == "row" else MAX_FACTS
    if q.figure is not None and not q.asks_list:
        limit = MAX_FIGURE_FACTS  # the asked figure, not every figure of the passage
    for u in ranked[1:]:
        if len(chosen) >= limit:
            break
        # Close runners-up stay: lexical scores cannot tell the answer from its neighbours reliably, and
        # each extra statement is still verified on its own.
        if u.score < 0.75 * best.score or u.coverage < max(0.4, 0.8 * best.coverage):
            continue
        if best.kind == "row" and not _beside_row(best, u):
            continue
        if q.figure is not None and has_amount(best.text) and not has_amount(u.own_text):
            continue
        if any(u.text in c.text or c.text in u.text for c in chosen):
            continue
        chosen.append(u)
    return _complete_lists(units, chosen, q)


def _per_part(units: list[Unit], parts: list[str]) -> list[Unit]:
    """The units that answer each part of a several-part question, part by part (each scored on its own)."""
    chosen: dict[int, Unit] = {}
    for part in parts:
        for u in choose(units, score_units(part, units)):
            chosen.setdefault(id(u), u)
    return list(chosen.values())


def _beside_row(best: Unit, u: Unit) -> bool:
    """What may follow a best table row: rows of its table the question names as exactly (all of them when
    it names none exactly), or a sentence that states one of the row's figures (its prose reading)."""
    if u.kind == "row":
        return u.header == best.header and (best.label_match < 1.0 or u.label_match >= 1.0)
    numbers = {w for w in words(best.text) if w[0].isdigit() and len(w) > 2}
    return bool(numbers & set(words(u.text)))


def _stated_answers_better(stated: list[Unit], tool: Unit, q: Query) -> bool:
    """A statement in the documents that covers the question better than the computed aggregate and
    states the kind of figure asked for (the total a budget law states, not a sum over its annex)."""
    if not stated or stated[0].coverage < MIN_COVERAGE:
        return False
    best = stated[0]
    if q.figure is not None and not FIGURES[q.figure].search(best.own_text):
        return False
    return best.coverage > tool.coverage


def _complete_lists(units: list[Unit], chosen: list[Unit], q: Query) -> list[Unit]:
    """A chosen lead-in brings its whole list, and so does a chosen item when the question asks for a
    list; a lead-in whose items are nowhere to be read is dropped (a sentence ending in ':' says nothing)."""
    out: list[Unit] = []
    done: set[tuple[str, int]] = set()
    for u in chosen:
        if u.list_id is None or u.kind == "row":
            out.append(u)
            continue
        list_key = (u.key, u.list_id)
        # a lead-in that states the asked figure answers on its own; its items are other figures
        answers_alone = q.figure is not None and u.is_lead and bool(FIGURES[q.figure].search(u.text))
        whole = (u.is_lead and not answers_alone) or q.asks_list
        members = [m for m in units if m.key == u.key and m.list_id == u.list_id and m.kind != "row"]
        items = [m for m in members if m.item]
        lead = next((m for m in members if m.is_lead), None)
        if not whole:
            out.append(u)
            continue
        if list_key in done:
            continue
        done.add(list_key)
        if not items:
            if not u.is_lead:
                out.append(u)
            continue
        if lead is not None:
            out.append(lead)
        out.extend(items[:MAX_ITEMS])
    if not out and chosen:
        return []
    unique: dict[int, Unit] = {}
    for u in out:
        unique.setdefault(id(u), u)
    return list(unique.values())


def _with_tool_results(units: list[Unit], ranked: list[Unit], tools: list[Unit]) -> list[Unit]:
    """A tool ran for this question (an aggregate, live records): its matching results come first, whole
    (every line of a multi-line result such as a top-n list), then the table rows it used."""
    keys = list(dict.fromkeys(u.key for u in tools))[:MAX_FACTS]
    chosen = [u for u in units if u.kind == "tool" and u.key in keys][: MAX_ROWS + 2]
    rows = [u for u in ranked if u.kind == "row" and u.coverage >= 0.4]
    if rows:
        header = rows[0].header
        chosen += [u for u in rows if u.header == header and u.score >= 0.5 * rows[0].score][:MAX_ROWS]
    return chosen


def summarize(units: list[Unit], query: str, limit: int = 6) -> list[Unit]:
    """The document's most central statements (words it uses most), in document order."""
    units = [u for u in units if not u.short]
    freq = Counter(t for u in units for t in u.own.stems if not t[0].isdigit() and len(t) > 3)
    for u in units:
        u.score = sum(freq[t] for t in u.own.stems) / (len(u.own.stems) ** 0.5 or 1.0)
    picked = sorted(units, key=lambda u: -u.score)[:limit]
    return sorted(picked, key=lambda u: u.order)


def _blocks(chosen: list[Unit]) -> list[tuple[str, str, str, list[Unit]]]:
    """(kind, passage key, lead-in, units) in the order their first unit was chosen: ``table`` per header,
    ``list`` per lead-in, ``plain`` for every other statement."""
    blocks: dict[tuple[str, str, str, str], list[Unit]] = {}
    for u in chosen:
        if u.kind == "row":
            key = ("table", "", u.lead, u.header)  # one table per header, whichever chunk a row came from
        elif u.list_id is not None and (u.item or u.is_lead):
            lead = u.text if u.is_lead else u.lead
            key = ("list", u.key, lead, "")
        else:
            key = ("plain", "", "", "")
        blocks.setdefault(key, []).append(u)
    return [(kind, key or units[0].key, lead, units) for (kind, key, lead, _), units in blocks.items()]


def layout_segments(chosen: list[Unit], lead_in: str, notices: Sequence[str] = ()) -> list[Segment]:
    """Framing lead-in, then the facts block by block (see the module docstring). Each list's lead-in
    sentence is written once, as a fact, right before its items, so reader and judge see what they are."""
    segments = [Segment(n, "framing", "paragraph") for n in notices]
    segments.append(Segment(lead_in, "framing", "paragraph"))
    tools = [u for u in chosen if u.kind == "tool"]
    rest = [u for u in chosen if u.kind != "tool"]
    if tools and tools[0].text.endswith(":") and len(tools) > 1:
        # A tool result that introduces a list (top-n): its first line is the list's lead-in.
        segments.append(Segment(tools[0].text, "fact", "paragraph", (tools[0].key,)))
        segments.extend(Segment(u.text, "fact", "list_item", (u.key,)) for u in tools[1:])
    else:
        segments.extend(_plain(tools, alone=not rest))
    blocks = _blocks(rest)
    alone = len(blocks) == 1 and not tools
    written: set[tuple[str, str]] = set()
    for kind, key, lead, units in blocks:
        if kind == "plain":
            segments.extend(_plain(units, alone=alone))
            continue
        if kind == "table":
            # The header says what the cells are; the sentence that introduced the table in the source
            # only helped to find it (and would be one more claim to check).
            segments.append(Segment(units[0].header, "framing", "table_header"))
            segments.extend(Segment(u.text, "fact", "table_row", (u.key,)) for u in units)
            continue
        has_lead = bool(lead) and valid_text(lead) and (key, lead) not in written
        if has_lead:
            written.add((key, lead))
            segments.append(Segment(lead, "fact", "paragraph", (key,)))
        items = [u for u in units if not u.is_lead]
        if has_lead or len(items) > 1:
            segments.extend(Segment(u.text, "fact", "list_item", (u.key,)) for u in items)
        else:
            segments.extend(Segment(u.text, "fact", "paragraph", (u.key,)) for u in items)
    return segments


def _plain(units: list[Unit], *, alone: bool) -> list[Segment]:
    """Statements that stand on their own: one paragraph, or a list when they are the whole answer (after
    a list block a list would run on into it, and read as its items)."""
    layout = "list_item" if alone and len(units) > 1 else "paragraph"
    return [Segment(u.text, "fact", layout, (u.key,)) for u in units]


class EmbeddedWriter(Writer):
    """Implements :class:`~serve_app.agent.writers.base.Writer` without a model; it still charges one call
    (engine ``embedded``) so budgets and ``model_call_log`` read the same on every engine."""

    name = "embedded"
    model = "extractive-v1"
    max_output_tokens = 1024

    async def write(self, request: WriteRequest, *, budget: RequestBudget) -> WriterOutput:
        query = request.query
        passages = request.passages
        task = request.task
        notices = request.notices
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
        english = is_english(query)
        if task == "chitchat":
            return [Segment(framing_in(GREETING_FRAMING, english), "framing", "paragraph")]
        if task != "summarize":
            passages = answering_passages(query, passages)  # a budget law asked by its year: only that law
        units = extract_units(passages)
        if task == "summarize" and units:
            return layout_segments(summarize(units, query), framing_in(SUMMARY_LEAD_IN, english), notices)
        parts = question_parts(query)
        if len(parts) > 1:
            chosen = _per_part(units, parts)  # "berapa X dan berapa Y": each ask answered on its own
        else:
            chosen = choose(units, score_units(query, units))
        if not chosen:
            return [Segment(n, "framing", "paragraph") for n in notices] + [
                Segment(framing_in(NOT_FOUND_FRAMING, english), "framing", "paragraph")
            ]
        return layout_segments(chosen, framing_in(LEAD_IN_FRAMING, english), notices)
