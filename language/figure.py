"""One figure, and equality at the claim's precision.

``figures_equal(claim, source)``: the source value rounded half-up to the claim's last stated digit must equal
the claim; a claim that is a whole number of its scale word (Rp872 miliar) equals a source it rounds only when
the claim marks itself approximate ("sekitar", "about"). The same value under another scale word is equal
(Rp2.021,22 triliun and 2,02 kuadriliun); a different magnitude never is.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from language.periods import period_matches

PERIOD_KINDS = frozenset({"year", "period", "date"})
ONE = Decimal(1)


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Figure(NamedTuple):
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
    period: str | None = None  # period key for year/period/date kinds (see language.periods)
    ratio: tuple[Decimal, Decimal] | None = None  # as written: "1:2" → (1, 2)
    spelled: bool = False
    ocr_repaired: bool = False


# Between a figure and its spelled twin: "(", after OCR leftovers of the cents (", 00", ",-").
TWIN_GAP_RE = re.compile(r"\s*(?:,\s*[0O]{2}|,\s*-)?\s*\(\s*")


def is_spelled_twin(text: str, digits: Figure, twin: Figure) -> bool:
    """Does ``twin`` spell out in parentheses the digit figure right before it ("15 (lima belas) tahun")?
    The extractor, its ranges and the regions all pair a figure with its twin by this one rule."""
    if not twin.spelled or digits.spelled:
        return False
    return TWIN_GAP_RE.fullmatch(text, digits.end, twin.start) is not None


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
