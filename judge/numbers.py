"""Find and normalise every figure in Indonesian or English text; compare figures at the claim's precision.

``extract_figures`` returns quantities (amounts, percents, per-mille, ratios, counts) and periods (years,
fiscal years, semesters, quarters, months, dates, ranges); numbers introduced by structural words (Pasal,
Nomor, ayat, …) are references and are never returned (see ``judge.references``).

``figures_equal(claim, source)``: the source value rounded half-up to the claim's last stated digit must equal
the claim; a claim that is a whole number of its scale word (Rp872 miliar) equals a source it rounds only when
the claim marks itself approximate ("sekitar", "about").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from judge.digits import detect_lang, parse_digit_token, repair_ocr
from judge.lexicon import (
    APPROX_MARKERS,
    BOUND_MARKERS,
    CURRENCY_PREFIX,
    CURRENCY_SCALE_LETTERS,
    CURRENCY_SUFFIX,
    PERCENT_WORDS,
    PERMILLE_WORDS,
    SCALE_WORDS,
    UNITS,
)
from judge.periods import find_periods, period_matches
from judge.references import Reference, extract_references
from judge.spelled import find_spelled

PERIOD_KINDS = frozenset({"year", "period", "date"})
ONE = Decimal(1)


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure. ``value`` is absolute (scale applied: Rp871,67 miliar → 871670000000); ``quantum`` is the
    precision stated (10**7 there), ``whole`` says no decimals were stated in front of the scale word."""

    value: Decimal
    text: str
    start: int
    end: int
    kind: str  # amount | percent | permille | ratio | count | year | period | date
    unit: str | None = None  # IDR, USD, person, km, ha, … (percent/permille/ratio are kinds, not units)
    scale_word: str | None = None  # normalised: ribu, juta, miliar, triliun, kuadriliun
    quantum: Decimal = ONE
    whole: bool = True
    approximate: bool = False
    bound: str | None = None  # min | max | gt | lt ("paling sedikit", "paling banyak", "lebih dari", …)
    period: str | None = None  # period key for year/period/date kinds (see judge.periods)
    ratio: tuple[Decimal, Decimal] | None = None  # as written: "1:2" → (1, 2)
    spelled: bool = False
    ocr_repaired: bool = False


_SCALE_RE = re.compile(
    r"\s?(kuadriliun|quadrillion|triliun|trilyun|trillion|miliar|milyar|billion|juta|million|ribu|thousand"
    r"|rb\.?|jt\.?|bn|mn|mio|tn)(?!\w)",
    re.IGNORECASE,
)
_SCALE_LETTER_RE = re.compile(r"\s?([MT])\b(?!\.\w)")
_SCALE_ATTACHED_RE = re.compile(r"([kb])\b")
_UNIT_ALTS = "|".join(
    re.escape(u)
    for u in sorted([*UNITS, *CURRENCY_SUFFIX, *PERCENT_WORDS, *PERMILLE_WORDS], key=len, reverse=True)
)
_UNIT_RE = re.compile(rf"\s*({_UNIT_ALTS})(?![\w²])", re.IGNORECASE)
_PER_RE = re.compile(rf"\s*(?:per|/)\s*({_UNIT_ALTS}|kapita|capita)(?![\w²])", re.IGNORECASE)
_CURRENCY_BEFORE_RE = re.compile(r"(Rp\.?|IDR|US\$|USD|\$)\s*$", re.IGNORECASE)
_NUMBER_RE = re.compile(r"(?<![\d.,/])\d+(?:[.,]\d+)*")
_RATIO_RE = re.compile(
    r"(?<![\d.,:/])(\d+(?:[.,]\d+)?)\s*(?::|berbanding|banding)\s*(\d+(?:[.,]\d+)?)(?![\d:])"
    r"|\brati?o\s+(?:of\s+)?(\d+(?:[.,]\d+)?)\s+to\s+(\d+(?:[.,]\d+)?)",
    re.IGNORECASE,
)
_WORD_BEFORE_RE = re.compile(r"([A-Za-z$]+\.?)$")
_NAME_BEFORE_RE = re.compile(r"[A-Z][a-z]+\s+$")
_TWIN_GAP_RE = re.compile(r"\s*(?:,\s*[0O]{2}|,\s*-)?\s*\(\s*")
# "15 (lima belas) tahun": the unit comes after the spelled twin in parentheses.
_SPELLED_TWIN_RE = re.compile(r"\s*\(\s*[A-Za-z][A-Za-z\s-]{2,300}\)")
_YEAR_MIN, _YEAR_MAX = 1800, 2099


def _unit_of(word: str) -> tuple[str, str | None]:
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
        "hingga",
        "mencapai",
        "dalam",
        "jangka",
        "waktu",
        "selama",
        "within",
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
_PUNCT = ",;:()\"'“”"


def _ends_with(words: list[str], end: int, phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return end >= size and tuple(words[end - size : end]) == phrase


def _skip_fillers(words: list[str], end: int) -> int:
    while end > 0 and words[end - 1] in _FILLERS:
        end -= 1
    return end


def _qualifiers(text: str, start: int) -> tuple[bool, str | None]:
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
                if found:
                    end = stop - len(found[0])
                    break
            if found:
                bound = found[1]
                if end and words[end - 1] in _NEGATING:
                    bound = {"gt": "max", "lt": "min"}.get(bound, bound)
                    end -= 1
                continue
        break
    return approximate, bound


def _suffix(text: str, pos: int, *, currency: bool) -> tuple[str | None, Decimal, str, str | None, int]:
    """Read scale word, unit word and "per X" after a number: (scale, multiplier, kind, unit, end)."""
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
    kind, unit = "count", None
    unit_match = _UNIT_RE.match(text, pos)
    if (
        unit_match
        and unit_match.group(1).lower() in ("idr", "usd")
        and re.match(r"\s*\d", text[unit_match.end() :])
    ):
        unit_match = None  # "2015 IDR 33.41 billion": the code opens the next amount
    if unit_match and not (unit_match.group(1) == "m" and scale):
        kind, unit = _unit_of(unit_match.group(1))
        pos = unit_match.end()
        per = _PER_RE.match(text, pos)
        if per:
            per_word = per.group(1).lower()
            per_unit = "person" if per_word in ("kapita", "capita") else UNITS.get(per_word, per_word)
            unit = f"{unit or kind}/{per_unit}"
            pos = per.end()
    return scale, multiplier, kind, unit, pos


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def _digit_figures(
    text: str, lang: str, blocked: list[tuple[int, int]], repaired: tuple[int, ...]
) -> list[Figure]:
    figures: list[Figure] = []
    for match in _NUMBER_RE.finditer(text):
        start, end = match.span()
        if _overlaps(start, end, blocked):
            continue
        before = text[max(0, start - 6) : start]
        word_before = _WORD_BEFORE_RE.search(before)
        currency_match = _CURRENCY_BEFORE_RE.search(before)
        currency = CURRENCY_PREFIX.get(currency_match.group(1).lower()) if currency_match else None
        if word_before and not currency and start and text[start - 1].isalpha():
            continue  # "A4", "H2O", "COVID19": part of a code
        if start > 1 and text[start - 1] == "-" and text[start - 2].isalpha():
            continue  # "COVID-19", "ke-2"
        if end < len(text) and text[end].isalpha():
            tail = re.match(r"[A-Za-z²]+", text[end:])
            word = tail.group().lower() if tail else ""
            if (
                word not in SCALE_WORDS
                and word not in UNITS
                and word not in CURRENCY_SCALE_LETTERS.keys() | {"m", "t"}
            ):
                continue  # "3D", "2nd", "4G"
        scale, multiplier, kind, unit, suffix_end = _suffix(text, end, currency=currency is not None)
        if kind == "count" and unit is None and scale is None:
            twin = _SPELLED_TWIN_RE.match(text, end)
            if twin:
                _, _, twin_kind, twin_unit, twin_end = _suffix(text, twin.end(), currency=False)
                if twin_unit or twin_kind != "count":
                    kind, unit = twin_kind, twin_unit
        if currency:
            kind, unit = "amount", currency if unit in (None, currency) else unit
        parsed = parse_digit_token(
            match.group(),
            lang=lang,
            currency=currency is not None,
            scaled=scale is not None,
            percent=kind in ("percent", "permille"),
        )
        if parsed is None:
            continue
        mantissa, decimals = parsed
        fig_start = currency_match.start() + max(0, start - 6) if currency_match else start
        approximate, bound = _qualifiers(text, fig_start)
        plain = match.group().isdigit()
        if (
            kind == "count"
            and unit is None
            and scale is None
            and plain
            and len(match.group()) == 4
            and _YEAR_MIN <= int(mantissa) <= _YEAR_MAX
            and not bound
            and not approximate
        ):
            figures.append(
                Figure(
                    mantissa,
                    text[start:end],
                    start,
                    end,
                    "year",
                    period=match.group(),
                    ocr_repaired=any(start <= i < end for i in repaired),
                )
            )
            continue
        figures.append(
            Figure(
                value=mantissa * multiplier,
                text=text[fig_start:suffix_end],
                start=fig_start,
                end=suffix_end,
                kind=kind,
                unit=unit,
                scale_word=scale,
                quantum=Decimal(1).scaleb(-decimals) * multiplier,
                whole=decimals == 0,
                approximate=approximate,
                bound=bound,
                ocr_repaired=any(start <= i < end for i in repaired),
            )
        )
    return figures


def _spelled_figures(text: str, blocked: list[tuple[int, int]]) -> list[Figure]:
    figures = []
    for number in find_spelled(text):
        if _overlaps(number.start, number.end, blocked):
            continue
        if text[number.start].isupper() and _NAME_BEFORE_RE.search(
            text, max(0, number.start - 30), number.start
        ):
            continue  # "Kendaraan Bermotor Beroda Dua", "Perang Dunia Kedua": part of a name
        scale, multiplier, kind, unit, end = _suffix(text, number.end, currency=False)
        if scale:  # "dua puluh juta" is read whole by the spelled parser; a trailing digit-scale is not ours
            continue
        currency_match = _CURRENCY_BEFORE_RE.search(text[max(0, number.start - 6) : number.start])
        start = number.start
        if currency_match:
            kind, unit = "amount", CURRENCY_PREFIX[currency_match.group(1).lower()]
            start = max(0, number.start - 6) + currency_match.start()
        approximate, bound = _qualifiers(text, start)
        figures.append(
            Figure(
                value=number.value,
                text=text[start:end],
                start=start,
                end=end,
                kind=kind,
                unit=unit,
                scale_word=number.scale_word,
                quantum=number.quantum,
                whole=number.whole,
                approximate=approximate,
                bound=bound,
                spelled=True,
            )
        )
    return figures


def _ratio_figures(text: str, lang: str, blocked: list[tuple[int, int]]) -> list[Figure]:
    figures: list[Figure] = []
    if ":" not in text and "banding" not in text and "atio" not in text:
        return figures
    for match in _RATIO_RE.finditer(text):
        if _overlaps(match.start(), match.end(), blocked):
            continue
        left, right = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        first = parse_digit_token(left, lang=lang)
        second = parse_digit_token(right, lang=lang)
        if first is None or second is None or second[0] == 0:
            continue
        approximate, bound = _qualifiers(text, match.start())
        figures.append(
            Figure(
                first[0] / second[0],
                match.group(),
                match.start(),
                match.end(),
                "ratio",
                approximate=approximate,
                bound=bound,
                ratio=(first[0], second[0]),
            )
        )
    return figures


@dataclass(frozen=True, slots=True)
class ParsedText:
    """Everything the rule judge needs from a text's numbers: its figures, references, and the OCR-repaired
    text they index into (same length as the input)."""

    text: str
    lang: str
    figures: tuple[Figure, ...]
    references: tuple[Reference, ...]


def _pair_twins(text: str, figures: list[Figure]) -> list[Figure]:
    """Statutes write a figure twice: "15 (lima belas) tahun". The spelled twin inherits what was written
    around the digits (bound, approximation, unit); a repaired digit figure whose twin disagrees is dropped:
    the repair was a guess after all."""
    kept: list[Figure] = []
    for figure in figures:
        previous = kept[-1] if kept else None
        if (
            figure.spelled
            and previous is not None
            and not previous.spelled
            and _TWIN_GAP_RE.fullmatch(text[previous.end : figure.start])
        ):
            if previous.ocr_repaired and previous.value != figure.value:
                kept.pop()
            unit = figure.unit or previous.unit
            kind = figure.kind if figure.kind != "count" or figure.unit else previous.kind
            figure = replace(
                figure,
                bound=figure.bound or previous.bound,
                kind=kind,
                unit=unit,
                approximate=figure.approximate or previous.approximate,
            )
        kept.append(figure)
    return kept


@lru_cache(maxsize=4096)
def parse_text(text: str, lang: str | None = None) -> ParsedText:
    """Figures and references of ``text`` (cached: passages are parsed once however many claims cite them)."""
    repaired_text, repaired = repair_ocr(text)
    lang = lang or detect_lang(repaired_text)
    references = extract_references(repaired_text)
    blocked = [(ref.start, ref.end) for ref in references]
    figures: list[Figure] = []
    for period in find_periods(repaired_text):
        if _overlaps(period.start, period.end, blocked):
            continue
        kind = (
            "year"
            if "-" not in period.key and ".." not in period.key
            else ("date" if period.key.count("-") == 2 else "period")
        )
        figures.append(
            Figure(
                Decimal(period.year or 0),
                repaired_text[period.start : period.end],
                period.start,
                period.end,
                kind,
                period=period.key,
                ocr_repaired=any(period.start <= i < period.end for i in repaired),
            )
        )
    blocked += [(fig.start, fig.end) for fig in figures]
    ratios = _ratio_figures(repaired_text, lang, blocked)
    blocked += [(fig.start, fig.end) for fig in ratios]
    digits = _digit_figures(repaired_text, lang, blocked, repaired)
    blocked += [(fig.start, fig.end) for fig in digits]
    spelled = _spelled_figures(repaired_text, blocked)
    figures = sorted([*figures, *ratios, *digits, *spelled], key=lambda fig: (fig.start, fig.end))
    return ParsedText(repaired_text, lang, tuple(_pair_twins(repaired_text, figures)), tuple(references))


def extract_figures(text: str, *, lang: str | None = None) -> list[Figure]:
    """Every figure in ``text`` (quantities and periods; never references), in order of appearance."""
    return list(parse_text(text, lang).figures)


def kind_group(figure: Figure) -> str:
    if figure.kind in PERIOD_KINDS:
        return "period"
    if figure.kind in ("amount", "count"):
        return "quantity"
    return figure.kind


def _equal_at(
    claim_value: Decimal,
    quantum: Decimal,
    whole: bool,
    approximate: bool,
    source_value: Decimal,
    source_quantum: Decimal,
) -> bool:
    if claim_value == source_value:
        return True
    if source_quantum > quantum or abs(source_value - claim_value) > quantum:
        return False  # the claim states digits the source lacks, or no rounding bridges the gap
    rounded = (source_value / quantum).quantize(ONE, rounding=ROUND_HALF_UP) * quantum
    return rounded == claim_value and (approximate or not whole)


def values_equal(claim: Figure, source: Figure) -> bool:
    """Value equality at the claim's precision (units and kinds are not looked at)."""
    if source.approximate and not claim.approximate:
        return False  # the claim drops the source's "sekitar"
    return _equal_at(claim.value, claim.quantum, claim.whole, claim.approximate, source.value, source.quantum)


def rounds_to(claim: Figure, source: Figure) -> bool:
    """Equal if only the claim said "sekitar": a rounding the claim does not admit to."""
    return _equal_at(claim.value, claim.quantum, claim.whole, True, source.value, source.quantum)


def ratios_equal(claim: Figure, source: Figure) -> bool:
    """Ratios are equal only in the written orientation (1:2 is 2:4, never 2:1)."""
    if claim.ratio is None or source.ratio is None:
        return False
    return claim.ratio[0] * source.ratio[1] == claim.ratio[1] * source.ratio[0]


def figures_equal(claim: Figure, source: Figure) -> bool:
    """Does ``source`` state the same figure as ``claim`` (same kind, compatible unit, equal at the claim's
    precision, same written ratio orientation, same bound)?"""
    if kind_group(claim) != kind_group(source):
        return False
    if claim.kind in PERIOD_KINDS:
        return period_matches(claim.period or "", source.period or "")
    if claim.bound != source.bound:
        return False
    if claim.kind == "ratio":
        return ratios_equal(claim, source)
    if claim.unit and source.unit and claim.unit != source.unit:
        return False
    return values_equal(claim, source)


_SHIFTS = tuple((Decimal(10) ** exponent) for exponent in (-15, -12, -9, -6, -3, 3, 6, 9, 12, 15))


def scale_differs(claim: Figure, source: Figure) -> bool:
    """The same digits at another magnitude (miliar written for juta): a scale mismatch, not a typo."""
    if kind_group(claim) != "quantity" or kind_group(source) != "quantity" or claim.value == 0:
        return False
    for factor in _SHIFTS:
        if _equal_at(
            claim.value * factor, claim.quantum * factor, claim.whole, True, source.value, source.quantum
        ):
            return True
    return False
