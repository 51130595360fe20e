"""Spelled-out numbers, as statutes write them in parentheses: "dua kuadriliun dua puluh satu triliun …".

Indonesian is the main case; plain English number words are read too. OCR noise seen in the corpus ("rn"
for "m": "rniliar", "sernbilan", "ernpat") is repaired only where the repaired word is a number word.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from language.lexicon import SCALE_EXPONENTS, SPELLED_SCALE_WORDS

_ID_DIGITS = {
    "nol": 0,
    "satu": 1,
    "dua": 2,
    "tiga": 3,
    "empat": 4,
    "lima": 5,
    "enam": 6,
    "tujuh": 7,
    "delapan": 8,
    "sembilan": 9,
}
_EN_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_EN_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ID_WHOLE = {"sepuluh": 10, "sebelas": 11, "seratus": 100}
_MULTIPLIERS = {"belas": 0, "puluh": 10, "ratus": 100, "hundred": 100}  # belas: 10 + unit
# Scale word → (normalised name, power of ten), from the scale vocabulary the digit reader uses too.
_SCALES = {word: (name, SCALE_EXPONENTS[name]) for word, name in SPELLED_SCALE_WORDS.items()}
_SE_SCALES = {"seribu": "ribu", "sejuta": "juta", "semiliar": "miliar", "setriliun": "triliun"}
_DECIMAL_POINT = {"koma", "point"}
_CONNECTORS = {"and"}

VOCAB: frozenset[str] = frozenset(
    [
        *_ID_DIGITS,
        *_EN_UNITS,
        *_EN_TENS,
        *_ID_WHOLE,
        *_MULTIPLIERS,
        *_SCALES,
        *_SE_SCALES,
        *_DECIMAL_POINT,
        *_CONNECTORS,
    ]
)
# "m" misread as "rn" by OCR; each variant maps back to its word.
_OCR_VARIANTS: dict[str, str] = {}
for _word in VOCAB:
    if "m" in _word:
        _OCR_VARIANTS[_word.replace("m", "rn")] = _word
        for _i, _ch in enumerate(_word):
            if _ch == "m":
                _OCR_VARIANTS[_word[:_i] + "rn" + _word[_i + 1 :]] = _word

_WORD_ALTS = "|".join(sorted([*VOCAB, *_OCR_VARIANTS], key=len, reverse=True))
_NUMBER_WORD_RE = re.compile(rf"(?<!\w)(?:{_WORD_ALTS})(?!\w)", re.IGNORECASE)
# "satu-satunya", "dua-duanya": a hyphen joining a number word to a non-number word.
_HYPHEN_AFTER = re.compile(r"-[a-z]", re.IGNORECASE)
# Words of one number are separated by spaces (or a hyphen); a scan may leave a stray mark between them
# ("empat puluh dua ^juta"), which splits no number.
_GAP_RE = re.compile(r"[ \t]*(?:[-^~][ \t]*)?$")
# "salah satu" (one of), "satu per satu" (one by one), "satu sama lain": not quantities.
# "1% (satu persen)", "1 (satu) tahun": a number word opening parentheses right after digits spells them out.
_TWIN_OPEN_RE = re.compile(r"\d\s*%?\s*\(\s*$")
_IDIOM_BEFORE = re.compile(r"(?:salah|one)\s+$", re.IGNORECASE)
_IDIOM_AFTER = re.compile(r"^\s*(?:per\s+satu|sama\s+lain|of\b|another\b|day\b)", re.IGNORECASE)


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class SpelledNumber(NamedTuple):
    value: Decimal
    start: int
    end: int
    quantum: Decimal  # stated to a multiple of this
    scale_word: str | None  # the largest scale word used ("miliar"), normalised
    whole: bool  # a whole number of its scale word (lossy rounding needs an approximation marker)


def _canonical(word: str) -> str:
    low = word.lower()
    return _OCR_VARIANTS.get(low, low)


def parse_words(words: list[str]) -> tuple[Decimal, Decimal, str | None, bool, int] | None:
    """Parse the longest valid number prefix of ``words`` (canonical, lower case).

    Returns (value, quantum, largest scale word, whole, words consumed) or None.
    """
    total = 0
    group = 0
    unit: int | None = None
    scales_used: list[int] = []
    largest: str | None = None
    consumed = 0
    for index, word in enumerate(words):
        if word in _ID_DIGITS or word in _EN_UNITS:
            value = _ID_DIGITS.get(word, _EN_UNITS.get(word, 0))
            if unit is not None or (group % 100 and word in _EN_UNITS and group % 10 == 0 and value >= 10):
                break
            if group % 10 and word in _EN_UNITS:  # "twenty one one"
                break
            unit = value
        elif word in _EN_TENS:
            if unit is not None or group % 100:
                break
            group += _EN_TENS[word]
        elif word in _ID_WHOLE:
            if unit is not None or (group and _ID_WHOLE[word] == 100) or group % 100:
                break
            group += _ID_WHOLE[word]
        elif word in _MULTIPLIERS:
            if word == "hundred":
                if unit is None or group:
                    break
                group += unit * 100
            elif unit is None or (word == "ratus" and group):
                break
            elif word == "belas":
                group += 10 + unit
            else:
                group += unit * _MULTIPLIERS[word]
            unit = None
        elif word in _SCALES or word in _SE_SCALES:
            if word in _SE_SCALES:
                if unit is not None or group:
                    break
                name, exp = _SCALES[_SE_SCALES[word]]
                amount = 1
            else:
                name, exp = _SCALES[word]
                amount = group + (unit or 0)
                if amount == 0:
                    break
            if scales_used and exp >= scales_used[-1]:
                break
            total += amount * 10**exp
            scales_used.append(exp)
            largest = largest or name
            group, unit = 0, None
        elif word in _CONNECTORS:
            if index + 1 < len(words) and words[index + 1] not in _SCALES:
                continue
            break
        elif word in _DECIMAL_POINT:
            digits = []
            for follower in words[index + 1 :]:
                if follower in _ID_DIGITS or (follower in _EN_UNITS and _EN_UNITS[follower] < 10):
                    digits.append(str(_ID_DIGITS.get(follower, _EN_UNITS.get(follower, 0))))
                else:
                    break
            if not digits or scales_used:
                break
            whole_part = Decimal(total + group + (unit or 0))
            fraction = Decimal("0." + "".join(digits))
            return (
                whole_part + fraction,
                Decimal(1).scaleb(-len(digits)),
                None,
                False,
                index + 1 + len(digits),
            )
        else:
            break
        consumed = index + 1
    if consumed == 0:
        return None
    rest = group + (unit or 0)
    value = total + rest
    if rest == 0 and scales_used:
        quantum = Decimal(10) ** scales_used[-1]
    else:
        quantum = Decimal(1)
    whole = bool(scales_used) and value % 10 ** scales_used[0] == 0
    return Decimal(value), quantum, largest, whole if scales_used else True, consumed


_ANY_WORD_RE = re.compile(r"[a-z]+")
_WORD_RUN_RE = re.compile(r"\w+")
_ALL_FORMS = frozenset([*VOCAB, *_OCR_VARIANTS])


def find_spelled(text: str, *, words: frozenset[str] | None = None) -> list[SpelledNumber]:
    """Every run of number words in ``text`` that parses as a number. ``words``: the set of
    ``language.digits.lower_words(text)`` when the caller has it already."""
    if _ALL_FORMS.isdisjoint(_ANY_WORD_RE.findall(text.lower()) if words is None else words):
        return []
    # What _NUMBER_WORD_RE finds, found faster: whole words (runs of \w) that are number words.
    matches = [m for m in _WORD_RUN_RE.finditer(text) if m.group().lower() in _ALL_FORMS]
    found: list[SpelledNumber] = []
    index = 0
    while index < len(matches):
        run = [matches[index]]
        while index + len(run) < len(matches):
            nxt = matches[index + len(run)]
            if not _GAP_RE.match(text, run[-1].end(), nxt.start()) or nxt.start() - run[-1].end() > 3:
                break
            run.append(nxt)
        run_words = [_canonical(m.group()) for m in run]
        if run_words[0] in _CONNECTORS or run_words[0] in _DECIMAL_POINT:
            index += 1
            continue
        parsed = parse_words(run_words)
        if parsed is None:
            index += 1
            continue
        value, quantum, scale, whole, consumed = parsed
        first, last = run[0], run[consumed - 1]
        index += consumed
        if run_words[consumed - 1] in _CONNECTORS:
            last = run[consumed - 2]
        if (
            consumed == 1
            and run_words[0] in {"satu", "one"}
            and not _TWIN_OPEN_RE.search(
                text, max(0, first.start() - 12), first.start()
            )  # "1% (satu persen)" spells out digits
        ):
            continue  # "satu"/"one" alone is an article far more often than a count
        if _HYPHEN_AFTER.match(text, last.end()) or (
            first.start() > 1 and text[first.start() - 1] == "-" and text[first.start() - 2].isalpha()
        ):
            continue
        if _IDIOM_BEFORE.search(text, max(0, first.start() - 8), first.start()) and run_words[0] in {
            "satu",
            "one",
        }:
            continue
        if _IDIOM_AFTER.match(text[last.end() : last.end() + 12]) and run_words[-1] in {"satu", "one"}:
            continue
        found.append(SpelledNumber(value, first.start(), last.end(), quantum, scale, whole))
    return found
