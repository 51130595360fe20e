"""Digit tokens in both grouping conventions, OCR repair, and a cheap language guess.

Indonesian writes 1.500.000,75 and English 1,500,000.75. A token with both separators, or with repeated
3-digit groups, is unambiguous; a single separator followed by exactly three digits ("1.500", "1,500") is
resolved by the language of the text and by what surrounds it (a currency prefix, a scale word).
"""

from __future__ import annotations

import re
from decimal import Decimal

_ID_MARKERS = frozenset(
    """
yang dan di dari untuk dengan adalah sebesar tahun pada dalam tidak atau oleh ke akan ini itu sebagaimana
dimaksud pasal ayat tentang juta miliar triliun ribu persen anggaran belanja pendapatan merupakan tersebut
bahwa serta bagi atas
""".split()
)
_EN_MARKERS = frozenset(
    """
the of and is was were are in to for with by from at on which that million billion trillion thousand percent
budget revenue expenditure year about around this has have its their
""".split()
)
_LOWER_WORD_RE = re.compile(r"[a-z]+")
_GROUPED = re.compile(r"^\d{1,3}(?:X\d{3})+$")


def lower_words(text: str) -> list[str]:
    """The runs of ASCII letters of ``text``, lower-cased: what the cheap word tests below look at."""
    return _LOWER_WORD_RE.findall(text.lower())


def detect_lang(text: str, *, words: list[str] | None = None) -> str:
    """'id' or 'en' by counting function words; Indonesian when unsure (the corpus language). ``words``:
    ``lower_words(text)`` when the caller has it already."""
    indonesian = english = 0
    for word in lower_words(text) if words is None else words:
        if word in _ID_MARKERS:
            indonesian += 1
        elif word in _EN_MARKERS:
            english += 1
    return "en" if english > indonesian else "id"


def _valid_groups(integer: str, sep: str) -> bool:
    return bool(_GROUPED.match(integer.replace(sep, "X"))) if sep in integer else integer.isdigit()


def parse_digit_token(
    token: str, *, lang: str, currency: bool = False, scaled: bool = False, percent: bool = False
) -> tuple[Decimal, int] | None:
    """Parse a token of digits, dots and commas into (value, decimals stated), or None when malformed.

    ``currency``: a currency prefix stands before the token; ``scaled``: a scale word follows it;
    ``percent``: a percent sign or word follows it.
    """
    dots = token.count(".")
    commas = token.count(",")
    if dots and commas:
        last_dot, last_comma = token.rfind("."), token.rfind(",")
        decimal_sep, group_sep = (",", ".") if last_comma > last_dot else (".", ",")
        integer, _, fraction = token.rpartition(decimal_sep)
        if group_sep in fraction or decimal_sep in integer or not _valid_groups(integer, group_sep):
            return None
        return Decimal(integer.replace(group_sep, "") + "." + fraction), len(fraction)
    if not dots and not commas:
        return Decimal(token), 0
    sep = "." if dots else ","
    parts = token.split(sep)
    if len(parts) > 2:
        if not _valid_groups(token, sep):
            return None  # "4.1.01.01" is an account code, not a number
        return Decimal(token.replace(sep, "")), 0
    integer, fraction = parts
    grouping = False
    if len(fraction) == 3 and len(integer) <= 3 and integer != "0":
        if sep == ".":
            # Indonesian groups with dots; English text uses a dot as the decimal point, except right after
            # a rupiah prefix with no scale word ("Rp1.500" is fifteen hundred rupiah in any language).
            grouping = lang == "id" and not percent or (currency and not scaled)
        else:
            grouping = lang == "en" or (currency and not scaled and not percent)
    if grouping:
        return Decimal(integer + fraction), 0
    return Decimal(integer + "." + fraction), len(fraction)


# OCR repairs keep the text's length so spans stay valid. Only unambiguous cases: "Rpl.963" (l for 1 right
# after a currency prefix, before digits), "RpS.076" (S for 5, same place), "2O2O" (O for 0 in a year).
_OCR_PREFIX = re.compile(r"(?<=Rp)([lI|])(?=[.,]?\d)|(?<=Rp)(S)(?=[.,]\d{3})|(?<=Rp\s)([lI])(?=[.,]\d{3})")
_OCR_PREFIX_HINT = re.compile(r"Rp\s?[lI|S]")
_OCR_YEAR = re.compile(r"\b[12][0-9O]{3}\b")
# "Tahun Anggaran 20 1 7": a year that OCR split with spaces, read whole after a year word.
_SPLIT_YEAR = re.compile(
    r"\b(?:[Tt]ahun(?:\s+[Aa]nggaran)?|TA\.?|[Yy]ear)\s+((?:1\s?[89]|2\s?0)\s?\d\s?\d)\b"
)
_SPLIT_HINT = re.compile(r"\d \d")


def repair_ocr(text: str) -> tuple[str, tuple[int, ...]]:
    """Return (text with the unambiguous OCR slips repaired, the repaired positions)."""
    split = _SPLIT_HINT.search(text) is not None
    if "O" not in text and "Rp" not in text and not split:
        return text, ()
    chars: list[str] | None = None
    repaired: list[int] = []
    for match in _SPLIT_YEAR.finditer(text) if split else ():
        written = match.group(1)
        if " " in written:  # "20 1 7" → "2017  ": the same length, so every span stays valid
            chars = chars or list(text)
            joined = written.replace(" ", "").ljust(len(written))
            chars[match.start(1) : match.end(1)] = list(joined)
            repaired.extend(range(match.start(1), match.end(1)))
    # _OCR_PREFIX looks behind at every position; a search for its literal start rules most texts out first
    for match in _OCR_PREFIX.finditer(text) if _OCR_PREFIX_HINT.search(text) else ():
        index = match.start()
        chars = chars or list(text)
        chars[index] = "5" if match.group(2) else "1"
        repaired.append(index)
    for match in _OCR_YEAR.finditer(text) if "O" in text else ():
        token = match.group()
        if "O" in token and sum(ch.isdigit() for ch in token) >= 2:
            chars = chars or list(text)
            for offset, ch in enumerate(token):
                if ch == "O":
                    chars[match.start() + offset] = "0"
                    repaired.append(match.start() + offset)
    if chars is None:
        return text, ()
    return "".join(chars), tuple(repaired)
