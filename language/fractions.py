"""Fractions: "2/3 (dua pertiga) dari anggaran", "1/1.000 (satu perseribu) dari jumlah penduduk".

A fraction is one figure, its value the quotient: read as its numerator alone ("2"), "2/5" in a claim would
equal a passage's "2/3". Its kind is "fraction", so it is compared only with fractions (2/3 is 4/6, never 2
nor 66,7%). Digits "a/b" count only when they cannot be anything else: a proper fraction, no date ("1/2/2024")
and no year after the slash ("Nomor 5/2019" is a reference, read before figures).
"""

from __future__ import annotations

import re
from decimal import Decimal

from language.figure import Figure
from language.qualifiers import qualifiers

_DIGITS_RE = re.compile(r"(?<![\w/.,])(\d{1,3})\s?/\s?(\d{1,3}(?:\.\d{3})*)(?![\w/]|[.,]\d)")
_ONES = ("satu", "dua", "tiga", "empat", "lima", "enam", "tujuh", "delapan", "sembilan")
_DENOMINATORS = {
    **{word: Decimal(value) for value, word in enumerate(_ONES, start=1) if value > 1},
    "seratus": Decimal(100),
    "seribu": Decimal(1000),
}
_DENOMINATOR_ALTS = "|".join(sorted(_DENOMINATORS, key=len, reverse=True))
# "dua pertiga", "sepertiga"; never "tiga persepuluh persen" (a spelled decimal: 7,3 persen), nor "setengah"
# (it spells the half of a number too: "dua belas setengah persen" is 12,5 persen)
_SPELLED_RE = re.compile(
    rf"\b(?:({'|'.join(_ONES)})\s+per|(se)per)({_DENOMINATOR_ALTS})\b(?!\s+(?:persen|permil))",
    re.IGNORECASE,
)
_QUANTUM = Decimal("1e-20")


def _figure(
    text: str, start: int, end: int, numerator: Decimal, denominator: Decimal, spelled: bool
) -> Figure:
    approximate, bound = qualifiers(text, start)
    return Figure(
        value=numerator / denominator,
        text=text[start:end],
        start=start,
        end=end,
        kind="fraction",
        quantum=_QUANTUM,
        whole=False,
        approximate=approximate,
        bound=bound,
        ratio=(numerator, denominator),
        spelled=spelled,
    )


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def fraction_figures(text: str, blocked: list[tuple[int, int]]) -> list[Figure]:
    """The fractions of ``text`` outside ``blocked`` (references, periods, ratios already read)."""
    found: list[Figure] = []
    if "/" in text:
        for match in _DIGITS_RE.finditer(text):
            numerator = Decimal(match.group(1))
            denominator_text = match.group(2)
            denominator = Decimal(denominator_text.replace(".", ""))
            if not 0 < numerator < denominator or (
                len(denominator_text) == 4 and "." not in denominator_text
            ):
                continue  # "24/7", "5/2019": no fraction
            if not _overlaps(match.start(), match.end(), blocked):
                found.append(_figure(text, match.start(), match.end(), numerator, denominator, False))
    low = text.lower()
    if "per" in low:
        for match in _SPELLED_RE.finditer(text):
            ones = (match.group(1) or "satu").lower()
            numerator = Decimal(_ONES.index(ones) + 1)
            denominator = _DENOMINATORS[match.group(3).lower()]
            if not _overlaps(match.start(), match.end(), blocked):
                found.append(_figure(text, match.start(), match.end(), numerator, denominator, True))
    return found
