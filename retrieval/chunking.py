"""Structure-aware chunking: spans of the extracted text that follow the document's own structure.

Legal documents are cut at BAB / Bagian / Paragraf / Pasal, a long Pasal at its ayat, a long ayat at its
list items (huruf / angka), then at paragraphs, sentences and finally spaces, packing neighbours up to
``max_chars``. Markdown headings and list items do the same for other documents; tables give one chunk
per row. Headings are not part of a chunk's text: they are in its section path and reader context.
Every span satisfies ``text[start:end] == chunk text`` by construction (spans only, no copies).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from retrieval.extract import Extracted

MAX_CHARS = 1200


@dataclass
class Span:
    start: int
    end: int
    section_path: tuple[str, ...]
    context: str = ""
    kind: str = "text"
    pasal: str | None = None  # article number ("183", "18A") when the span lies inside one
    pasal_last: str | None = None  # last article of a merged run of short Penjelasan articles
    ayats: tuple[str, ...] = ()  # ayat labels the span covers; () = the whole article
    penjelasan: bool = False
    page: int | None = None
    table_index: int | None = None
    row_index: int | None = None


@dataclass
class _Marker:
    pos: int  # where the marker starts
    body: int  # where the unit's own text starts (after a heading, at the marker for a Pasal)
    level: int
    label: str
    heading: str  # the heading line shown as reader context
    pasal: str | None = None
    penjelasan_root: bool = False


@dataclass
class _Frame:
    level: int
    label: str
    heading: str
    pasal: str | None = None
    children: list[str] = field(default_factory=list)


_MD_HEADING = re.compile(r"(?m)^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_BAB = re.compile(
    r"(?<![\w])BAB\s+(?P<num>[IVXLCDM]+|\d+)\b(?P<title>(?:[ \t]+(?!Pasal\b|Bagian\b|Paragraf\b)"
    r"[A-Z0-9][A-Z0-9,./&'()\-]*)*)"
)
_BAGIAN = re.compile(
    r"(?<![\w])Bagian\s+(?P<num>Ke(?:satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan|sepuluh"
    r"|sebelas)\w*(?:\s+(?:Belas|Puluh))?|Pertama)\b(?P<title>[^\n]{0,160}?)"
    r"(?=\s+Paragraf\s+\d|\s+Pasal\s+\d|\n|$)"
)
_PARAGRAF = re.compile(
    r"(?<![\w])Paragraf\s+(?P<num>\d+|Ke\w+)\b(?P<title>[^\n]{0,160}?)(?=\s+Pasal\s+\d|\n|$)"
)
_PASAL = re.compile(r"(?<![\w])Pasal\s+(?P<num>\d+[A-Z]?|[IVX]+)\b")
_PASAL_NOT_HEADING = re.compile(
    r"[ \t]*(?:(?:ayat|huruf|angka|dan|atau|sampai|hingga|tentang|yang|ini|tersebut|di|sebagaimana|diubah"
    r"|dihapus|dicabut|berbunyi|tetap|dalam|pada|s\.d)\b|[,);]|(?i:Undang|Peraturan|Qanun|UU\b|PP\b))"
)
_PENJELASAN = re.compile(r"(?<![\w])PENJELASAN\s+ATAS\b")
_LAMPIRAN = re.compile(r"(?m)^[ \t#]*LAMPIRAN\b")
_PREAMBLE = re.compile(r"(?<![\w])(?P<word>Menimbang|Mengingat|MEMUTUSKAN|Memutuskan)\s*(?::|(?=\s))")

# Split boundaries inside a unit, most preferred first. Each yields the offset where a new piece may start.
_AYAT_STARTS = re.compile(
    r"(?m)(?:^[ \t]*|(?<=[.;:] ))(?P<at>\((?P<label>\d+[a-z]?)\))\s"
    r"|\b(?P<at2>Ayat\s+\((?P<label2>\d+[a-z]?)\))"
)
_ITEM_STARTS = re.compile(
    r"(?m)^[ \t]*(?P<at>(?:[a-z]|\d{1,3})[.)]|[-*+•])[ \t]|(?<=[;:] )(?P<at2>(?:[a-z]|\d{1,3})\.)\s"
)
_BOUNDARY_KINDS = ("ayat", "item", "blank", "line", "sentence", "space")
_SIMPLE_BOUNDARIES = {
    "blank": re.compile(r"\n[ \t]*\n\s*"),
    "line": re.compile(r"\n\s*"),
    "sentence": re.compile(r"(?<=[.;?!])[\"')\]]?\s+"),
    "space": re.compile(r"\s+"),
}
_LEVEL_ROOT, _LEVEL_PREAMBLE, _LEVEL_BAB, _LEVEL_BAGIAN, _LEVEL_PARAGRAF, _LEVEL_PASAL = (
    10,
    11,
    11,
    12,
    13,
    14,
)


def chunk_document(
    ex: Extracted, *, max_chars: int = MAX_CHARS, skip_title_heading: bool = True
) -> list[Span]:
    if ex.tables:
        return _table_spans(ex)
    spans = _structured_spans(ex, max_chars, skip_title_heading)
    if ex.page_starts:
        for span in spans:
            span.page = bisect_right(ex.page_starts, span.start)
    return spans


def _table_spans(ex: Extracted) -> list[Span]:
    spans = []
    for t_index, table in enumerate(ex.tables):
        header = ex.text[table.header_span[0] : table.header_span[1]]
        for r_index, (start, end) in enumerate(table.row_spans):
            if start == end:
                continue
            spans.append(
                Span(
                    start,
                    end,
                    (table.name, f"baris {r_index + 1}"),
                    context=header,
                    kind="table",
                    table_index=t_index,
                    row_index=r_index,
                )
            )
    return spans


def _pasal_number(num: str) -> int | None:
    digits = re.match(r"\d+", num)
    return int(digits.group(0)) if digits else None


def _line_start(text: str, pos: int) -> bool:
    return text[text.rfind("\n", 0, pos) + 1 : pos].strip().strip("#").strip() == ""


def _markers(text: str, body_start: int, skip_title_heading: bool) -> list[_Marker]:
    found: list[_Marker] = []
    penjelasan_at = next((m.start() for m in _PENJELASAN.finditer(text, body_start)), len(text))
    for m in _PENJELASAN.finditer(text, body_start):
        found.append(
            _Marker(m.start(), m.start(), _LEVEL_ROOT, "Penjelasan", "PENJELASAN", penjelasan_root=True)
        )
        break
    for m in _LAMPIRAN.finditer(text, body_start):
        found.append(_Marker(m.start(), m.start(), _LEVEL_ROOT, "Lampiran", "LAMPIRAN"))
        break
    for m in _BAB.finditer(text, body_start):
        label = f"BAB {m.group('num')}"
        found.append(_Marker(m.start(), m.end(), _LEVEL_BAB, label, (label + m.group("title")).strip()))
    for regex, level, word in ((_BAGIAN, _LEVEL_BAGIAN, "Bagian"), (_PARAGRAF, _LEVEL_PARAGRAF, "Paragraf")):
        for m in regex.finditer(text, body_start):
            label = f"{word} {m.group('num')}"
            found.append(
                _Marker(m.start(), m.end(), level, label, " ".join((label + m.group("title")).split()))
            )
    first_structure = min(
        (mk.pos for mk in found if mk.level in (_LEVEL_BAB, _LEVEL_ROOT)), default=len(text)
    )
    expected = 0
    for m in _PASAL.finditer(text, body_start):
        num = m.group("num")
        if _PASAL_NOT_HEADING.match(text, m.end()):
            continue
        n = _pasal_number(num)
        at_line_start = _line_start(text, m.start())
        if m.start() >= penjelasan_at and expected and (n == 1 or num.isalpha()) and at_line_start:
            expected = 0
        if not at_line_start:
            if n is None:
                continue
            before = text[max(body_start, m.start() - 60) : m.start()].rstrip()
            after = text[m.end() : m.end() + 3]
            sequential = n == expected + 1 or (n == expected and num != str(n))
            boundary = before.endswith((".", ";", ":")) or bool(re.search(r"[A-Z]{2,}$", before))
            if not (sequential and boundary and re.match(r"\s+[A-Z(]", after)):
                continue
        if n is not None:
            expected = n
        first_structure = min(first_structure, m.start())
        found.append(_Marker(m.start(), m.start(), _LEVEL_PASAL, f"Pasal {num}", f"Pasal {num}", pasal=num))
    for m in _PREAMBLE.finditer(text, body_start, first_structure):
        word = m.group("word").capitalize()
        found.append(_Marker(m.start(), m.start(), _LEVEL_PREAMBLE, word, word))
    legal_text = bool(found)
    title_skipped = not skip_title_heading
    for m in _MD_HEADING.finditer(text, body_start):
        heading = m.group(2).strip()
        if any(mk.pos >= m.start() and mk.pos < m.end() for mk in found):
            continue  # a legal marker written as a Markdown heading: the legal marker wins
        if not title_skipped and len(m.group(1)) == 1 and not text[body_start : m.start()].strip():
            title_skipped = True  # the first "# Title" names the document, not a section
            found.append(_Marker(m.start(), m.end(), 1, "", ""))
            continue
        title_skipped = True
        found.append(_Marker(m.start(), m.end(), len(m.group(1)), heading, heading))
    for mk in found:
        line_start = text.rfind("\n", 0, mk.pos) + 1
        if mk.pos > line_start and _line_start(text, mk.pos):
            mk.pos = line_start  # "### Pasal 1": the hashes belong to the marker, not the previous unit
    found.sort(key=lambda mk: (mk.pos, mk.level))
    if legal_text and found and text[body_start : found[0].pos].strip():
        found.insert(0, _Marker(body_start, body_start, _LEVEL_PREAMBLE, "Pembukaan", ""))
    return found


def _structured_spans(ex: Extracted, max_chars: int, skip_title_heading: bool) -> list[Span]:
    text = ex.text
    markers = _markers(text, ex.body_start, skip_title_heading)
    spans: list[Span] = []
    stack: list[_Frame] = []
    in_penjelasan = False
    bounds = [mk.pos for mk in markers[1:]] + [len(text)]
    if not markers or markers[0].pos > ex.body_start:
        spans.extend(
            _split_unit(
                text, ex.body_start, markers[0].pos if markers else len(text), (), "", None, False, max_chars
            )
        )
    for marker, end in zip(markers, bounds):
        if marker.penjelasan_root:
            in_penjelasan = True
        while stack and stack[-1].level >= marker.level:
            stack.pop()
        if marker.label:
            stack.append(_Frame(marker.level, marker.label, marker.heading, marker.pasal))
        path = tuple(frame.label for frame in stack)
        headings = [frame.heading for frame in stack if frame.heading and frame.pasal is None]
        context = "\n".join(h[:200] for h in headings[-3:])
        pasal = stack[-1].pasal if stack and stack[-1].pasal else None
        spans.extend(_split_unit(text, marker.body, end, path, context, pasal, in_penjelasan, max_chars))
    return _merge_short_explanations(spans, text, max_chars)


def _split_unit(
    text: str,
    start: int,
    end: int,
    path: tuple[str, ...],
    context: str,
    pasal: str | None,
    penjelasan: bool,
    max_chars: int,
) -> list[Span]:
    start, end = _trim(text, start, end)
    if start >= end:
        return []
    pieces = (
        _split_with_tables(text, start, end, max_chars)
        if end - start > max_chars
        else [(start, end, "", "text")]
    )
    ayat_marks = (
        [
            (m.start("at") if m.group("at") else m.start("at2"), m.group("label") or m.group("label2"))
            for m in _AYAT_STARTS.finditer(text, start, end)
        ]
        if pasal
        else []
    )
    out = []
    for p_start, p_end, lead_in, kind in pieces:
        ayats: tuple[str, ...] = ()
        if pasal and (p_start, p_end) != (start, end) and ayat_marks:
            active = [label for pos, label in ayat_marks if pos <= p_start][-1:]
            inside = [label for pos, label in ayat_marks if p_start < pos < p_end]
            ayats = tuple(dict.fromkeys(active + inside))
        piece_path = path + ((f"ayat ({ayats[0]})",) if len(ayats) == 1 else ())
        piece_context = context
        if pasal and p_start != start:
            piece_context = "\n".join(x for x in (context, f"Pasal {pasal}") if x)
        if lead_in and lead_in.rstrip(" :").casefold() not in piece_context.casefold():
            piece_context = "\n".join(x for x in (piece_context, lead_in) if x)
        out.append(Span(p_start, p_end, piece_path, piece_context, kind, pasal, None, ayats, penjelasan))
    return out


_MD_TABLE = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*\n[ \t]*\|[ \t:|-]+\|[ \t]*(?:\n[ \t]*\|.*\|[ \t]*)*")


def _split_with_tables(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int, str, str]]:
    """Markdown tables inside a long unit become row groups that carry the header as context."""
    pieces: list[tuple[int, int, str, str]] = []
    cursor = start
    for m in _MD_TABLE.finditer(text, start, end):
        pieces.extend(_split(text, cursor, m.start(), 0, max_chars, ""))
        lines = [(lm.start(), lm.end()) for lm in re.finditer(r"[^\n]+", text[m.start() : m.end()])]
        lines = [(m.start() + a, m.start() + b) for a, b in lines]
        header = text[lines[0][0] : lines[1][1]].strip()
        group_start, group_end = lines[0][0], lines[1][1]
        for line_start, line_end in lines[2:]:
            if line_end - group_start > max_chars and group_end > group_start:
                pieces.append((group_start, group_end, "", "table"))
                group_start = line_start
            group_end = line_end
        pieces.append((group_start, group_end, "", "table"))
        pieces = [
            (a, b, header if a != lines[0][0] and kind == "table" else lead, kind)
            for a, b, lead, kind in pieces
        ]
        cursor = m.end()
    pieces.extend(_split(text, cursor, end, 0, max_chars, ""))
    return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _boundaries(text: str, start: int, end: int, kind: str) -> list[int]:
    if kind == "ayat":
        found = [
            m.start("at") if m.group("at") else m.start("at2")
            for m in _AYAT_STARTS.finditer(text, start, end)
        ]
    elif kind == "item":
        found = [
            m.start("at") if m.group("at") else m.start("at2")
            for m in _ITEM_STARTS.finditer(text, start, end)
        ]
    else:
        found = [m.end() for m in _SIMPLE_BOUNDARIES[kind].finditer(text, start, end)]
    return [pos for pos in found if start < pos < end]


def _split(
    text: str, start: int, end: int, level: int, max_chars: int, lead_in: str
) -> list[tuple[int, int, str, str]]:
    """Pieces (start, end, lead-in, kind) of [start, end), each at most max_chars, cut at the most preferred
    boundary kind available from ``level`` on, neighbours packed together."""
    start, end = _trim(text, start, end)
    if end - start <= max_chars:
        return [(start, end, lead_in, "text")] if start < end else []
    for depth in range(level, len(_BOUNDARY_KINDS)):
        kind = _BOUNDARY_KINDS[depth]
        cuts = _boundaries(text, start, end, kind)
        if not cuts:
            continue
        inner_lead = lead_in
        if kind == "item":
            head = text[start : cuts[0]].strip()
            if head and len(head) <= 400:
                inner_lead = " ".join(head.split())
        edges = [start, *cuts, end]
        pieces: list[tuple[int, int, str, str]] = []
        piece_start = start
        for i in range(1, len(edges)):
            seg_start, seg_end = edges[i - 1], edges[i]
            if seg_end - piece_start <= max_chars:
                continue
            if seg_start > piece_start:
                pieces.extend(
                    _finish(
                        text, piece_start, seg_start, lead_in if piece_start == start else inner_lead, kind
                    )
                )
                piece_start = seg_start
            if seg_end - piece_start > max_chars:
                sub_lead = lead_in if piece_start == start else inner_lead
                pieces.extend(_split(text, piece_start, seg_end, depth + 1, max_chars, sub_lead))
                piece_start = seg_end
        if piece_start < end:
            pieces.extend(
                _finish(text, piece_start, end, lead_in if piece_start == start else inner_lead, kind)
            )
        return pieces
    cut = start + max_chars
    return [(start, cut, lead_in, "text"), *_split(text, cut, end, len(_BOUNDARY_KINDS), max_chars, lead_in)]


def _finish(text: str, start: int, end: int, lead_in: str, kind: str) -> list[tuple[int, int, str, str]]:
    start, end = _trim(text, start, end)
    if start >= end:
        return []
    piece_kind = "list" if kind == "item" and _ITEM_STARTS.match(text, start) else "text"
    return [(start, end, lead_in if lead_in and lead_in not in text[start:end] else "", piece_kind)]


_NOTHING_TO_EXPLAIN = re.compile(
    r"Pasal\s+\S+\s+Cukup\s+jelas\.?(?:\s+Pasal\s+\S+\s+Cukup\s+jelas\.?)*", re.IGNORECASE
)


def _merge_short_explanations(spans: list[Span], text: str, max_chars: int) -> list[Span]:
    """Penjelasan articles that only say "Cukup jelas." are merged into one chunk per run."""
    out: list[Span] = []
    for span in spans:
        prev = out[-1] if out else None
        if (
            prev is not None
            and span.penjelasan
            and prev.penjelasan
            and span.pasal
            and prev.pasal
            and span.end - prev.start <= max_chars
            and prev.section_path[:-1] == span.section_path[:-1]
            and _NOTHING_TO_EXPLAIN.fullmatch(text, prev.start, prev.end)
            and _NOTHING_TO_EXPLAIN.fullmatch(text, span.start, span.end)
        ):
            prev.end = span.end
            prev.pasal_last = span.pasal
            prev.section_path = prev.section_path[:-1] + (
                f"Pasal {prev.pasal} sampai dengan Pasal {span.pasal}",
            )
            continue
        out.append(span)
    return out
