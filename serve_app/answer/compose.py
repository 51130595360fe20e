"""Segments → one Markdown answer with exact offsets.

The server writes every piece of layout; the agent's text is copied byte for byte, so each span satisfies
``answer[start:end] == segment.text`` (code points) and the same in UTF-16 code units. Layout, the only
text no span covers:

* ``paragraph`` / ``heading`` / ``table_header`` start a new block, separated from the previous one by a
  blank line (``"\\n\\n"``); a heading is written ``"## " + text``.
* ``list_item`` is written ``"- " + text``; consecutive items are separated by one ``"\\n"``, and a list is
  separated from other blocks by a blank line.
* ``continue`` joins the previous paragraph, heading or list item with one space.
* ``table_header`` and ``table_row`` hold cells separated by ``|`` (``"2023 | Rp5 miliar"``). The server
  writes ``"| " + text + " |"`` per line and the separator row ``"| --- | --- |"`` after the header, so a
  row's span is its inner text exactly as the agent wrote it, with the pipes between its cells. A literal
  pipe inside a cell is written escaped, ``\\|`` (as GitHub Flavored Markdown reads it); outer pipes, a
  ``\\\\|`` sequence and a cell count that differs from the header are rejected.

Rejected (:func:`validate_segments`, which sends the agent one regeneration with the problems listed):
empty or whitespace-padded text, line breaks or control characters inside a segment (they would break the
layout around it), unknown ``kind`` or ``layout``, ``continue`` first or after a table line, a table row
without a header, and paragraph, heading or list-item text that starts with a Markdown block marker
(``#``, ``- ``, ``1. ``, ``>``, fences, rules, HTML), which would change the layout the server writes,
and ``[P1]`` labels in the text (the answer carries none; keys belong in ``cites``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from serve_app.answer.segments import KINDS, LAYOUTS, ComposedAnswer, ComposedSpan, Segment

# Every character str.splitlines() breaks on, so no client can see a segment split over two lines.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# The same sets as character classes: every unit the writer considers is validated, so these run often.
_LINE_BREAK = re.compile("[" + re.escape("".join(sorted(_LINE_BREAKS))) + "]")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # C0 controls except tab, and DEL
_BLOCK_MARKER = re.compile(
    r"^(?:#{1,6}(?:\s|$)|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|>|`{3,}|~{3,}|(?:[-*_][ \t]*){3,}$"
    r"|<(?:[A-Za-z]|/|!|\?))"
)
_CITATION_LABEL = re.compile(r"\[\s*P\d+\s*\]")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_BLOCK_LAYOUTS = ("paragraph", "heading", "list_item")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (characters outside the BMP count twice)."""
    # Encoding is done in C; "surrogatepass" counts a lone surrogate (valid in a str) as one unit.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def table_cells(text: str) -> list[str]:
    """Cells of a table segment, split on unescaped pipes and stripped (``\\|`` stays in its cell)."""
    return [cell.strip() for cell in _UNESCAPED_PIPE.split(text)]


def _text_problems(text: object, layout: str) -> list[str]:
    if not isinstance(text, str):
        return ["text must be a string"]
    if not text.strip():
        return ["text is empty"]
    problems = []
    if text != text.strip():
        problems.append("text starts or ends with whitespace")
    if _LINE_BREAK.search(text):
        problems.append("text contains a line break; write one segment per line of the answer")
    if _CONTROL.search(text):
        problems.append("text contains a control character")
    if layout in _BLOCK_LAYOUTS and _BLOCK_MARKER.match(text.strip()):
        problems.append("text starts with a Markdown block marker; use the layout field instead")
    if layout == "heading" and re.search(r"(?:^|\s)#+$", text):
        problems.append("heading text ends with '#' characters, which Markdown hides")
    if _CITATION_LABEL.search(text):
        problems.append("text contains a citation label such as [P1]; put passage keys in cites only")
    if layout in ("table_header", "table_row"):
        stripped = text.strip()
        if stripped.startswith("|") or (stripped.endswith("|") and not stripped.endswith("\\|")):
            problems.append("write table cells without outer pipes, e.g. 'a | b'")
        if "\\\\|" in text:
            problems.append("ambiguous '\\\\|' in a table cell")
    return problems


def validate_segments(segments: Sequence[Segment]) -> list[str]:
    """Every problem that would make :func:`compose` refuse these segments (empty list: valid)."""
    problems: list[str] = []
    if not segments:
        return ["no segments"]
    header_cells: int | None = None  # cell count of the table being written, None outside a table
    previous: str | None = None
    for i, seg in enumerate(segments):
        where = f"segment {i + 1}"
        kind, layout = seg.kind, seg.layout
        if kind not in KINDS:
            problems.append(f"{where}: unknown kind {kind!r} (use fact or framing)")
        if layout not in LAYOUTS:
            problems.append(f"{where}: unknown layout {layout!r} (use one of {', '.join(LAYOUTS)})")
        if not isinstance(seg.cites, tuple | list) or not all(isinstance(c, str) for c in seg.cites):
            problems.append(f"{where}: cites must be a list of passage keys such as 'P1'")
        problems.extend(f"{where}: {p}" for p in _text_problems(seg.text, layout))
        if layout == "continue":
            if previous is None:
                problems.append(f"{where}: 'continue' cannot be the first segment")
            elif previous in ("table_header", "table_row"):
                problems.append(f"{where}: 'continue' cannot follow a table line; use table_row")
        if layout == "table_header":
            header_cells = len(table_cells(seg.text)) if isinstance(seg.text, str) else None
        elif layout == "table_row":
            if header_cells is None:
                problems.append(f"{where}: table_row without a table_header before it")
            elif isinstance(seg.text, str) and len(table_cells(seg.text)) != header_cells:
                problems.append(
                    f"{where}: table_row has {len(table_cells(seg.text))} cells "
                    f"but the header has {header_cells}"
                )
        elif layout in LAYOUTS:
            header_cells = None
        if layout in LAYOUTS:
            previous = layout
    return problems


class _Writer:
    """Appends pieces to the answer while tracking both offset units."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.cp = 0
        self.u16 = 0

    def write(self, piece: str) -> tuple[int, int, int, int]:
        start_cp, start_u16 = self.cp, self.u16
        self.parts.append(piece)
        self.cp += len(piece)
        self.u16 += utf16_len(piece)
        return start_cp, self.cp, start_u16, self.u16


def _context(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def compose(segments: Sequence[Segment]) -> ComposedAnswer:
    """Compose valid segments into Markdown with exact spans; raises ValueError on invalid segments."""
    problems = validate_segments(segments)
    if problems:
        raise ValueError("invalid segments: " + "; ".join(problems))
    out = _Writer()
    spans: list[ComposedSpan] = []
    heading = ""  # text of the nearest heading above
    block_layout: str | None = None  # paragraph | heading | list | table
    block_text = ""  # the current block's text as the reader sees it (a paragraph becomes a lead-in)
    lead_in = ""  # the paragraph right before the current list or table
    header = ""  # the current table's header segment text
    open_line: str | None = None  # the table line being written: "header" | "row"
    context = ""  # context of the current block (continue inherits it)

    def close_table_line() -> None:
        nonlocal open_line
        if open_line is not None:
            out.write(" |")
            if open_line == "header":
                out.write("\n| " + " | ".join("---" for _ in table_cells(header)) + " |")
            open_line = None

    def new_block(layout: str, marker: str) -> None:
        nonlocal block_layout, block_text, lead_in
        close_table_line()
        if block_layout is not None:
            out.write("\n\n")
        if layout in ("list", "table"):
            lead_in = block_text if block_layout == "paragraph" else ""
        block_layout, block_text = layout, ""
        out.write(marker)

    for index, seg in enumerate(segments):
        layout, text = seg.layout, seg.text
        if layout == "paragraph":
            new_block("paragraph", "")
            context = _context(heading)
        elif layout == "heading":
            new_block("heading", "## ")
            context = ""
        elif layout == "list_item":
            if block_layout == "list":
                out.write("\n- ")
                block_text = ""
            else:
                new_block("list", "- ")
            context = _context(heading, lead_in)
        elif layout == "continue":
            out.write(" ")
        elif layout == "table_header":
            new_block("table", "| ")
            header, open_line = text, "header"
            context = _context(heading, lead_in)
        else:  # table_row: validation guarantees a header above it
            close_table_line()
            out.write("\n| ")
            open_line = "row"
            context = _context(heading, lead_in, header)
        start, end, start_u16, end_u16 = out.write(text)
        block_text = f"{block_text} {text}" if layout == "continue" else text
        if block_layout == "heading":
            heading = block_text
        spans.append(ComposedSpan(index, seg, start, end, start_u16, end_u16, context=context))
    close_table_line()
    return ComposedAnswer(answer="".join(out.parts), spans=tuple(spans))
