"""Text extraction: one file in, its text (the ``source_text`` every chunk offset points into) out.

Markdown and plain text keep their bytes (decoded, newlines normalised); HTML becomes text with block
breaks and ``#`` heading lines; PDF pages are joined with a blank line and their start offsets kept;
CSV/XLSX tables are rendered one row per line (cells joined by `` | ``) under their header line.
Every failure raises :class:`ExtractionError` with one fixed, safe sentence.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".csv", ".xlsx")
CELL_SEPARATOR = " | "


class ExtractionError(Exception):
    """A file that cannot be indexed; ``str(error)`` is a fixed sentence safe to show."""


@dataclass
class TableLayout:
    """Where one table sits in the extracted text: its header line and one span per data row."""

    name: str
    columns: list[str]
    header_span: tuple[int, int]
    row_spans: list[tuple[int, int]]
    rows: list[list[str]]


@dataclass
class Extracted:
    text: str
    kind: str  # markdown | text | html | pdf | table
    body_start: int = 0  # offset after a YAML front matter
    page_starts: list[int] | None = None  # PDF: offset where each page starts
    title_hint: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # front matter fields
    tables: list[TableLayout] = field(default_factory=list)


def extract(path: Path, data: bytes) -> Extracted:
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown"):
        return _markdown(_decode(data))
    if suffix == ".txt":
        return _markdown(_decode(data), kind="text")
    if suffix in (".html", ".htm"):
        return _html(_decode(data))
    if suffix == ".pdf":
        return _pdf(data)
    if suffix == ".csv":
        return _tables([(path.stem, _csv_rows(_decode(data)))])
    if suffix == ".xlsx":
        return _tables(_xlsx_sheets(data))
    raise ExtractionError(f"unsupported file type '{suffix or path.name}'")


def _decode(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ExtractionError("the file is not valid text (binary or unknown encoding)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
        bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\n\r\t\f"))
        if bad > max(3, len(text) // 100):
            raise ExtractionError("the file is not valid text (binary or unknown encoding)") from None
    controls = sum(1 for ch in text[:20000] if ord(ch) < 32 and ch not in "\n\r\t\f")
    if controls > max(3, min(len(text), 20000) // 100):
        raise ExtractionError("the file is not valid text (binary or unknown encoding)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(?:\n|\Z)", re.DOTALL)


def _markdown(text: str, kind: str = "markdown") -> Extracted:
    meta: dict[str, Any] = {}
    body_start = 0
    m = _FRONT_MATTER.match(text)
    if m:
        try:
            loaded = yaml.safe_load(m.group(1))
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            meta = {str(k).lower(): v for k, v in loaded.items()}
            body_start = m.end()
    if not text[body_start:].strip():
        raise ExtractionError("no text could be extracted from the file")
    title = meta.get("title")
    return Extracted(
        text=text, kind=kind, body_start=body_start, meta=meta, title_hint=str(title) if title else None
    )


class _HTMLText(HTMLParser):
    _BLOCKS = {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "li",
        "tr",
        "br",
        "table",
        "ul",
        "ol",
        "blockquote",
        "pre",
        "dd",
        "dt",
        "main",
        "aside",
        "nav",
        "form",
        "hr",
    }
    _SKIP = {"script", "style", "noscript", "template", "svg"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: str | None = None
        self._skip = 0
        self._in_title = False
        self._cells_in_row = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in ("td", "th"):
            if self._cells_in_row:
                self.parts.append(CELL_SEPARATOR)
            self._cells_in_row += 1
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in self._BLOCKS:
            self.parts.append("\n")
            if tag == "tr":
                self._cells_in_row = 0

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif re.fullmatch(r"h[1-6]", tag) or tag in ("p", "div", "table", "ul", "ol", "section", "article"):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.title = ((self.title or "") + data).strip() or None
            return
        self.parts.append(re.sub(r"\s+", " ", data))


def _html(markup: str) -> Extracted:
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    raw = "".join(parser.parts)
    lines = [line.strip() for line in raw.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
    if not text.strip():
        raise ExtractionError("no text could be extracted from the file")
    return Extracted(text=text, kind="html", title_hint=parser.title)


def _pdf(data: bytes) -> Extracted:
    import pypdf
    from pypdf.errors import PdfReadError

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except ExtractionError:
        raise
    except (
        PdfReadError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        OSError,
        RecursionError,
        AssertionError,
        ZeroDivisionError,
    ):
        raise ExtractionError("the PDF could not be parsed (corrupt or unsupported)") from None
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page_text in pages:
        page_text = page_text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
        starts.append(offset)
        parts.append(page_text + "\n\n")
        offset += len(page_text) + 2
    text = "".join(parts)
    if not text.strip():
        raise ExtractionError("no text could be extracted from the PDF (scanned images need OCR first)")
    info_title = None
    try:
        info_title = reader.metadata.title if reader.metadata else None
    except Exception:  # noqa: BLE001 - a broken info dictionary only loses the title hint
        info_title = None
    return Extracted(text=text, kind="pdf", page_starts=starts, title_hint=info_title or None)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return " ".join(str(value).split())


def _csv_rows(text: str) -> list[list[str]]:
    sample = text[:8192]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        return [[_cell(c) for c in row] for row in csv.reader(io.StringIO(text), dialect)]
    except csv.Error:
        raise ExtractionError("the CSV file could not be parsed") from None


def _xlsx_sheets(data: bytes) -> list[tuple[str, list[list[str]]]]:
    import zipfile

    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError):
        raise ExtractionError("the spreadsheet could not be parsed (corrupt or not XLSX)") from None
    try:
        return [
            (sheet.title, [[_cell(c) for c in row] for row in sheet.iter_rows(values_only=True)])
            for sheet in book.worksheets
        ]
    finally:
        book.close()


def _tables(sheets: list[tuple[str, list[list[str]]]]) -> Extracted:
    parts: list[str] = []
    offset = 0
    layouts: list[TableLayout] = []

    def put(line: str) -> tuple[int, int]:
        nonlocal offset
        start = offset
        parts.append(line + "\n")
        offset += len(line) + 1
        return start, start + len(line)

    for name, raw_rows in sheets:
        rows = [row for row in raw_rows if any(cell for cell in row)]
        if not rows:
            continue
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        header = [cell or f"kolom_{i + 1}" for i, cell in enumerate(rows[0])]
        if len(sheets) > 1:
            put(f"## {name}")
        header_span = put(CELL_SEPARATOR.join(header))
        spans = [put(CELL_SEPARATOR.join(row)) for row in rows[1:]]
        layouts.append(
            TableLayout(name=name, columns=header, header_span=header_span, row_spans=spans, rows=rows[1:])
        )
        put("")
    if not layouts:
        raise ExtractionError("the table has no rows")
    return Extracted(text="".join(parts), kind="table", tables=layouts)
