"""OCR-damaged amounts: a run of digits that OCR split with spaces or spelled with look-alike letters.

Statutes write an amount twice, in digits and in words: ``Rp4.3l2.O5 7.000,00 (empat miliar … rupiah)``. When
the digits of such a run are damaged (a look-alike letter, a space inside the number) the words are the
reading: the digit fragments are dropped and the spelled figure takes the run's currency or percent sign.
A damaged run without words is read whole when, joined and repaired, it is one validly grouped amount
(``Rp1.234.567. 890.000,00``): its first fragment alone (``Rp1.234.567``) is a prefix, never the amount.
"""

from __future__ import annotations

import re
from decimal import Decimal

from language.digits import parse_digit_token
from language.figure import Figure
from language.qualifiers import negative_sign, qualifiers

# A run: an optional rupiah prefix, then chunks of digits (and look-alike letters, separators) joined by
# single spaces; every chunk after the first holds a digit, so ordinary words are never swallowed, or is a
# lone look-alike letter between digit chunks ("Rp52.307. l 19.800.000,00": a "1" the scanner read as "l").
_RUN_RE = re.compile(
    r"(?<![\w.,])(Rp\.?\s?)?([0-9][0-9OolI|.,]*|(?<=Rp)[lI|S][0-9OolI|.,]*|(?<=Rp\s)[lI|S][0-9OolI|.,]*)"
    r"(?![A-Za-z])((?:\s(?=[0-9OolI|.,]*[0-9.,]|[lI|]\s[0-9])[0-9OolI|.,]+(?![A-Za-z]))*)(\s?(?:%o?|o/o))?"
)
# "/o" is left of a percent sign scanned as "o/o" when the run read its "o" as a zero: "7Oo/o (… persen)"
_TWIN_AFTER_RE = re.compile(r"(?:/o)?\s*(?:,\s*[0O]{2}|,\s*-)?\s*\(\s*")
_LOOKALIKE = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "|": "1", "S": "5"})
_DAMAGE_RE = re.compile(r"[OolI|S]|\d\s|\s\d|[.,]\s")
# A cheap test of a whole text for a damaged run: digits beside a space or a look-alike letter ("2 . 640",
# "307. l 19"), or a look-alike letter right after "Rp". Every branch opens with one character class, so the
# scan skips the ordinary letters in C (a pattern of plain alternatives is tried branch by branch at every
# position: three times slower on a claim); the look-behinds say which branch the first character opened.
_SUSPECT_RE = re.compile(
    r"[\dOolI|R](?:(?<=\d)(?:\s[.,]\s\d|[.,]?\s[.,]?\d|[.,]?\s[lI|]\s\d|[OolI|]|%o)"
    r"|(?<=[OolI|])\d|(?<=R)p\s?[lI|S]|(?<=o)/o)"
)


def _inside(figure: Figure, start: int, end: int) -> bool:
    return start <= figure.start < end


def reconcile(
    text: str, digits: list[Figure], spelled: list[Figure], lang: str
) -> tuple[list[Figure], list[Figure]]:
    """(digit figures, spelled figures) with damaged runs read by their words, or whole."""
    if not _SUSPECT_RE.search(text):
        return digits, spelled
    spelled_at = {figure.start: index for index, figure in enumerate(spelled)}
    drop: set[int] = set()
    add: list[Figure] = []
    for match in _RUN_RE.finditer(text):
        body = match.group(2) + (match.group(3) or "")
        prefix = match.group(1)
        if not _DAMAGE_RE.search(text[match.start(2) : match.end()].strip()):
            continue  # clean digits: read as written
        start = match.start(2) if prefix is None else match.start(1)
        end = match.end()
        twin = _TWIN_AFTER_RE.match(text, end)
        inside = [i for i, figure in enumerate(digits) if _inside(figure, start, end)]
        if twin and twin.end() in spelled_at:
            index = spelled_at[twin.end()]
            words = spelled[index]
            if prefix and words.unit is None:
                words = words._replace(kind="amount", unit="IDR")
            elif match.group(4) and words.kind == "count" and words.unit is None:
                words = words._replace(kind="percent")
            approximate, bound = qualifiers(text, start)
            if negative_sign(text, start) < 0 < words.value:
                words = words._replace(value=-words.value)
            spelled[index] = words._replace(
                start=start,
                text=text[start : words.end],
                approximate=approximate or words.approximate,
                bound=bound or words.bound,
            )
            drop.update(inside)
            continue
        if prefix is None or " " not in body.strip():
            continue
        joined = re.sub(r"\s+", "", body).translate(_LOOKALIKE)
        parsed = parse_digit_token(joined, lang=lang, currency=True)
        if parsed is None or joined.count(".") + joined.count(",") < 3 or not inside:
            continue
        first = digits[inside[0]]
        value, decimals = parsed
        add.append(
            first._replace(
                value=value,
                text=text[start:end],
                end=end,
                kind="amount",
                unit="IDR",
                scale_word=None,
                quantum=Decimal(1).scaleb(-decimals),
                whole=decimals == 0,
                ocr_repaired=True,
            )
        )
        drop.update(inside)
    if not drop:
        return digits, spelled
    return [f for i, f in enumerate(digits) if i not in drop] + add, spelled
