"""Where each figure's entity is written: its label, lead-in, linked words, the passage topic.

In a table row: the row's other cells and the column header (plus the caption above the table). In prose: the
words since the previous figure (its label), the sentence's lead-in (up to ":" or "terdiri atas"), the words
after it when they start with a linking word ("untuk", "bagi", "for") or name what is counted ("37 obyek
wisata"), and, for the last figure of a sentence, the rest of the item. The topic (a heading or the sentence
before the first figure, and an opening "Pada Dinas X,") is shared by every figure.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from judge.figure import PERIOD_KINDS, Figure

Ranges = tuple[tuple[int, int], ...]

_LEAD_IN_RE = re.compile(
    r":|\b(?:terdiri\s+(?:atas|dari)|meliputi|mencakup|sebagai\s+berikut|consists?\s+of"
    r"|comprising|as\s+follows)\b",
    re.IGNORECASE,
)
_LINK_RE = re.compile(
    r"\s*(?:\)\s*)?(?:untuk|bagi|kepada|pada|dari|yang|sebagai|di|for|to|of|in|on|by)\b", re.IGNORECASE
)
# A sentence-initial scope ("Pada Dinas Pendidikan, …"), read as the topic of every figure after it.
_SCOPE_RE = re.compile(
    r"\s*(?:\(\d+\)\s*)?(?:pada|untuk|di|dalam|menurut|berdasarkan|sesuai|in|for|at|under)\b"
    r"[^,.;:\n]{0,80},",
    re.IGNORECASE,
)
_TOPIC_REACH = 200
# Where a list's next item starts: the words after the last figure of a sentence stop there.
_ITEM_BREAK_RE = re.compile(r"[;:]|\s[-–•]\s|\s[a-z]\.\s|\s\(\d{1,2}\)\s|\s\d{1,2}\.\s")
# The words right after a count name what is counted ("37 obyek wisata", "8% wilayah Indonesia").
_HEAD_RE = re.compile(
    r"\s*((?:(?!(?:dan|atau|serta|yang|dengan|untuk|bagi|pada|dari|di|ke|dalam|sebagai|and|or|"
    r"which|that|with|for|of|in|to)\b)[A-Za-z][\w-]*\s*){1,4})",
    re.IGNORECASE,
)
_CLAUSE_END_RE = re.compile(r"[,;.](?:\s|$)|\s(?:dan|serta|and)\s")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}")
# Between a figure and its spelled twin: "(", after OCR leftovers of the cents (", 00", ",-").
TWIN_GAP_RE = re.compile(r"\s*(?:,\s*[0O]{2}|,\s*-)?\s*\(\s*")


@dataclass(frozen=True, slots=True)
class Regions:
    regions: dict[int, Ranges]  # figure index → its neighbourhood, without the topic
    labels: dict[int, Ranges]  # figure index → its own label (what tells it apart from the others)
    topic: Ranges
    in_table: frozenset[int]


def figure_regions(
    text: str, figures: tuple[Figure, ...], quantities: tuple[int, ...], sentences: Ranges
) -> Regions:
    regions: dict[int, Ranges] = {}
    labels: dict[int, Ranges] = {}
    handled = _table_regions(text, figures, regions, labels)
    twins = _twins(text, figures)
    _prose_regions(text, figures, quantities, sentences, handled, twins, regions, labels)
    for twin, digit in twins.items():
        if digit in handled:
            regions[twin] = regions[digit]
            labels[twin] = labels[digit]
    return Regions(regions, labels, _topic(text, figures, quantities, sentences), frozenset(handled))


def _table_cells(line_start: int, line: str) -> list[tuple[int, int]]:
    cells = []
    offset = 0
    for part in line.split("|"):
        stripped = part.strip()
        if stripped:
            begin = line.index(stripped, offset)
            cells.append((line_start + begin, line_start + begin + len(stripped)))
        offset += len(part) + 1
    return cells


def _table_regions(
    text: str,
    figures: tuple[Figure, ...],
    regions: dict[int, tuple[tuple[int, int], ...]],
    labels: dict[int, tuple[tuple[int, int], ...]],
) -> set[int]:
    """Neighbourhoods of figures inside Markdown-style table rows; returns the figure indexes handled."""
    handled: set[int] = set()
    if "|" not in text:
        return handled
    header: list[tuple[int, int]] | None = None
    lead_in: tuple[int, int] | None = None
    position = 0
    previous_line: tuple[int, int] | None = None
    for line in text.split("\n"):
        line_start, position = position, position + len(line) + 1
        if line.count("|") < 2:
            header = None
            if line.strip():
                previous_line = (line_start, line_start + len(line))
            continue
        if _TABLE_SEPARATOR_RE.match(line):
            continue
        cells = _table_cells(line_start, line)
        if header is None:
            header, lead_in = cells, previous_line
            continue
        figure_cells = {}
        for index, fig in enumerate(figures):
            if line_start <= fig.start < line_start + len(line) and fig.kind not in PERIOD_KINDS:
                column = next((c for c, (s, e) in enumerate(cells) if s <= fig.start < e), None)
                if column is not None:
                    figure_cells[index] = column
        used_columns = set(figure_cells.values())
        row_labels = tuple(cell for c, cell in enumerate(cells) if c not in used_columns)
        for index, column in figure_cells.items():
            extra = (header[column],) if column < len(header) else ()
            regions[index] = row_labels + extra + ((lead_in,) if lead_in else ())
            labels[index] = row_labels
            handled.add(index)
    return handled


def _twins(text: str, figures: tuple[Figure, ...]) -> dict[int, int]:
    """Spelled twins in parentheses right after a digit figure: twin index → digit figure index."""
    twins = {}
    for index in range(1, len(figures)):
        fig, before = figures[index], figures[index - 1]
        if fig.spelled and not before.spelled and TWIN_GAP_RE.fullmatch(text[before.end : fig.start]):
            twins[index] = index - 1
    return twins


def _prose_regions(
    view_text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    sentences: tuple[tuple[int, int], ...],
    handled: set[int],
    twins: dict[int, int],
    regions: dict[int, tuple[tuple[int, int], ...]],
    labels: dict[int, tuple[tuple[int, int], ...]],
) -> None:
    sentence_starts = [s for s, _ in sentences]
    twin_of_digit = {digit: twin for twin, digit in twins.items()}
    ordered = [i for i in quantities if i not in handled and i not in twins]
    sentence_of = {
        i: sentences[max(bisect.bisect_right(sentence_starts, figures[i].start) - 1, 0)] for i in ordered
    }
    last_in_sentence = {sentence_of[i][0]: i for i in ordered}
    previous_end: dict[int, int] = {}
    for index in ordered:
        fig = figures[index]
        sentence = sentence_of[index]
        end = figures[twin_of_digit[index]].end if index in twin_of_digit else fig.end
        label_start = previous_end.get(sentence[0], sentence[0])
        if label_start == sentence[0]:
            scope = _SCOPE_RE.match(view_text, label_start)
            if scope and scope.end() <= fig.start:
                label_start = scope.end()  # "Pada Dinas X," is the topic, not this figure's label
        ranges = [(label_start, fig.start)]
        own = [(label_start, fig.start)]
        lead = _LEAD_IN_RE.search(view_text, sentence[0], fig.start)
        if lead and lead.start() < label_start:
            ranges.append((sentence[0], lead.end()))
        if _LINK_RE.match(view_text, end):
            clause_end = _CLAUSE_END_RE.search(view_text, end, sentence[1])
            own.append((end, clause_end.start() if clause_end else sentence[1]))
        elif fig.kind in ("count", "percent", "permille") and (
            head := _HEAD_RE.match(view_text, end, sentence[1])
        ):
            own.append((end, head.end(1)))
        if last_in_sentence[sentence[0]] == index:
            item_break = _ITEM_BREAK_RE.search(view_text, end, sentence[1])
            ranges.append((end, item_break.start() if item_break else max(end, sentence[1])))
        elif len(own) > 1:
            ranges.append(own[1])
        regions[index] = tuple(ranges)
        labels[index] = tuple(own)
        if index in twin_of_digit:
            regions[twin_of_digit[index]] = regions[index]
            labels[twin_of_digit[index]] = labels[index]
        previous_end[sentence[0]] = end


def _topic(
    text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    sentences: tuple[tuple[int, int], ...],
) -> tuple[tuple[int, int], ...]:
    """What the passage is about before its first figure: the text just before the sentence holding the
    first figure (a heading, a caption, the previous sentence) and that sentence's opening scope phrase."""
    if not quantities:
        return ()
    first = figures[quantities[0]].start
    start = next((s for s, e in sentences if s <= first < max(e, s + 1)), 0)
    ranges = []
    if start > 0:
        position = max(0, start - _TOPIC_REACH)
        for line in text[position:start].split("\n"):
            if line.count("|") < 2 and line.strip():  # a table header's columns belong to their own cells
                ranges.append((position, position + len(line)))
            position += len(line) + 1
    scope = _SCOPE_RE.match(text, start)
    if scope and scope.end() <= first:
        ranges.append((start, scope.end()))
    return tuple(ranges)
