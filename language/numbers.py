"""Find and normalise every figure in Indonesian or English text; compare figures at the claim's precision.

``extract_figures`` returns quantities (amounts, percents, per-mille, ratios, counts) and periods (years,
fiscal years, semesters, quarters, months, dates, ranges); numbers introduced by structural words (Pasal,
Nomor, ayat, …) are references and are never returned (see ``language.references``).

``figures_equal(claim, source)`` (defined in language.figure with ``Figure``, re-exported here): the source
value rounded half-up to the claim's last stated digit must equal the claim; a claim that is a whole number of
its scale word (Rp872 miliar) equals a source it rounds only when the claim marks itself approximate.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from language.digits import detect_lang, lower_words, parse_digit_token, repair_ocr
from language.figure import (
    ONE,
    PERIOD_KINDS,
    Figure,
    figures_equal,
    is_spelled_twin,
    kind_group,
    ratios_equal,
    rounds_to,
    scale_differs,
    values_equal,
)
from language.fractions import fraction_figures
from language.lexicon import CURRENCY_PREFIX
from language.ocr_runs import reconcile
from language.periods import find_periods
from language.qualifiers import negative_sign, qualifiers, suffix
from language.references import Reference, extract_references
from language.spelled import find_spelled

__all__ = [
    "ONE", "PERIOD_KINDS", "Figure", "ParsedText", "extract_figures", "extract_references", "figures_equal",
    "kind_group", "parse_text", "parse_uncached", "ratios_equal", "rounds_to", "scale_differs",
    "values_equal",
]  # fmt: skip

_CURRENCY_BEFORE_RE = re.compile(r"(Rp\.?|IDR|US\$|USD|\$)\s*$", re.IGNORECASE)
# A number not preceded by a digit, "." "," or "/" (tested after the match: a look-behind slows the scan).
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_RP_DOT_RE = re.compile(r"(?<![A-Za-z])Rp\.$", re.IGNORECASE)
_RATIO_RE = re.compile(
    r"(?<![\d.,:/])(\d+(?:[.,]\d+)?)\s*(?::|berbanding|banding)\s*(\d+(?:[.,]\d+)?)(?![\d:])"
    r"|\brati?o\s+(?:of\s+)?(\d+(?:[.,]\d+)?)\s+to\s+(\d+(?:[.,]\d+)?)",
    re.IGNORECASE,
)
_WORD_BEFORE_RE = re.compile(r"([A-Za-z$]+\.?)$")
_NAME_BEFORE_RE = re.compile(r"[A-Z][a-z]+\s+$")
# "15 (lima belas) tahun": the unit comes after the spelled twin in parentheses.
_SPELLED_TWIN_RE = re.compile(r"\s*\(\s*[A-Za-z][A-Za-z\s-]{2,300}\)")
_YEAR_MIN, _YEAR_MAX = 1800, 2099
_CLOSING_RE = re.compile(r"\s*\)")
# "1x24 jam", "3 × 24 jam": a count of time spans, the product (24, 72 hours) when a time unit follows.
_TIMES_RE = re.compile(r"\s?[x×]\s?(\d+)\b")
_TIME_UNITS = frozenset({"minute", "hour", "day", "week", "month", "year"})


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def _digit_figures(
    text: str, lang: str, blocked: list[tuple[int, int]], repaired: tuple[int, ...]
) -> list[Figure]:
    figures: list[Figure] = []
    read_to = 0  # the end of the last product read ("1x24 jam"): its second number is part of it
    for match in _NUMBER_RE.finditer(text):
        start, end = match.span()
        if start < read_to or start and (text[start - 1] in ".,/" or text[start - 1].isdecimal()):
            if not _RP_DOT_RE.search(text, max(0, start - 3), start):
                continue  # a later piece of a code or number; "Rp.25.000" is a rupiah prefix with a dot
        if _overlaps(start, end, blocked):
            continue
        times = _TIMES_RE.match(text, end) if end - start <= 2 and match.group().isdigit() else None
        if times and (product := _product(text, start, times, lang)):
            figures.append(product)
            read_to = product.end
            continue
        before = text[max(0, start - 6) : start]
        word_before = _WORD_BEFORE_RE.search(before)
        currency_match = _CURRENCY_BEFORE_RE.search(before)
        currency = CURRENCY_PREFIX.get(currency_match.group(1).lower()) if currency_match else None
        if word_before and not currency and start and text[start - 1].isalpha():
            continue  # "A4", "H2O", "COVID19": part of a code
        if start > 1 and text[start - 1] == "-" and text[start - 2].isalpha():
            continue  # "COVID-19", "ke-2"
        scale, multiplier, kind, unit, suffix_end = suffix(text, end, currency=currency)
        if end < len(text) and text[end].isalpha() and suffix_end == end:
            continue  # "3D", "2nd", "4G", OCR debris such as "20t4" or "1B.000": left unparsed
        if kind == "count" and unit is None and scale is None:
            twin = _SPELLED_TWIN_RE.match(text, end)
            if twin:
                _, _, twin_kind, twin_unit, twin_end = suffix(text, twin.end())
                if twin_unit or twin_kind != "count":
                    kind, unit = twin_kind, twin_unit
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
        approximate, bound = qualifiers(text, fig_start)
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
                value=mantissa * multiplier * negative_sign(text, fig_start),
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


def _product(text: str, start: int, times: re.Match[str], lang: str) -> Figure | None:
    """ "2x7 (dua kali tujuh) hari": a duration written as a count of time spans, read as their product
    (14 days; "3x24 jam" is 72 hours), with the bound written before the factor ("tidak lebih dari"). The
    figure spans the spelled twin, so "tujuh" inside it is never read as a figure of its own."""
    end = times.end()
    _, _, kind, unit, suffix_end = suffix(text, end)
    twin = _SPELLED_TWIN_RE.match(text, end) if unit is None else None
    if twin:
        _, _, kind, unit, suffix_end = suffix(text, twin.end())
    if unit not in _TIME_UNITS:
        return None  # "3x4 meter": not a duration
    parsed = parse_digit_token(times.group(1), lang=lang)
    if parsed is None:
        return None
    approximate, bound = qualifiers(text, start)
    return Figure(
        value=parsed[0] * int(text[start : times.start()]),
        text=text[start:suffix_end],
        start=start,
        end=suffix_end,
        kind=kind,
        unit=unit,
        quantum=Decimal(1).scaleb(-parsed[1]),
        whole=parsed[1] == 0,
        approximate=approximate,
        bound=bound,
    )


def _spelled_figures(text: str, blocked: list[tuple[int, int]], words: frozenset[str]) -> list[Figure]:
    figures: list[Figure] = []
    for number in find_spelled(text, words=words):
        if _overlaps(number.start, number.end, blocked):
            continue
        if figures and number.start < figures[-1].end:
            continue  # the unit of the figure before it: "seratus" in "lima per seratus"
        if text[number.start].isupper() and _NAME_BEFORE_RE.search(
            text, max(0, number.start - 30), number.start
        ):
            continue  # "Kendaraan Bermotor Beroda Dua", "Perang Dunia Kedua": part of a name
        scale, multiplier, kind, unit, end = suffix(text, number.end)
        if kind == "count" and unit is None and (closing := _CLOSING_RE.match(text, number.end)):
            # "3O (tiga puluh) Hari": the twin's unit follows its parenthesis
            _, _, after_kind, after_unit, after_end = suffix(text, closing.end())
            if after_unit is not None and not scale:
                kind, unit, end = after_kind, after_unit, after_end
        if scale:  # "dua puluh juta" is read whole by the spelled parser; a trailing digit-scale is not ours
            continue
        currency_match = _CURRENCY_BEFORE_RE.search(text[max(0, number.start - 6) : number.start])
        start = number.start
        if currency_match:
            kind, unit = "amount", CURRENCY_PREFIX[currency_match.group(1).lower()]
            start = max(0, number.start - 6) + currency_match.start()
        approximate, bound = qualifiers(text, start)
        figures.append(
            Figure(
                value=number.value * negative_sign(text, start),
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
        approximate, bound = qualifiers(text, match.start())
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


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class ParsedText(NamedTuple):
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
        if previous is not None and is_spelled_twin(text, previous, figure):
            if previous.value < 0 < figure.value and previous.value == -figure.value:
                figure = figure._replace(value=previous.value)  # "negatif Rp2.526… (dua triliun …)"
            if previous.ocr_repaired and previous.value != figure.value:
                kept.pop()
            unit = figure.unit or previous.unit
            kind = figure.kind if figure.kind != "count" or figure.unit else previous.kind
            figure = figure._replace(
                bound=figure.bound or previous.bound,
                kind=kind,
                unit=unit,
                approximate=figure.approximate or previous.approximate,
            )
        kept.append(figure)
    return kept


_RANGE_GAP_RE = re.compile(r"\s*\)?\s*(?:-|–|sampai(?:\s+dengan)?|hingga|s\.d\.?|s/d|to)\s*", re.IGNORECASE)


def _ranges(text: str, figures: list[Figure]) -> list[Figure]:
    """ "7,5 sampai 8,5 persen", "rentang 5% hingga 15%": a range's ends are its lower and upper bounds
    (as "paling rendah 5% dan paling tinggi 15%"), and its first number takes the second's unit. A figure's
    spelled twin ("7,5% (tujuh koma lima persen)") is the same end."""
    ends: list[list[int]] = []  # indexes of each figure and its twin
    for index, figure in enumerate(figures):
        previous = figures[index - 1] if index else None
        if ends and previous is not None and is_spelled_twin(text, previous, figure):
            ends[-1].append(index)
        else:
            ends.append([index])
    for low, high in zip(ends, ends[1:], strict=False):
        first, second = figures[low[-1]], figures[high[0]]
        if kind_group(first) != "quantity" and first.kind != second.kind:
            continue
        if first.kind in PERIOD_KINDS or second.kind in PERIOD_KINDS or first.value >= second.value:
            continue
        if not _RANGE_GAP_RE.fullmatch(text, first.end, second.start):
            continue
        if first.bound not in (None, "min", "gt") or second.bound not in (None, "max"):
            continue  # "di atas Rp10 juta sampai Rp40 juta": an open lower end keeps its "di atas"
        shared = first.kind == "count" and first.unit is None and first.scale_word is None
        for index in low:
            figure = figures[index]
            figures[index] = figure._replace(
                bound="gt" if first.bound == "gt" else "min",
                kind=second.kind if shared else figure.kind,
                unit=second.unit if shared else figure.unit,
            )
        for index in high:
            figures[index] = figures[index]._replace(bound="max")
    return figures


@lru_cache(maxsize=4096)
def parse_text(text: str, lang: str | None = None) -> ParsedText:
    """Figures and references of ``text`` (cached: passages are parsed once however many claims cite them)."""
    return parse_uncached(text, lang)


def parse_uncached(text: str, lang: str | None = None) -> ParsedText:
    """``parse_text`` without its cache (for claims, parsed once)."""
    repaired_text, repaired = repair_ocr(text)
    words = lower_words(repaired_text)
    word_set = frozenset(words)
    lang = lang or detect_lang(repaired_text, words=words)
    references = extract_references(repaired_text, words=word_set)
    blocked = [(ref.start, ref.end) for ref in references]
    figures: list[Figure] = []
    for period in find_periods(repaired_text, words=word_set):
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
                bound=qualifiers(repaired_text, period.start)[1] if kind == "date" else None,
                period=period.key,
                ocr_repaired=any(period.start <= i < period.end for i in repaired),
            )
        )
    blocked += [(fig.start, fig.end) for fig in figures]
    ratios = _ratio_figures(repaired_text, lang, blocked)
    ratios += fraction_figures(repaired_text, blocked + [(fig.start, fig.end) for fig in ratios])
    blocked += [(fig.start, fig.end) for fig in ratios]
    digits = _digit_figures(repaired_text, lang, blocked, repaired)
    blocked += [(fig.start, fig.end) for fig in digits]
    spelled = _spelled_figures(repaired_text, blocked, word_set)
    digits, spelled = reconcile(repaired_text, digits, spelled, lang)
    figures = sorted([*figures, *ratios, *digits, *spelled], key=lambda fig: (fig.start, fig.end))
    figures = _ranges(repaired_text, _pair_twins(repaired_text, figures))
    return ParsedText(repaired_text, lang, tuple(figures), tuple(references))


def extract_figures(text: str, *, lang: str | None = None) -> list[Figure]:
    """Every figure in ``text`` (quantities and periods; never references), in order of appearance."""
    return list(parse_text(text, lang).figures)
