"""Periods: years, fiscal years (Tahun Anggaran / TA), semesters, quarters (triwulan), months, dates, ranges.

A period is normalised to a key: "2023", "2023-S1", "2023-Q3", "2023-01", "2023-01-15", "2020..2024"; an
unstated year is "?" ("?-S1"). ``period_matches`` says whether a source period supports a claim period.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from language.lexicon import MONTHS

_YEAR = r"(1[89]\d\d|20\d\d)"
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ORDINALS = {
    "i": 1,
    "ii": 2,
    "iii": 3,
    "iv": 4,
    "1": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "pertama": 1,
    "kesatu": 1,
    "kedua": 2,
    "ketiga": 3,
    "keempat": 4,
    "satu": 1,
    "dua": 2,
    "tiga": 3,
    "empat": 4,
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "ganjil": 1,
    "genap": 2,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
_ORD = (
    r"(iv|i{1,3}|[1-4](?:st|nd|rd|th)?|pertama|kesatu|kedua|ketiga|keempat|satu|dua|tiga|empat|ganjil|genap"
    r"|first|second|third|fourth)"
)
_YEAR_TAIL = rf"(?:\s*(?:,\s*)?(?:tahun\s+(?:anggaran\s+)?|TA\.?\s*|of\s+|in\s+)?{_YEAR}\b)?"
_RANGE_JOIN = r"\s*(?:-|–|—|s\.\s?d\.?|s/d|sampai(?:\s+dengan)?|hingga|to|until|through)\s*"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "fiscal_split",
        re.compile(
            rf"\b(?:tahun\s+anggaran|TA\.?|fiscal\s+year|FY)\s*{_YEAR}\s*/\s*(\d{{2}}|\d{{4}})\b",
            re.IGNORECASE,
        ),
    ),
    (
        "range",
        re.compile(
            rf"\b(?:(?:tahun|periode|years?|TA\.?)\s+)?{_YEAR}{_RANGE_JOIN}(?:tahun\s+)?{_YEAR}\b",
            re.IGNORECASE,
        ),
    ),
    ("date", re.compile(rf"\b(\d{{1,2}})\s+({_MONTH})(?:\.?(?:\s*{_YEAR})?\b|(?=\d))", re.IGNORECASE)),
    ("date_en", re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.IGNORECASE)),
    ("semester", re.compile(rf"\bsemester\s+{_ORD}\b{_YEAR_TAIL}", re.IGNORECASE)),
    (
        "semester_en",
        re.compile(rf"\b(first|second)\s+half{_YEAR_TAIL}|\bH([12])\s*{_YEAR}?\b", re.IGNORECASE),
    ),
    ("quarter", re.compile(rf"\b(?:triwulan|kuartal|quarter)\s+{_ORD}\b{_YEAR_TAIL}", re.IGNORECASE)),
    (
        "quarter_en",
        re.compile(
            rf"\b(first|second|third|fourth)\s+quarter{_YEAR_TAIL}|\bQ([1-4])\s*{_YEAR}?\b", re.IGNORECASE
        ),
    ),
    ("month", re.compile(rf"\b(?:bulan\s+)?({_MONTH})\b\.?(?:\s+tahun)?\s+{_YEAR}\b", re.IGNORECASE)),
    (
        "fiscal",
        re.compile(
            rf"\b(?:tahun\s+anggaran|tahun\s+buku|T\.A\.?|TA\.?|fiscal\s+year|FY)\s*{_YEAR}\b", re.IGNORECASE
        ),
    ),
    ("year", re.compile(rf"\b(?:tahun|year|pada|in|sejak|since|hingga|until)\s+{_YEAR}\b", re.IGNORECASE)),
]
# Short month names that are also ordinary words need a day or year next to them.
_AMBIGUOUS_MONTHS = {
    "mei",
    "may",
    "mar",
    "jan",
    "jun",
    "jul",
    "des",
    "dec",
    "sep",
    "agu",
    "aug",
    "apr",
    "nov",
    "okt",
    "oct",
    "feb",
    "sept",
}


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class PeriodSpan(NamedTuple):
    start: int
    end: int
    key: str
    year: int | None


def _ordinal(text: str) -> int:
    return _ORDINALS[text.lower()]


def _from_match(kind: str, match: re.Match[str]) -> tuple[str, int | None] | None:
    groups = match.groups()
    if kind == "fiscal_split":
        first, second = int(groups[0]), groups[1]
        last = int(second) if len(second) == 4 else first // 100 * 100 + int(second)
        return (f"{first}/{last}", first) if last == first + 1 else None
    if kind == "range":
        first, last = int(groups[0]), int(groups[1])
        if last <= first:
            return None
        return f"{first}..{last}", first
    if kind == "date":
        day, month, year = int(groups[0]), MONTHS[groups[1].lower()], groups[2]
        if not 1 <= day <= 31:
            return None
        return f"{year or '?'}-{month:02d}-{day:02d}", int(year) if year else None
    if kind == "date_en":
        month, day, year = MONTHS[groups[0].lower()], int(groups[1]), int(groups[2])
        return f"{year}-{month:02d}-{day:02d}", year
    if kind in ("semester", "quarter"):
        number = _ordinal(groups[0])
        if kind == "semester" and number > 2:
            return None
        year = groups[1]
        prefix = "S" if kind == "semester" else "Q"
        return f"{year or '?'}-{prefix}{number}", int(year) if year else None
    if kind in ("semester_en", "quarter_en"):
        prefix = "S" if kind == "semester_en" else "Q"
        number = _ordinal(groups[0]) if groups[0] else int(groups[2])
        year = groups[1] or groups[3]
        return f"{year or '?'}-{prefix}{number}", int(year) if year else None
    if kind == "month":
        return f"{groups[1]}-{MONTHS[groups[0].lower()]:02d}", int(groups[1])
    return groups[0], int(groups[0])


_HAS_MONTH = re.compile(rf"\b(?:{_MONTH})(?:\b|(?=\d))", re.IGNORECASE)  # "Januari2025": OCR ate a space
_HAS_PART = re.compile(r"semester|triwulan|kuartal|quarter|half|\b[HQ][1-4]\b", re.IGNORECASE)
_LETTERS_RE = re.compile(r"[a-z]+")
_PART_HINTS = ("semester", "triwulan", "kuartal", "quarter", "half")  # as _HAS_PART finds them: anywhere
_PRIORITY = {kind: index for index, (kind, _) in enumerate(_PATTERNS)}
_WORD_PATTERNS = [
    (kind, pattern) for kind, pattern in _PATTERNS if kind not in ("fiscal_split", "range", "fiscal", "year")
]
# The year-led patterns are read around each year instead of scanning the text four times.
# A year not preceded by a word character (tested after the match: a look-behind slows the scan).
_YEAR_TOKEN_RE = re.compile(r"(1[89]\d\d|20\d\d)(?!\w)")
_FISCAL_BEFORE_RE = re.compile(
    r"\b(?:tahun\s+anggaran|tahun\s+buku|T\.A\.?|TA\.?|fiscal\s+year|FY)\s*$", re.IGNORECASE
)
_SPLIT_BEFORE_RE = re.compile(r"\b(?:tahun\s+anggaran|TA\.?|fiscal\s+year|FY)\s*$", re.IGNORECASE)
_RANGE_BEFORE_RE = re.compile(r"\b(?:tahun|periode|years?|TA\.?)\s+$", re.IGNORECASE)
_YEAR_BEFORE_RE = re.compile(r"\b(?:tahun|year|pada|in|sejak|since|hingga|until)\s+$", re.IGNORECASE)
_SPLIT_AFTER_RE = re.compile(r"\s*/\s*(\d{2}|\d{4})\b")
_RANGE_AFTER_RE = re.compile(rf"{_RANGE_JOIN}(?:tahun\s+)?{_YEAR}\b", re.IGNORECASE)


def _year_led(text: str) -> list[tuple[int, int, int, str, int]]:
    """(priority, start, end, key, year) of fiscal splits, ranges, fiscal years and "tahun 2023"."""
    out = []
    for match in _YEAR_TOKEN_RE.finditer(text):
        start, end = match.span()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        year = int(match.group(1))
        before = text[max(0, start - 24) : start]
        split = _SPLIT_AFTER_RE.match(text, end)
        if split and (prefix := _SPLIT_BEFORE_RE.search(before)):
            second = split.group(1)
            last = int(second) if len(second) == 4 else year // 100 * 100 + int(second)
            if last == year + 1:
                out.append(
                    (
                        _PRIORITY["fiscal_split"],
                        start - len(before) + prefix.start(),
                        split.end(),
                        f"{year}/{last}",
                        year,
                    )
                )
        joined = _RANGE_AFTER_RE.match(text, end)
        if joined and int(joined.group(1)) > year:
            prefix = _RANGE_BEFORE_RE.search(before)
            begin = start - len(before) + prefix.start() if prefix else start
            out.append((_PRIORITY["range"], begin, joined.end(), f"{year}..{joined.group(1)}", year))
        if prefix := _FISCAL_BEFORE_RE.search(before):
            out.append((_PRIORITY["fiscal"], start - len(before) + prefix.start(), end, str(year), year))
        if prefix := _YEAR_BEFORE_RE.search(before):
            out.append((_PRIORITY["year"], start - len(before) + prefix.start(), end, str(year), year))
    return out


def find_periods(text: str, *, words: frozenset[str] | None = None) -> list[PeriodSpan]:
    """Explicit periods in ``text``, longest first where they overlap. Bare years are left to the caller.
    ``words``: the set of ``language.digits.lower_words(text)`` when the caller has it already."""
    candidates = _year_led(text)
    low = text.lower()
    if words is None:
        words = frozenset(_LETTERS_RE.findall(low))
    # The word tests are cheap and rule most texts out before the slower searches.
    has_month = not words.isdisjoint(MONTHS) and _HAS_MONTH.search(text) is not None
    has_part = (
        any(hint in low for hint in _PART_HINTS) or "h" in words or "q" in words
    ) and _HAS_PART.search(text) is not None
    if has_month or has_part:
        for kind, pattern in _WORD_PATTERNS:
            if (kind in ("date", "date_en", "month") and not has_month) or (
                kind not in ("date", "date_en", "month") and not has_part
            ):
                continue
            for match in pattern.finditer(text):
                if (
                    kind == "month"
                    and match.group(1).lower() in _AMBIGUOUS_MONTHS
                    and match.group(1).islower()
                ):
                    continue
                parsed = _from_match(kind, match)
                if parsed is not None:
                    candidates.append(
                        (_PRIORITY[kind], match.start(), match.end(), parsed[0], parsed[1] or 0)
                    )
    candidates.sort()
    found: list[PeriodSpan] = []
    for _, start, end, key, year in candidates:
        if any(start < span.end and span.start < end for span in found):
            continue
        found.append(PeriodSpan(start, end, key, year or None))
    found.sort(key=lambda span: span.start)
    return found


def period_matches(claim_key: str, source_key: str) -> bool:
    """Does a source period support the claim's period? Equal keys always do; a claim may leave the year
    unstated ("?-S1"); a bare claim year is supported by a month or a date of that year (an event's time) but
    not by a semester or quarter (a part of a fiscal year), nor by a range."""
    if claim_key == source_key:
        return True
    if ".." in claim_key or ".." in source_key:
        return False
    claim_year, _, claim_sub = claim_key.partition("-")
    source_year, _, source_sub = source_key.partition("-")
    if claim_year not in ("?", source_year):
        return False
    if claim_sub == source_sub:
        return True
    if not claim_sub and source_sub and source_sub[0].isdigit():
        return claim_year != "?"
    return False
