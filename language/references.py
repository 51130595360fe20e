"""Clause and statute references ("Pasal 2", "ayat (1)", "UU Nomor 28 Tahun 2022"): never quantities.

A number introduced by a structural word names a place in a text; the figure extractor skips every span found
here, and the rule judge checks a claim's references against the passage and its document identity instead.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_KIND = {
    "pasal": "pasal",
    "article": "pasal",
    "ayat": "ayat",
    "paragraph": "ayat",
    "huruf": "huruf",
    "angka": "angka",
    "item": "angka",
    "lampiran": "lampiran",
    "annex": "lampiran",
    "bab": "bab",
    "chapter": "bab",
    "bagian": "bagian",
    "part": "bagian",
    "paragraf": "paragraf",
    "butir": "butir",
    "section": "pasal",
}
_ITEM = r"\(?(\d{1,4}[a-zA-Z]?|[IVXLC]{1,6}\b|[a-z]\b)\)?"
_JOINER = (
    r"\s*(?:,\s*(?:dan|atau|and|or)?|dan|atau|sampai\s+dengan|s\.\s?d\.?|s/d|sampai|hingga|and|or|to|-|–)"
    r"\s*"
)
_STRUCTURAL_RE = re.compile(
    rf"\b(pasal|article|ayat|paragraph|huruf|angka|lampiran|annex|bab|chapter|bagian|paragraf|butir|section)"
    rf"\s*{_ITEM}((?:{_JOINER}(?:(?:pasal|ayat|huruf|angka)\s*)?{_ITEM})*)",
    re.IGNORECASE,
)
_CONTINUATION_RE = re.compile(rf"{_JOINER}(?:(pasal|ayat|huruf|angka)\s*)?{_ITEM}", re.IGNORECASE)
# "Nomor 28 Tahun 2022", "No. 28/2022", "Number 28 of 2022", "Nomor 4 7" (OCR-split numbers stay references).
_NUMBER_RE = re.compile(
    r"\b(?:nomor|no\.?|number|nr\.?)\s*:?\s*(\d{1,5}[A-Za-z]?(?:[ ]\d{1,3}\b)?)"
    r"(?:\s*(?:tahun|th\.?|of|/)\s*(\d{4})\b)?",
    re.IGNORECASE,
)
# "UU 28/2022", "PP 12/2019", "Qanun Aceh 1/2023".
_SHORT_RE = re.compile(
    r"\b(?:UU|PP|Perpres|Perda|Qanun(?:\s+Aceh)?|Permendagri|PMK|Perppu|Inpres|Keppres)\s+(\d{1,4})\s*/\s*(\d{4})\b"
)
# "Lembaran Negara Republik Indonesia Tahun 2003", "Undang-Undang Dasar ... Tahun 1945", "UUD 1945".
_GAZETTE_RE = re.compile(
    r"\b(?:Lembaran|Berita)\s+(?:Negara|Daerah)(?:\s+(?:Republik\s+Indonesia|Provinsi\s+\w+|Aceh|\w+)){0,3}"
    r"\s+Tahun\s+(\d{4})|\bUndang-\s?Undang\s+Dasar(?:\s+Negara\s+Republik\s+Indonesia)?\s+Tahun\s+(\d{4})"
    r"|\bUUD\s*(?:NRI\s*)?(?:Tahun\s+)?(\d{4})",
    re.IGNORECASE,
)
# A paragraph marker "(1)" opening a sentence or item, and a list marker "2." before a capital.
_PARAGRAPH_MARKER_RE = re.compile(r"\((\d{1,2}[a-z]?)\)(?=\s)")
# Not preceded by a digit, "." or "," (tested after the match: a look-behind slows the scan).
_LIST_MARKER_RE = re.compile(r"(\d{1,2})\s?\.\s+(?=[A-Z])")  # "2 . Paling": OCR spaces the marker too
# What may stand before a list marker: the start of a line, a ";" or ":", or "; dan" / "; atau".
_BEFORE_MARKER_RE = re.compile(r"(?:[\n;:]|;\s*(?:dan|atau|and|or))$")


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Reference(NamedTuple):
    start: int
    end: int
    kind: str  # pasal, ayat, huruf, angka, lampiran, bab, bagian, nomor, tahun, marker
    value: str  # normalised: digits without leading zeros, a lower-case letter, roman numerals as digits


def _normalise(value: str) -> str:
    low = value.lower().strip("()")
    if low.isdigit():
        return str(int(low))
    if len(low) > 1 and all(ch in _ROMAN for ch in low):
        total = 0
        for index, ch in enumerate(low):
            amount = _ROMAN[ch]
            total += -amount if index + 1 < len(low) and _ROMAN[low[index + 1]] > amount else amount
        return str(total)
    if low[:-1].isdigit():  # "5A"
        return str(int(low[:-1])) + low[-1]
    return low


_HINT_WORDS = frozenset(
    {
        "pasal",
        "article",
        "ayat",
        "paragraph",
        "huruf",
        "angka",
        "lampiran",
        "annex",
        "bab",
        "chapter",
        "bagian",
        "paragraf",
        "butir",
        "section",
        "nomor",
        "no",
        "number",
        "nr",
        "uu",
        "pp",
        "perpres",
        "perda",
        "qanun",
        "permendagri",
        "pmk",
        "perppu",
        "inpres",
        "keppres",
        "lembaran",
        "berita",
        "undang",
        "uud",
    }
)
_LOWER_WORD_RE = re.compile(r"[a-z]+")


def extract_references(text: str, *, words: frozenset[str] | None = None) -> list[Reference]:
    """Every reference in ``text``; a reference's span covers its structural word and its numbers.
    ``words``: the set of ``language.digits.lower_words(text)`` when the caller has it already."""
    refs: list[Reference] = []
    if not _HINT_WORDS.isdisjoint(_LOWER_WORD_RE.findall(text.lower()) if words is None else words):
        _structural(text, refs)
    if "(" in text:
        for match in _PARAGRAPH_MARKER_RE.finditer(text):
            if match.start() == 0 or text[match.start() - 1] in " \t\n.;:":
                refs.append(Reference(match.start(), match.end(), "marker", _normalise(match.group(1))))
    for match in _LIST_MARKER_RE.finditer(text):
        if match.start() and (text[match.start() - 1] in ".," or text[match.start() - 1].isdecimal()):
            continue
        before = text[max(0, match.start() - 12) : match.start()].rstrip(" \t")
        if match.start() < 12 and not before or _BEFORE_MARKER_RE.search(before):
            refs.append(Reference(match.start(), match.end(), "marker", _normalise(match.group(1))))
    refs.sort(key=lambda ref: (ref.start, ref.end))
    return refs


def _structural(text: str, refs: list[Reference]) -> None:
    for match in _STRUCTURAL_RE.finditer(text):
        kind = _KIND[match.group(1).lower()]
        if kind == "angka" and re.match(r"\s*(?:%|persen|percent)", text[match.end() : match.end() + 9]):
            continue
        if kind == "huruf" and not match.group(2).isalpha():
            continue
        refs.append(
            Reference(
                match.start(),
                match.end(2) + (1 if text[match.end(2) : match.end(2) + 1] == ")" else 0),
                kind,
                _normalise(match.group(2)),
            )
        )
        for cont in _CONTINUATION_RE.finditer(match.group(3)):
            offset = match.start(3)
            sub_kind = _KIND[cont.group(1).lower()] if cont.group(1) else kind
            refs.append(
                Reference(offset + cont.start(), offset + cont.end(), sub_kind, _normalise(cont.group(2)))
            )
    for match in _NUMBER_RE.finditer(text):
        number = re.sub(r"\s+", "", match.group(1))
        refs.append(Reference(match.start(), match.end(1), "nomor", _normalise(number)))
        if match.group(2):
            refs.append(Reference(match.end(1), match.end(), "tahun", match.group(2)))
    for match in _SHORT_RE.finditer(text):
        refs.append(Reference(match.start(), match.end(1), "nomor", _normalise(match.group(1))))
        refs.append(Reference(match.end(1), match.end(), "tahun", match.group(2)))
    for match in _GAZETTE_RE.finditer(text):
        year = match.group(1) or match.group(2) or match.group(3)
        refs.append(Reference(match.start(), match.end(), "tahun", year))


def reference_keys(refs: list[Reference]) -> frozenset[tuple[str, str]]:
    """The (kind, value) pairs a claim's references must find in its sources (paragraph markers excluded)."""
    return frozenset((ref.kind, ref.value) for ref in refs if ref.kind != "marker")


def reference_numbers(refs: list[Reference]) -> frozenset[str]:
    """The numbers used as references: a claim quantity equal to one of them was probably misread."""
    return frozenset(ref.value for ref in refs if ref.value.isdigit())
