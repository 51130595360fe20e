"""A computed figure (sum, mean, count over rows) is judged against the judge's own recomputation, never
against the value the tool stated.

The tool that computed it hands over the rows it read (``header`` and cells, as read) and the operation;
:func:`restate` recomputes the figure from those cells and writes the passage the judge reads: the rows as a
Markdown table, then one sentence with the recomputed result and the number of rows. A claim's figure is
then grounded like any other (language.figure: equal at the claim's precision, same unit and scale), so it is
``supported`` only when it equals the recomputed value; any other figure derived from the rows (a
difference, a share, a growth rate) appears nowhere in that passage and is not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from language.figure import PERIOD_KINDS
from language.numbers import extract_figures

OPERATIONS = ("sum", "mean", "count")
_PLACES = Decimal(1).scaleb(-12)  # a mean is written to 12 decimals: finer than any claim states
_WORDS = {"sum": "jumlah", "mean": "rata-rata"}


class Recomputed(NamedTuple):
    value: Decimal | None  # None: a cell is not one readable figure, so nothing can be recomputed
    rows: int
    unit_prefix: str  # "Rp" when the column's cells are rupiah amounts
    suffix: str  # "%" when they are percentages


def cell_value(cell: str) -> tuple[Decimal, str, str] | None:
    """The one quantity a cell states (scale words applied), with its currency prefix and percent suffix."""
    figures = [f for f in extract_figures(cell, lang="id") if f.kind not in PERIOD_KINDS]
    if len(figures) != 1 or figures[0].kind not in ("amount", "count", "percent"):
        return None
    figure = figures[0]
    return figure.value, "Rp" if figure.unit == "IDR" else "", "%" if figure.kind == "percent" else ""


def recompute(
    operation: str, column: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> Recomputed:
    """``operation`` over ``column`` of ``rows``; every cell must be one figure of one kind and unit."""
    if operation not in OPERATIONS or not rows:
        return Recomputed(None, len(rows), "", "")
    if operation == "count":
        return Recomputed(Decimal(len(rows)), len(rows), "", "")
    if column not in header:
        return Recomputed(None, len(rows), "", "")
    index = list(header).index(column)
    values: list[Decimal] = []
    kinds: set[tuple[str, str]] = set()
    for row in rows:
        read = cell_value(row[index]) if index < len(row) else None
        if read is None:
            return Recomputed(None, len(rows), "", "")
        values.append(read[0])
        kinds.add(read[1:])
    if len(kinds) > 1:  # rupiah next to bare numbers, or percentages next to amounts: no sum of them
        return Recomputed(None, len(rows), "", "")
    prefix, suffix = kinds.pop()
    total = sum(values, Decimal(0))
    value = total if operation == "sum" else (total / len(values)).quantize(_PLACES, ROUND_HALF_UP)
    return Recomputed(value, len(rows), prefix, suffix)


def format_id(value: Decimal) -> str:
    """Indonesian digits (1.234.567,5): unambiguous for the judge's parser, so a fraction of exactly three
    digits gets a fourth (2,1250 is never read as the English 2,125 = two thousand)."""
    sign = "-" if value < 0 else ""
    text = format(abs(value).normalize(), "f")
    whole, _, fraction = text.partition(".")
    grouped = f"{int(whole):,}".replace(",", ".")
    if len(fraction) == 3:
        fraction += "0"
    return sign + grouped + ("," + fraction if fraction else "")


def shared_cells(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, skip: str = ""
) -> list[tuple[str, str]]:
    """(column, value) of every column but ``skip`` whose cell is the same, and not empty, in all rows."""
    out = []
    for i, name in enumerate(header):
        values = {_cell(row[i]) if i < len(row) else "" for row in rows}
        if name != skip and len(values) == 1 and "" not in values:
            out.append((name, values.pop()))
    return out


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def restate(
    operation: str, column: str, header: Sequence[str], rows: Sequence[Sequence[str]], *, dataset: str = ""
) -> str:
    """The passage the judge reads for a computed figure: the rows, then the judge's own result."""
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    lines.append("| " + " | ".join("---" for _ in header) + " |")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    done = recompute(operation, column, header, rows)
    of = f"{done.rows} baris tabel" + (f" {dataset}" if dataset else "")
    shared = shared_cells(header, rows, skip="" if operation == "count" else column)
    if shared:  # what every row has in common names the figure's entity and period, next to it
        of += " (" + ", ".join(f"{h} {v}" for h, v in shared) + ")"
    if done.value is None:
        lines.append(f"Nilai {column} dari {of} tidak dapat dihitung ulang.")
    elif operation == "count":
        lines.append(f"Dihitung ulang: banyaknya {column} dari {of} adalah {done.rows}.")
    else:
        figure = f"{done.unit_prefix}{format_id(done.value)}{done.suffix}"
        lines.append(f"Dihitung ulang: {_WORDS[operation]} {column} dari {of} adalah {figure}.")
    return "\n".join(lines)
