"""A CSV passage (a header line and one data row, as the APBA tables are cited) read as the sentence it
stands for.

The rule judge reads figures by their words: "Belanja Pegawai sebesar Rp1.250.000,00". A raw CSV row writes
its amount in float notation (``1250000.0``) among account codes (``5.1.02.01``), so its amount was read as
another figure and its codes as quantities. Here the row becomes prose: its name and category fields, then
its amount column written as rupiah (any numeric notation: ``1250000``, ``1250000.0``, ``1.25e6``), then its
budget year. Codes and ids are left out: they identify a row, they count nothing. Each field keeps the
offset of its cell in the original text, so a span found in the prose points back into the cited CSV
(``origin``).
"""

from __future__ import annotations

import csv
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import NamedTuple

# Column names that carry the row's name or category (read as words), its amount, its year: the APBA export's
# own header vocabulary and the plain names a table of the same kind uses.
_NAME_COLUMNS = (
    "nama_skpd", "nama_urusan", "klasifikasi_akun", "kategori_belanja", "nama_level", "uraian", "indikator",
)  # fmt: skip
_AMOUNT_RE = re.compile(r"^(jumlah|nilai|anggaran|pagu|realisasi)(_rp)?$|_rp$")
_YEAR_COLUMNS = ("tahun_anggaran", "tahun")
_NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class Piece(NamedTuple):
    start: int  # offset in the prose
    end: int
    origin_start: int  # offset of the cell in the CSV text
    origin_end: int


class CsvProse(NamedTuple):
    text: str
    pieces: tuple[Piece, ...]

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The CSV cell a prose span was read from (the whole cell: "Rp1.250.000,00" is ``1250000.0``)."""
        for piece in self.pieces:
            if piece.start <= start < piece.end:
                return piece.origin_start, piece.origin_end
        return 0, 0


def rupiah(cell: str) -> str | None:
    """A CSV amount in any numeric notation as Indonesian rupiah ("1250000.5" → "Rp1.250.000,50"); None when
    the cell is not a plain number (a CSV amount is its value, whatever notation the export chose)."""
    if not _NUMBER_RE.match(cell.strip()):
        return None
    try:
        value = Decimal(cell.strip())
    except InvalidOperation:
        return None
    sign = "minus " if value < 0 else ""
    cents = abs(value).quantize(Decimal("0.01"))
    whole, fraction = f"{cents:f}".split(".")
    grouped = f"{int(whole):,}".replace(",", ".")
    return f"{sign}Rp{grouped},{fraction}"


def _cells(line: str, offset: int) -> list[tuple[str, int, int]]:
    """Cells of one CSV line with their offsets (quoted cells keep the offsets of their quotes)."""
    values = next(csv.reader([line]))
    cells, position = [], 0
    for value in values:
        start = position
        if line.startswith('"', position):
            end = position + 1
            while end < len(line):
                if line[end] == '"' and line[end + 1 : end + 2] == '"':
                    end += 2
                    continue
                if line[end] == '"':
                    end += 1
                    break
                end += 1
        else:
            comma = line.find(",", position)
            end = len(line) if comma < 0 else comma
        cells.append((value, offset + start, offset + end))
        position = end + 1
    return cells


@lru_cache(maxsize=1024)
def csv_prose(text: str) -> CsvProse | None:
    """The prose of a header + row CSV passage, or None when the text is not one (then read as it is)."""
    lines = text.split("\n")
    if len(lines) != 2 or lines[0].count(",") < 2 or " " in lines[0].strip():
        return None
    header = [name.strip().lower() for name in next(csv.reader([lines[0]]))]
    try:
        row = _cells(lines[1], len(lines[0]) + 1)
    except (csv.Error, StopIteration):
        return None
    if len(row) != len(header) or not any(_AMOUNT_RE.search(name) for name in header):
        return None
    fields = dict(zip(header, row, strict=True))
    parts: list[tuple[str, int, int]] = []
    for name in _NAME_COLUMNS:
        if name in fields and fields[name][0].strip():
            parts.append((fields[name][0].strip(), fields[name][1], fields[name][2]))
    amounts = [(name, cell) for name, cell in fields.items() if _AMOUNT_RE.search(name)]
    written = [(rupiah(cell[0]), cell) for _, cell in amounts]
    if not any(value for value, _ in written):
        return None
    prose, pieces = "", []

    def add(words: str, origin: tuple[int, int]) -> None:
        nonlocal prose
        pieces.append(Piece(len(prose), len(prose) + len(words), *origin))
        prose += words

    for index, (words, start, end) in enumerate(parts):
        add(words if index == 0 else f", {words}", (start, end))
    for value, (_, start, end) in written:
        if value:
            add(f" sebesar {value}", (start, end))
    for name in _YEAR_COLUMNS:
        if name in fields and fields[name][0].strip().isdigit():
            add(f" pada tahun anggaran {fields[name][0].strip()}", fields[name][1:])
            break
    add(".", (len(text), len(text)))
    return CsvProse(prose, tuple(pieces))
