"""``table_query``: filter and aggregate an ingested CSV/XLSX table (sum, average, compare, top-n), with
the rows used cited.

The aggregate is computed here, never by a model, and becomes a ``tool`` passage whose text states exactly
what was computed (column, filters, row count, value) and whose identity is ``{dataset, source, period,
call}``; the rows used come along as chunk passages, so a reader (and the judge) can check them.

A table answers only what it can: every asked word must name a row, a column or the table itself ("anggaran"
names the ``pagu`` column), every asked year must be one the table covers, and a share ("berapa persen")
needs a percentage column. Otherwise the tool finds nothing and the agent searches the documents instead.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Literal

from serve_app.agent.text import (
    content_terms,
    format_number,
    format_scaled,
    parse_number,
    term_matches,
    words,
    years,
)
from serve_app.agent.tools.base import Evidence, Tool, ToolArgs, ToolContext, ToolResult
from serve_app.answer.segments import Aggregate

OPERATION_WORDS: dict[str, tuple[str, ...]] = {
    "top": ("terbesar", "tertinggi", "teratas", "terbanyak", "top"),
    "bottom": ("terkecil", "terendah", "terbawah", "tersedikit"),
    "compare": ("bandingkan", "perbandingan", "dibandingkan", "membandingkan", "selisih", "vs", "versus"),
    "average": ("rata", "rerata"),
    "sum": ("total", "jumlahkan", "keseluruhan", "akumulasi"),
}
# "semua"/"seluruh" ask for a sum only next to a quantity word ("berapa jumlah pagu seluruh program");
# "sebutkan semua asas" is a list question.
_SUM_IF_QUANTITY = ("seluruh", "semua")
_QUANTITY_WORDS = ("berapa", "jumlah", "total", "nilai")
OPERATION_TERMS = frozenset(w for ws in OPERATION_WORDS.values() for w in ws) | {
    "paling",
    "besar",
    "kecil",
    "tinggi",
    "rendah",
    "banyak",
    "sedikit",
    "seluruh",
    "semua",
    "jumlah",
    "nilai",
    "berapa",
    "besaran",
    "urutan",
    "urutkan",
}
# Words every table of this corpus is about, or that name the table itself: no row filter.
GENERIC_TERMS = frozenset("aceh provinsi pemerintah apba apbd apbn data tabel lampiran daftar".split())
# Asked words that name a measure column: "anggaran pendidikan" is the pagu column of a budget table.
_MEASURE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "anggaran": ("pagu", "anggaran"),
    "alokasi": ("pagu", "alokasi", "anggaran"),
    "target": ("target", "pagu"),
    "budget": ("pagu", "anggaran"),
    "realisasi": ("realisasi",),
}
_PERCENT_ASKED = ("persen", "persentase", "proporsi", "porsi", "percent", "percentage")
_MEASURE_HINTS = (
    "jumlah",
    "nilai",
    "anggaran",
    "pagu",
    "realisasi",
    "total",
    "rp",
    "rupiah",
    "besaran",
    "target",
)
_ID_HINTS = ("id", "kode", "no", "nomor", "halaman", "urut", "row")
_LEVEL_HINTS = ("level", "tingkat")
MAX_ROW_PASSAGES = 10
# A computed figure cites every row it came from; over more rows than this it is not computed at all.
MAX_AGGREGATE_ROWS = 200


def detect_operation(query: str) -> str | None:
    tokens = words(query)
    text = " " + " ".join(tokens) + " "
    if " paling besar " in text or " paling tinggi " in text:
        return "top"
    if " paling kecil " in text or " paling rendah " in text:
        return "bottom"
    for op, hints in OPERATION_WORDS.items():
        if any(h in tokens for h in hints):
            return op
    if any(t in _SUM_IF_QUANTITY for t in tokens) and any(t in _QUANTITY_WORDS for t in tokens):
        return "sum"
    return None


def _header_tokens(column: str) -> list[str]:
    return [t for t in re.split(r"[^0-9a-z]+", column.lower()) if t]


@dataclass(slots=True)
class _Row:
    chunk_id: str
    cells: list[str]


@dataclass(slots=True)
class _Computed:
    """What the table answered: one or more passages (a computed figure carries the rows it came from, for
    the judge to recompute), the rows to show as chunks, the period and the call."""

    pieces: list[tuple[str, Aggregate | None]]
    used: list[_Row]
    period: str | None
    call: str


def _aggregate(operation: str, columns: list[str], measure: int, rows: list[_Row]) -> Aggregate | None:
    if len(rows) > MAX_AGGREGATE_ROWS:
        return None  # too many rows to cite: the figure would not be checkable
    op: Literal["sum", "mean"] = "mean" if operation == "average" else "sum"
    return Aggregate(
        operation=op,
        column=columns[measure],
        header=tuple(columns),
        rows=tuple(tuple(r.cells) + ("",) * (len(columns) - len(r.cells)) for r in rows),
        row_refs=tuple(r.chunk_id for r in rows),
    )


class TableQueryTool(Tool):
    name = "table_query"

    def __init__(self, *, max_tables: int = 2, default_n: int = 5) -> None:
        self.max_tables = max_tables
        self.default_n = default_n

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        query = str(args.get("query") or ctx.query)
        operation = str(args.get("operation") or detect_operation(query) or "sum")
        candidates = await self._table_documents(query, ctx, args.get("document_id"))
        for document_id, title, source in candidates:
            table = await ctx.retriever.table(document_id)
            if table is None or not table.rows:
                continue
            computed = _compute(
                table.columns,
                [_Row(cid, list(cells)) for cid, cells in table.rows],
                query,
                operation,
                title,
                self.default_n,
            )
            if computed is None:
                continue
            period, call = computed.period, computed.call
            identity = {"dataset": title, "source": source, "period": period, "call": call}
            shown = [
                Evidence(text=text, kind="tool", identity=identity, score=1.0, aggregate=agg)
                for text, agg in computed.pieces
            ]
            chunk_ids = list(dict.fromkeys(r.chunk_id for r in computed.used))[:MAX_ROW_PASSAGES]
            chunks = await asyncio.gather(*(ctx.retriever.chunk(cid) for cid in chunk_ids))
            rows = [
                Evidence.of_chunk(c, 0.9) for c in chunks if c is not None and ctx.in_scope(c.document_id)
            ]
            return ToolResult("ok", [*shown, *rows])
        return ToolResult("empty")

    async def _table_documents(self, query: str, ctx: ToolContext, named: Any) -> list[tuple[str, str, str]]:
        if named:
            docs = {d.document_id: d for d in await ctx.retriever.documents()}
            doc = docs.get(str(named))
            if doc is None or not ctx.in_scope(doc.document_id):
                return []
            return [(doc.document_id, doc.identity.title, doc.source)]
        hits = await ctx.retriever.search(query, top_k=20, document_ids=ctx.document_ids)
        out: dict[str, tuple[str, str, str]] = {}
        for hit in hits:
            c = hit.chunk
            if c.kind == "table" and ctx.in_scope(c.document_id):
                out.setdefault(c.document_id, (c.document_id, c.document_title, c.source))
        return list(out.values())[: self.max_tables]


def _numeric_ratio(rows: list[_Row], i: int) -> float:
    values = [r.cells[i] for r in rows if i < len(r.cells) and r.cells[i].strip()]
    if not values:
        return 0.0
    return sum(parse_number(v) is not None for v in values) / len(values)


def _classify(columns: list[str], rows: list[_Row]) -> tuple[list[int], list[int], int | None, int | None]:
    """(text columns, numeric measure candidates, year column, level column)."""
    text_cols, measures = [], []
    year_col = level_col = None
    for i, col in enumerate(columns):
        tokens = _header_tokens(col)
        numeric = _numeric_ratio(rows, i) >= 0.8
        if any(t in ("tahun", "year") for t in tokens):
            year_col = i
        elif numeric and any(t in _LEVEL_HINTS for t in tokens):
            level_col = i
        elif numeric and not any(t in _ID_HINTS for t in tokens):
            measures.append(i)
        elif not numeric:
            text_cols.append(i)
    return text_cols, measures, year_col, level_col


def _names_measure(term: str, header_tokens: list[str]) -> bool:
    alternatives = (term, *_MEASURE_SYNONYMS.get(term, ()))
    return any(term_matches(alt, h) for alt in alternatives for h in header_tokens)


def _pick_measure(
    columns: list[str], measures: list[int], terms: list[str], asked_years: list[str]
) -> int | None:
    if not measures:
        return None

    def rank(i: int) -> tuple[int, int, int, int]:
        tokens = _header_tokens(columns[i])
        asked = sum(_names_measure(t, tokens) for t in terms)
        dated = sum(y in columns[i] for y in asked_years)
        hinted = sum(h in _MEASURE_HINTS for h in tokens)
        return (asked, dated, hinted, -i)  # on a tie the first column: the plan (pagu) before its realisation

    return max(measures, key=rank)


def _percent_column(column: str, rows: list[_Row], i: int) -> bool:
    tokens = _header_tokens(column)
    return (
        "%" in column
        or any(t in ("persen", "persentase", "percent") for t in tokens)
        or any("%" in r.cells[i] for r in rows[:20] if i < len(r.cells))
    )


def _cell_words(row: _Row, cols: list[int]) -> list[str]:
    return [w for i in cols if i < len(row.cells) for w in words(row.cells[i])]


def _compute(
    columns: list[str], rows: list[_Row], query: str, operation: str, title: str, default_n: int
) -> _Computed | None:
    text_cols, measures, year_col, level_col = _classify(columns, rows)
    terms = [
        t
        for t in content_terms(query)
        if t not in OPERATION_TERMS and t not in GENERIC_TERMS and not t[0].isdigit()
    ]
    asked_years = years(query)
    if any(t in _PERCENT_ASKED for t in words(query)):
        # a share: only a percentage column answers it, never a sum of amounts
        measures = [i for i in measures if _percent_column(columns[i], rows, i)]
        terms = [t for t in terms if t not in _PERCENT_ASKED]
    measure = _pick_measure(columns, measures, terms, asked_years)
    if measure is None:
        return None
    measure_name = columns[measure]
    header_words = {w for c in columns for w in _header_tokens(c)}
    context_words = set(words(title)) | header_words
    filters = [
        t for t in terms if t not in context_words and not _names_measure(t, _header_tokens(measure_name))
    ]
    if not _table_knows(rows, text_cols, filters, context_words):
        return None  # an asked word this table never uses: its rows cannot answer the question
    if (
        year_col is None
        and asked_years
        and not all(y in title or any(y in c for c in columns) for y in asked_years)
    ):
        return None  # a year the table does not cover
    if year_col is not None and asked_years:
        rows = [r for r in rows if any(y in r.cells[year_col] for y in asked_years)]
    groups = _split_groups(query, filters) if operation == "compare" else [filters]
    selected: list[tuple[str, list[_Row]]] = []
    for group_terms in groups:
        matched = _filter(rows, text_cols, group_terms)
        if level_col is not None and matched:
            top = min(parse_number(r.cells[level_col]) or 0 for r in matched)
            matched = [r for r in matched if (parse_number(r.cells[level_col]) or 0) == top]
        selected.append((" ".join(group_terms), matched))
    if not any(m for _, m in selected):
        return None
    currency = "rp" in _header_tokens(measure_name) or any("Rp" in r.cells[measure] for r in rows[:20])

    def money(value: float) -> str:
        exact = ("Rp" if currency else "") + format_number(value)
        scaled = format_scaled(value)
        return f"{exact} (sekitar {'Rp' if currency else ''}{scaled})" if scaled else exact

    def value(row: _Row) -> float:
        return parse_number(row.cells[measure]) or 0.0

    def describe(group: str, count: int) -> str:
        text = f"{count} baris tabel {title}"
        if group:
            text += " yang memuat " + " dan ".join(f'"{t}"' for t in group.split())
        if year_col is not None and asked_years:
            text += f" pada {columns[year_col]} {' atau '.join(asked_years)}"
        return text

    period = ", ".join(asked_years) or _period(rows, year_col)
    label_col = max(text_cols, key=lambda i: sum(len(r.cells[i]) for r in rows[:50]), default=None)
    shown_filter = " | ".join(g for g, _ in selected)
    call = f"table_query(operation={operation}, column={measure_name}, filter={shown_filter})"
    if operation in ("top", "bottom"):
        n = _asked_n(query) or default_n
        ranked = sorted(selected[0][1], key=value, reverse=operation == "top")[:n]
        word = "terbesar" if operation == "top" else "terkecil"
        lines = [
            f"{len(ranked)} nilai {measure_name} {word} dari {describe(selected[0][0], len(selected[0][1]))}:"
        ]
        for i, r in enumerate(ranked, 1):
            label = r.cells[label_col] if label_col is not None else f"baris {i}"
            lines.append(f"{i}. {label}: {money(value(r))}")
        return _Computed([("\n".join(lines), None)], ranked, period, call)
    if operation == "average":
        group, matched = selected[0]
        avg = sum(value(r) for r in matched) / len(matched)
        text = f"Rata-rata {measure_name} dari {describe(group, len(matched))} adalah {money(avg)}."
        agg = _aggregate(operation, columns, measure, matched)
        return _Computed([(text, agg)], _largest(matched, value), period, call) if agg else None
    if operation == "compare" and len(selected) > 1:
        # One computed figure per group, each with its rows. No difference is stated: a figure derived
        # from two computed ones is not something the judge can support.
        pieces: list[tuple[str, Aggregate | None]] = []
        used: list[_Row] = []
        for group, matched in selected:
            if not matched:
                continue
            total = sum(value(r) for r in matched)
            agg = _aggregate("sum", columns, measure, matched)
            if agg is None:
                return None
            text = f"Jumlah {measure_name} dari {describe(group, len(matched))} adalah {money(total)}."
            pieces.append((text, agg))
            used.extend(_largest(matched, value, 5))
        return _Computed(pieces, used, period, call)
    group, matched = selected[0]
    total = sum(value(r) for r in matched)
    text = f"Jumlah {measure_name} dari {describe(group, len(matched))} adalah {money(total)}."
    agg = _aggregate("sum", columns, measure, matched)
    return _Computed([(text, agg)], _largest(matched, value), period, call) if agg else None


def _table_knows(rows: list[_Row], text_cols: list[int], filters: list[str], context: set[str]) -> bool:
    """Every asked word names a row somewhere in the table (or its title and columns)."""
    row_words = {w for r in rows for w in _cell_words(r, text_cols)}
    known = row_words | context
    return all(any(term_matches(t, w) for w in known) for t in filters)


def _filter(rows: list[_Row], text_cols: list[int], terms: list[str]) -> list[_Row]:
    """Rows matching every term that occurs in the table at all; terms the table never uses are ignored,
    and when no row matches them all, the rows matching the most terms are kept."""
    if not terms:
        return rows
    row_words = [_cell_words(r, text_cols) for r in rows]
    live = [t for t in terms if any(any(term_matches(t, w) for w in ws) for ws in row_words)]
    if not live:
        return []
    scores = [sum(any(term_matches(t, w) for w in ws) for t in live) for ws in row_words]
    best = max(scores)
    return [r for r, s in zip(rows, scores, strict=True) if s == best and s > 0]


def _split_groups(query: str, filters: list[str]) -> list[list[str]]:
    """``bandingkan belanja pendidikan dan kesehatan`` → [[belanja, pendidikan], [belanja, kesehatan]]:
    the terms around the last conjunction differ, the ones before them are shared."""
    tokens = words(query)
    for conj in ("dengan", "dan", "vs", "versus", "atau"):
        if conj in tokens:
            i = len(tokens) - 1 - tokens[::-1].index(conj)
            left = [t for t in filters if t in tokens[:i]]
            right = [t for t in filters if t in tokens[i + 1 :]]
            if left and right:
                return [left, right] if len(left) == 1 else [left, left[:-1] + right]
    return [filters]


def _asked_n(query: str) -> int | None:
    for w in words(query):
        if w.isdigit() and 1 <= int(w) <= 50 and not years(w):
            return int(w)
    return None


def _largest(rows: list[_Row], value: Any, n: int = MAX_ROW_PASSAGES) -> list[_Row]:
    return sorted(rows, key=value, reverse=True)[:n]


def _period(rows: list[_Row], year_col: int | None) -> str | None:
    if year_col is None:
        return None
    found = sorted({r.cells[year_col].strip().split(".")[0] for r in rows if r.cells[year_col].strip()})
    return ", ".join(found[:5]) or None
