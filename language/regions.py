"""Where each figure's entity is written: its label, lead-in, linked words, the passage topic.

In a table row: the row's other cells and the column header (plus the caption above the table). In prose: the
words since the previous figure (its label), the sentence's lead-in (up to ":" or "terdiri atas"), the words
after it when they start with a linking word ("untuk", "bagi", "for") or name what is counted ("37 obyek
wisata"), and, for the last figure of a sentence, the rest of the item. The topic (a heading or the sentence
before the first figure, and an opening "Pada Dinas X,") is shared by every figure.

A figure restated in another form ("Rp4,01 triliun atau 99,96 persen", "806.250 jiwa (14,44 persen)") and the
end of a change ("naik dari Rp592.483 menjadi Rp627.310") share the label of the figure they follow: they
name the same entity. A clause that points back to an ayat of the same passage ("Belanja sebagaimana dimaksud
pada ayat (1)") has that ayat's subject in its neighbourhood.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from language.figure import PERIOD_KINDS, Figure, is_spelled_twin, kind_group
from language.lexicon import FRAMING_WORDS
from language.references import Reference

Ranges = tuple[tuple[int, int], ...]

_LEAD_IN_RE = re.compile(  # (a colon between digits is a ratio, "60:40", or a time, "10:00")
    r"(?<!\d):(?!\d)|\b(?:terdiri\s+(?:atas|dari)|meliputi|mencakup|sebagai\s+berikut|consists?\s+of"
    r"|comprising|as\s+follows)\b",
    re.IGNORECASE,
)
_LEAD_IN_HINTS = ("terdiri", "meliputi", "mencakup", "berikut", "consist", "comprising", "follows")
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
# ("ayat (9) tidak dikenakan" is a reference, not the next item)
_ITEM_BREAK_RE = re.compile(r"[;:]|\s[-–•]\s|\s[a-z]\.\s|(?<!ayat)\s\(\d{1,2}\)\s|\s\d{1,2}\.\s")
# The words right after a count name what is counted ("37 obyek wisata", "8% wilayah Indonesia").
_HEAD_RE = re.compile(
    r"\s*\)?\s*((?:(?!(?:dan|atau|serta|yang|dengan|untuk|bagi|pada|dari|di|ke|dalam|sebagai|and|or|"
    r"which|that|with|for|of|in|to)\b)[A-Za-z][\w-]*\s*){1,4})",
    re.IGNORECASE,
)
_CLAUSE_END_RE = re.compile(r"[,;.](?:\s|$)|\s(?:dan|serta|and)\s")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}")
# Between a figure and the same quantity in another form: "Rp4,01 triliun atau 99,96 persen", "(14,4 persen)".
_APPOSITION_GAP_RE = re.compile(
    r"\s*(?:\(|atau(?:\s+(?:sebesar|setara(?:\s+dengan)?|sama\s+dengan))?|or|yaitu|yakni|setara\s+dengan"
    r"|equivalent\s+to)\s*",
    re.IGNORECASE,
)
# "naik dari Rp592.483 per kapita per bulan pada 2022 menjadi Rp627.310": the end of the change names the
# same entity as its start. Between the two only units, a period and the joining word may stand.
_CHANGE_FROM_RE = re.compile(r"\b(?:dari|from)\s*$", re.IGNORECASE)
_CHANGE_GAP_RE = re.compile(
    r"(?:\s*(?:per|/)\s*[a-z]+)*(?:\s*,)?(?:\s+(?:pada|tahun|in|di|bulan)){0,2}(?:\s+[\w/.-]*\d[\w/.-]*)?"
    r"(?:\s*,)?\s+(?:menjadi|ke|hingga|sampai(?:\s+dengan)?|to)\s*",
    re.IGNORECASE,
)
# "sebagaimana dimaksud pada ayat (1)": the ayat named is the referent, not a place of its own.
_ANAPHOR_BEFORE_RE = re.compile(
    r"(?:sebagaimana\s+)?(?:dimaksud|tersebut|disebut)\s+(?:pada|dalam|di)\s+$", re.IGNORECASE
)
_REFERENT_REACH = 200


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Regions(NamedTuple):
    regions: dict[int, Ranges]  # figure index → its neighbourhood, without the topic
    labels: dict[int, Ranges]  # figure index → its own label (what tells it apart from the others)
    topic: Ranges
    in_table: frozenset[int]
    anaphors: frozenset[int] = frozenset()  # starts of references resolved to an ayat of the same text
    # figure index → where its periods are read, where that differs from its neighbourhood (a change's ends)
    dating: dict[int, Ranges] | None = None
    roles: dict[int, str] | None = None  # "from" / "to": the start and the end of a change
    designations: frozenset[int] = frozenset()  # measures that are part of a name ("karung beras 25 kg")


def figure_regions(
    text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    sentences: Ranges,
    references: tuple[Reference, ...] = (),
) -> Regions:
    regions: dict[int, Ranges] = {}
    labels: dict[int, Ranges] = {}
    handled = _table_regions(text, figures, regions, labels)
    twins = _twins(text, figures)
    dating: dict[int, Ranges] = {}
    roles: dict[int, str] = {}
    named = _designations(text, figures, quantities, twins)
    _prose_regions(
        text, figures, quantities, sentences, handled | named, twins, regions, labels, dating, roles
    )
    for index in named:
        if index not in handled:  # a name's measure is read with its whole sentence and labels nothing
            start = figures[index].start
            regions[index] = labels[index] = (
                next((s, e) for s, e in sentences if s <= start < max(e, s + 1)),
            )
    for twin, digit in twins.items():
        if digit in handled:
            regions[twin] = regions[digit]
            labels[twin] = labels[digit]
    anaphors = _resolve_anaphors(text, figures, quantities, references, regions, labels)
    topic = _topic(text, figures, quantities, sentences)
    return Regions(regions, labels, topic, frozenset(handled), anaphors, dating, roles, frozenset(named))


# Measures that may be part of a product's or a thing's name: "karung beras 25 kilogram", "pipa 2 meter".
_NAME_MEASURES = frozenset({"kg", "liter", "m", "km", "km2", "ha", "ton"})
_WORD_BEFORE_RE = re.compile(r"([A-Za-z]+)\s*$")


def _designations(
    text: str, figures: tuple[Figure, ...], quantities: tuple[int, ...], twins: dict[int, int]
) -> set[int]:
    """Measures written as part of a name: the same measure after the same noun more than once in a text,
    with no word that states it ("sebesar", "paling banyak", "sekitar"): "karung beras 25 (dua puluh lima)
    kilogram" said four times names the product; it is no quantity whose label the words around it are. (Its
    spelled twin goes with it.)"""
    seen: dict[tuple[str, object, str | None], list[int]] = {}
    for index in quantities:
        fig = figures[index]
        if (
            fig.kind != "count"
            or fig.unit not in _NAME_MEASURES
            or fig.bound
            or fig.approximate
            or fig.spelled
        ):
            continue
        word = _WORD_BEFORE_RE.search(text, max(0, fig.start - 30), fig.start)
        if word is None or word.group(1).lower() in FRAMING_WORDS:
            continue
        seen.setdefault((word.group(1).lower(), fig.value, fig.unit), []).append(index)
    named = {index for group in seen.values() if len(group) >= 2 for index in group}
    named.update(twin for twin, digit in twins.items() if digit in named)
    return named


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
        if is_spelled_twin(text, figures[index - 1], figures[index]):
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
    dating: dict[int, Ranges],
    roles: dict[int, str],
) -> None:
    sentence_starts = [s for s, _ in sentences]
    low = view_text.lower()
    may_lead = ":" in view_text or any(hint in low for hint in _LEAD_IN_HINTS)  # a cheap test first
    twin_of_digit = {digit: twin for twin, digit in twins.items()}
    ordered = [i for i in quantities if i not in handled and i not in twins]
    sentence_of = {
        i: sentences[max(bisect.bisect_right(sentence_starts, figures[i].start) - 1, 0)] for i in ordered
    }
    last_in_sentence = {sentence_of[i][0]: i for i in ordered}
    previous_end: dict[int, int] = {}
    previous_index: dict[int, int] = {}
    heads: dict[int, int] = {}  # a restated figure or a change's end → the figure whose label it shares
    for index in ordered:
        fig = figures[index]
        sentence = sentence_of[index]
        end = figures[twin_of_digit[index]].end if index in twin_of_digit else fig.end
        label_start = previous_end.get(sentence[0], sentence[0])
        scope = _SCOPE_RE.match(view_text, sentence[0])
        if scope and scope.end() > fig.start:
            scope = None
        if label_start == sentence[0] and scope:
            label_start = scope.end()  # "Pada Dinas X," is the topic, not this figure's label
        ranges = [(label_start, fig.start)]
        own = [(label_start, fig.start)]
        if scope:  # but its sentence's condition ("(10) Dalam hal … banding,") is in its neighbourhood
            ranges.append((sentence[0], scope.end()))
        lead = _LEAD_IN_RE.search(view_text, sentence[0], fig.start) if may_lead else None
        if lead and lead.start() < label_start:
            ranges.append((sentence[0], lead.end()))
        elif may_lead and (list_lead := _list_lead_in(view_text, figures, sentences, sentence)) is not None:
            ranges.append(list_lead)
        if _LINK_RE.match(view_text, end):
            clause_end = _CLAUSE_END_RE.search(view_text, end, sentence[1])
            stop = clause_end.start() if clause_end else sentence[1]
            if clause_end and clause_end.group().startswith(","):
                # "50% untuk mendanai A, B, dan C; dan …": a list after the link runs to the item's end
                item_end = _ITEM_BREAK_RE.search(view_text, end, sentence[1])
                following = next((figures[i].start for i in ordered if figures[i].start > end), sentence[1])
                if item_end and item_end.start() < following:
                    stop = item_end.start()
            own.append((end, stop))
        elif (
            fig.kind in ("count", "percent", "permille")
            and not (fig.kind == "count" and fig.unit)  # "2 (dua) tahun": its unit says what it counts
            and (head := _HEAD_RE.match(view_text, end, sentence[1]))
        ):
            own.append((end, head.end(1)))
        if last_in_sentence[sentence[0]] == index:
            item_break = _ITEM_BREAK_RE.search(view_text, end, sentence[1])
            ranges.append((end, item_break.start() if item_break else max(end, sentence[1])))
            if may_lead and view_text[sentence[0] : sentence[1]].rstrip().endswith(":"):
                items = _items_introduced(view_text, figures, sentences, sentence)
                ranges.extend(items)
                own.extend(items)
        elif len(own) > 1:
            ranges.append(own[1])
        regions[index] = tuple(ranges)
        labels[index] = tuple(own)
        previous = previous_index.get(sentence[0])
        link = (
            None if previous is None else _follows(view_text, figures, labels, previous, label_start, index)
        )
        if previous is not None and link is not None:
            chain_head = heads[index] = heads.get(previous, previous)
            gap = (label_start, fig.start)
            if link == "change":  # "dari A pada 2022 menjadi B pada 2023": 2022 dates A, never B
                both = regions[chain_head] + regions[index]
                dating[index] = tuple(dict.fromkeys(r for r in both if r != gap))
                roles[index] = "to"
                for start_figure in (previous, twin_of_digit.get(previous)):
                    if start_figure is not None:
                        dating[start_figure] = dating.get(start_figure, regions[previous]) + (gap,)
                        roles[start_figure] = "from"
            regions[index] = tuple(dict.fromkeys(regions[chain_head] + regions[index]))
            labels[index] = labels[chain_head]  # the same tuple: neither counts as the other's "other label"
        previous_index[sentence[0]] = index
        if index in twin_of_digit:
            regions[twin_of_digit[index]] = regions[index]
            labels[twin_of_digit[index]] = labels[index]
            if index in dating:
                dating[twin_of_digit[index]] = dating[index]
            if index in roles:
                roles[twin_of_digit[index]] = roles[index]
        previous_end[sentence[0]] = end
        if len(own) > 1 and link is None:
            # "25% untuk pemeliharaan dan 75% …": the words linked after a figure name it, not the next
            following = next((figures[i].start for i in ordered if figures[i].start > fig.start), sentence[1])
            if own[1][1] <= following:
                previous_end[sentence[0]] = own[1][1]


_ITEM_START_RE = re.compile(r"\s*(?:[a-z]\.|\d{1,2}\s?\.|\(\d{1,2}[a-z]?\)|[-–•])\s")


def _list_lead_in(
    text: str, figures: tuple[Figure, ...], sentences: Ranges, sentence: tuple[int, int]
) -> tuple[int, int] | None:
    """For a list item ("a. komoditas panas bumi sebesar …"), the clause that opens its list ("… pajak
    penghasilan ditanggung Pemerintah atas:"): the item's figure is one of the things it introduces."""
    if not _ITEM_START_RE.match(text, sentence[0]):
        return None
    position = sentences.index(sentence) if sentence in sentences else -1
    for index in range(position - 1, max(position - 12, -1), -1):
        start, end = sentences[index]
        if text[start:end].rstrip().endswith(":"):
            # what follows the lead-in sentence's last figure (and that figure's spelled twin)
            after = max((f.end for f in figures if start <= f.start < end), default=start)
            closing = text.find(")", after, end)
            return (closing + 1 if closing != -1 and closing - after < 3 else after, end)
        if not _ITEM_START_RE.match(text, start):
            return None
    return None


_LETTER_ITEM_RE = re.compile(r"\s*(?:[a-z]\.|\d{1,2}\s?\.|[-–•])\s")  # "a.", "1.", "-": not an ayat "(2)"


def _items_introduced(
    text: str, figures: tuple[Figure, ...], sentences: Ranges, sentence: tuple[int, int]
) -> list[tuple[int, int]]:
    """For a figure closing a lead-in ("Tarif sebesar 0% diterapkan atas:"), the list items that follow it
    with no figure of their own ("a. ekspor jasa; b. …"): they say what that figure applies to, so they are
    its words, and a claim taking them to another item's figure names another figure's entity."""
    position = sentences.index(sentence) if sentence in sentences else -1
    items: list[tuple[int, int]] = []
    for start, end in sentences[position + 1 : position + 21] if position >= 0 else ():
        if not _LETTER_ITEM_RE.match(text, start):
            break
        if any(start <= f.start < end and f.kind not in PERIOD_KINDS for f in figures):
            return []  # items with figures of their own ("a. sebesar 11% …") are labelled by those
        items.append((start, end))
    return items


def _follows(
    text: str,
    figures: tuple[Figure, ...],
    labels: dict[int, Ranges],
    previous: int,
    gap_start: int,
    index: int,
) -> str | None:
    """ "restated" when figure ``index`` restates figure ``previous`` in another form, "change" when it ends
    the change ``previous`` starts, else None."""
    fig, before = figures[index], figures[previous]
    gap = text[gap_start : fig.start]  # from the end of the previous figure (or of its spelled twin)
    if kind_group(fig) != kind_group(before):
        return "restated" if _APPOSITION_GAP_RE.fullmatch(gap) else None
    own = labels.get(previous, ())
    if own and _CHANGE_FROM_RE.search(text, own[0][0], own[0][1]) and _CHANGE_GAP_RE.fullmatch(gap):
        return "change"
    return None


def _resolve_anaphors(
    text: str,
    figures: tuple[Figure, ...],
    quantities: tuple[int, ...],
    references: tuple[Reference, ...],
    regions: dict[int, Ranges],
    labels: dict[int, Ranges],
) -> frozenset[int]:
    """Add to a figure's neighbourhood the subject of the ayat its label points back to ("Belanja
    sebagaimana dimaksud pada ayat (1)" → "(1) Belanja urusan pendidikan ditetapkan …"), when that ayat is
    written earlier in the same text; return the starts of the references so resolved."""
    pointers = [ref for ref in references if ref.kind != "marker"]
    # "(1)" inside "ayat (1)" is read as a marker too: only markers outside every other reference count
    markers = [
        ref
        for ref in references
        if ref.kind == "marker" and not any(p.start <= ref.start < p.end for p in pointers)
    ]
    if not markers:
        return frozenset()
    resolved: set[int] = set()
    for position, ref in enumerate(pointers):
        if ref.kind != "ayat" or not _ANAPHOR_BEFORE_RE.search(text, max(0, ref.start - 40), ref.start):
            continue
        following = pointers[position + 1] if position + 1 < len(pointers) else None
        if following is not None and following.kind == "huruf" and following.start - ref.end <= 2:
            continue  # "ayat (1) huruf a": an item of the ayat, whose subject is not simply the ayat's
        target = next((m for m in reversed(markers) if m.value == ref.value and m.end <= ref.start), None)
        if target is None:
            continue
        stop = min(
            [m.start for m in markers if m.start > target.end]
            + [figures[i].start for i in quantities if figures[i].start >= target.end]
            + [target.end + _REFERENT_REACH, ref.start]
        )
        referent = (target.end, stop)
        for index in quantities:
            if any(s <= ref.start < e for s, e in labels.get(index, ())) and index in regions:
                regions[index] = regions[index] + (referent,)
                resolved.add(ref.start)
    return frozenset(resolved)


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
