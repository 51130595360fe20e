"""What is written around a number: its currency, scale word, unit, approximation and bound markers.

``suffix`` reads after the number ("miliar", "persen", "orang", "km per jam"); ``qualifiers`` reads before it
("sekitar", "paling sedikit", "tidak melebihi").
"""

from __future__ import annotations

import re
from decimal import Decimal

from language.figure import ONE
from language.lexicon import (
    APPROX_MARKERS,
    BOUND_MARKERS,
    CURRENCY_SCALE_LETTERS,
    CURRENCY_SUFFIX,
    DOTTED_SCALE_ABBREVIATIONS,
    PERCENT_WORDS,
    PERMILLE_WORDS,
    SCALE_WORDS,
    UNITS,
)
from language.ocr_words import fold, one_edit_apart

# Every scale word of the lexicon but the one-letter ones, which count only attached to the digits ("5k").
_SCALE_ALTS = "|".join(
    re.escape(word) + (r"\.?" if word in DOTTED_SCALE_ABBREVIATIONS else "")
    for word in sorted(SCALE_WORDS, key=len, reverse=True)
    if len(word) > 1
)
_SCALE_RE = re.compile(rf"\s?({_SCALE_ALTS})(?!\w)", re.IGNORECASE)
_SCALE_LETTER_RE = re.compile(r"\s?([MT])\b(?!\.\w)")
_SCALE_ATTACHED_RE = re.compile(r"([kb])\b")
_UNIT_ALTS = "|".join(
    re.escape(u)
    for u in sorted([*UNITS, *CURRENCY_SUFFIX, *PERCENT_WORDS, *PERMILLE_WORDS], key=len, reverse=True)
)
_UNIT_RE = re.compile(rf"\s*({_UNIT_ALTS})(?![\w²])", re.IGNORECASE)
_PER_RE = re.compile(rf"\s*(?:per|/)\s*({_UNIT_ALTS}|kapita|capita)(?![\w²])", re.IGNORECASE)
# "3% (tiga persen) sebulan": "se-" on a period word is "per" it ("sebulan" is "per bulan"), also past the
# closing parenthesis of a spelled twin; only period words, where "se-" can mean nothing but one
_PER_ONE_RE = re.compile(r"\s*\)?\s*se(hari|minggu|bulan|tahun)(?!\w)", re.IGNORECASE)


def unit_of(word: str) -> tuple[str, str | None]:
    """(kind, unit) for a unit word written after a number."""
    low = re.sub(r"\s+", " ", word.lower())
    if low in PERCENT_WORDS:
        return "percent", None
    if low in PERMILLE_WORDS:
        return "permille", None
    if low in CURRENCY_SUFFIX:
        return "amount", CURRENCY_SUFFIX[low]
    return "count", UNITS.get(low)


_FILLERS = frozenset(
    {
        "sebesar",
        "senilai",
        "sebanyak",
        "sejumlah",
        "of",
        "at",
        "mencapai",
        "dalam",
        "jangka",
        "waktu",
        "selama",
        "tanggal",
        "pada",
        "for",
    }
)
# Phrases indexed by their last word, longest first: only a handful are tried per number.
_APPROX_PHRASES: dict[str, list[tuple[str, ...]]] = {}
for _phrase in sorted((tuple(m.split()) for m in APPROX_MARKERS), key=len, reverse=True):
    _APPROX_PHRASES.setdefault(_phrase[-1], []).append(_phrase)
_BOUND_PHRASES: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _phrase, _value in sorted(
    ((tuple(m.split()), v) for m, v in BOUND_MARKERS.items()), key=lambda p: -len(p[0])
):
    _BOUND_PHRASES.setdefault(_phrase[-1], []).append((_phrase, _value))
_NEGATING = frozenset({"tidak", "tak", "not", "no"})
# A prohibition flips a bound as a negation does: "dilarang melebihi Rp5 juta" is at most Rp5 juta.
_PROHIBITING = frozenset({"dilarang", "forbidden", "prohibited"})
# A modal may stand between the negation and its bound: "tidak boleh lebih dari" is "tidak lebih dari".
_MODALS = frozenset({"boleh", "dapat", "akan", "bisa", "diperbolehkan", "may", "shall", "can", "must"})
_PUNCT = ",;:()\"'“”"


def _ends_with(words: list[str], end: int, phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return end >= size and tuple(words[end - size : end]) == phrase


def _skip_fillers(words: list[str], end: int) -> int:
    while end > 0 and words[end - 1] in _FILLERS:
        end -= 1
    return end


_NEGATIVE_RE = re.compile(
    r"(?:negatif|negative|minus)\s+(?:(?:sebesar|senilai|of|at|sekitar|kurang\s+lebih|kira-kira|about|around"
    r"|approximately|roughly)\s+)*$",
    re.IGNORECASE,
)


def negative_sign(text: str, start: int) -> int:
    """-1 when the figure at ``start`` is written negative ("negatif Rp2,5 triliun", "minus 3 persen")."""
    return -1 if _NEGATIVE_RE.search(text, max(0, start - 24), start) else 1


def _negation_before(words: list[str], end: int) -> int:
    """How many words before ``end`` negate the bound that follows: "tidak", "tidak boleh", "dilarang"
    (a prohibition of exceeding states a maximum); 0 when none does. Only a negation flips: a bare modal
    ("dapat lebih dari") leaves the bound as it is."""
    if not end:
        return 0
    last = words[end - 1]
    if last in _NEGATING or last in _PROHIBITING:
        return 1
    if last in _MODALS and end >= 2 and words[end - 2] in _NEGATING:
        return 2
    return 0


# "paling X" bounds by their second word: a scan damages it ("paling tingqi") more often than "paling"
_PALING_BOUNDS = {p[1]: (p, v) for m, v in BOUND_MARKERS.items() if (p := tuple(m.split()))[0] == "paling"}


def _scanned_paling_bound(words: list[str], stop: int) -> tuple[tuple[str, ...], str] | None:
    """ "paling tingqi": the one "paling" bound whose second word is one letter off the written one (first
    letter intact, five letters or more); None when none or several are, or the word is a bound already."""
    if stop < 2 or words[stop - 2] != "paling" or len(words[stop - 1]) < 5:
        return None
    written = fold(words[stop - 1])
    near = [
        (("paling", words[stop - 1]), value)
        for second, (_, value) in _PALING_BOUNDS.items()
        if second[0] == written[0] and len(second) >= 5 and one_edit_apart(written, second)
    ]
    return near[0] if len(near) == 1 else None


def qualifiers(text: str, start: int) -> tuple[bool, str | None]:
    """Approximation ("sekitar", "about", "±") and bound ("paling sedikit", "lebih dari") markers written just
    before ``start``; one plain word may stand between a bound and its number ("sekurang-kurangnya berumur
    18 tahun"); a negated bound flips ("tidak melebihi 130%" is at most 130%)."""
    window_start = max(0, start - 64)
    raw = text[window_start:start].lower()
    if raw.endswith(("±", "~")):
        raw = raw[:-1] + " ±"
    words = [w.strip(_PUNCT) for w in raw.split()]
    if window_start and words:
        words = words[1:]  # the window may cut the first word
    approximate = False
    bound = None
    end = len(words)
    for _ in range(2):
        end = _skip_fillers(words, end)
        last = words[end - 1] if end else ""
        if not approximate and (
            phrase := next((p for p in _APPROX_PHRASES.get(last, ()) if _ends_with(words, end, p)), None)
        ):
            approximate = True
            end -= len(phrase)
            continue
        if bound is None:
            found = None
            for stop in (
                end,
                _skip_fillers(words, end - 1)
                if end
                and words[end - 1].isalpha()
                and len(words[end - 1]) >= 3
                and words[end - 1] not in _NEGATING
                else -1,
            ):
                candidates = _BOUND_PHRASES.get(words[stop - 1], ()) if stop > 0 else ()
                found = next(((p, v) for p, v in candidates if _ends_with(words, stop, p)), None)
                found = found or _scanned_paling_bound(words, stop)
                if found:
                    end = stop - len(found[0])
                    break
            if found:
                bound = found[1]
                negation = _negation_before(words, end)
                if negation:
                    bound = {"gt": "max", "lt": "min"}.get(bound, bound)
                    end -= negation
                continue
        break
    return approximate, bound


def suffix(
    text: str, pos: int, *, currency: str | None = None
) -> tuple[str | None, Decimal, str, str | None, int]:
    """Read scale word, unit word and "per X" after a number: (scale, multiplier, kind, unit, end).
    ``currency``: the currency written before the number, if any ("Rp" → "IDR")."""
    scale = None
    multiplier = ONE
    match = _SCALE_RE.match(text, pos)
    letter = None if match else _SCALE_LETTER_RE.match(text, pos) if currency else None
    attached = None if match or letter else _SCALE_ATTACHED_RE.match(text, pos)
    if match:
        scale, multiplier = SCALE_WORDS[match.group(1).lower().rstrip(".")]
        pos = match.end()
    elif letter:
        scale = CURRENCY_SCALE_LETTERS[letter.group(1)]
        multiplier = SCALE_WORDS[scale][1]
        pos = letter.end()
    elif attached:
        scale, multiplier = SCALE_WORDS[attached.group(1)]
        pos = attached.end()
    kind, unit = ("amount", currency) if currency else ("count", None)
    unit_match = _UNIT_RE.match(text, pos)
    if (
        unit_match
        and unit_match.group(1).lower() in ("idr", "usd")
        and re.match(r"\s*\d", text[unit_match.end() :])
    ):
        unit_match = None  # "2015 IDR 33.41 billion": the code opens the next amount
    if unit_match and not (unit_match.group(1) == "m" and scale):
        word_kind, word_unit = unit_of(unit_match.group(1))
        if not currency or word_unit == currency:  # "Rp5 miliar rupiah"; "Rp5 orang" keeps its rupiah
            kind, unit = word_kind, word_unit
            pos = unit_match.end()
    if unit_match or currency:
        per = _PER_RE.match(text, pos) or _PER_ONE_RE.match(text, pos)
        if per:
            per_word = per.group(1).lower()
            per_unit = "person" if per_word in ("kapita", "capita") else UNITS.get(per_word, per_word)
            unit = f"{unit or kind}/{per_unit}"
            pos = per.end()
    return scale, multiplier, kind, unit, pos
