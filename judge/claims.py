"""A claim as the rule judge reads it: its figures, each with the words that name it (its entity), its
periods, directions and role in a change; its loose words, references, polarity and denied figures.

Parsed once per claim (judge.rules checks it against every cited passage). A claim written as a table row is
read under the context's table header, and a claim that writes no period takes the one period its context
gives (a heading "Tahun Anggaran 2024").
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from judge.grounding import ClaimFigure
from judge.polarity import Polarity, polarity
from judge.shares import base_words
from language.lexicon import FRAMING_WORDS, MARKER_WORDS, NEGATIONS
from language.numbers import PERIOD_KINDS, Figure
from language.references import reference_keys
from language.textunits import (
    TextView,
    Token,
    acronym_keys,
    build_view,
    content_tokens,
    fresh_view,
    phrase_keys,
)

_COMPOUND_UNIT_RE = re.compile(r"\b(\w+)-(years?|months?|weeks?|days?|hours?)\b", re.IGNORECASE)
_TABLE_ROW_RE = re.compile(r"^\s*\|.*\|\s*$")
_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}")


def _table_header(context: str) -> str | None:
    rows = [
        line for line in context.splitlines() if _TABLE_ROW_RE.match(line) and not _SEPARATOR_RE.match(line)
    ]
    return rows[-1] if rows else None


def _required(token: Token) -> bool:
    return token.low not in FRAMING_WORDS and token.low not in MARKER_WORDS


def _word(token: Token) -> bool:
    return token.low[0] != "§"  # reference pseudo-words are checked as references, not as coverage


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class ClaimParts(NamedTuple):
    view: TextView
    offset: int
    figures: tuple[ClaimFigure, ...]
    periods: tuple[str, ...]
    loose_words: tuple[Token, ...]  # content words outside every figure's neighbourhood
    keys: frozenset[str]  # keys of all the claim's content words
    polarity: Polarity  # of the whole claim
    words: tuple[Token, ...]  # required content words (checked for coverage when there is no figure)
    references: frozenset[tuple[str, str]]  # the claim's references (reference_keys)
    denied: frozenset[int]  # positions in ``figures`` of the figures the claim denies outright
    period_bounds: dict[str, str]  # the claim's bounded periods: "paling lambat 30 November" → max


# Small: a claim is parsed for check_claim and, at most, once more for hard_contradiction right after. Claims
# kept alive longer would only make the garbage collector's full passes longer.
@lru_cache(maxsize=16)
def claim_parts(claim: str, context: str) -> ClaimParts:
    header = _table_header(context) if _TABLE_ROW_RE.match(claim) else None
    # "a five-year term", "a 5-year term": the unit of an English compound adjective (same length, so every
    # offset into the claim stays valid)
    claim = _COMPOUND_UNIT_RE.sub(r"\1 \2", claim)
    text, offset = (f"{header}\n{claim}", len(header) + 1) if header else (claim, 0)
    view = fresh_view(text)
    own_periods = tuple(
        f.period for f in view.figures if f.kind in PERIOD_KINDS and f.start >= offset and f.period
    )
    context_periods: tuple[str, ...] = ()
    if not own_periods and context and not header:
        found = {f.period for f in build_view(context).figures if f.kind in PERIOD_KINDS and f.period}
        context_periods = tuple(found) if len(found) == 1 else ()
    content = content_tokens(view, offset)
    words = [t for t in content if _required(t)]
    periods_written = any(f.kind in PERIOD_KINDS for f in view.figures)
    whole = polarity(view, ((offset, len(view.text)),))
    placed: set[int] = set()
    figures = []
    for index in view.quantities:
        fig = view.figures[index]
        if fig.start < offset:
            continue
        ranges = view.neighbourhood(index)
        required = tuple(_words_in(words, ranges))  # (every word in ``words`` starts at or after offset)
        placed.update(t.start for t in required)
        dated = view.dating_ranges(index) + view.topic if index in view.dating else ranges
        found_periods = _own_periods(view, index, view.periods_in(dated)) if periods_written else ()
        in_region = tuple(f.period for f in found_periods if f.start >= offset and f.period)
        column_periods = tuple(f.period for f in found_periods if f.start < offset and f.period)
        periods = (
            (in_region + column_periods)
            or (_following_period(view, index, offset) if periods_written else ())
            or own_periods
            or context_periods
        )
        directions = (
            polarity(view, view.regions.get(index, ())).directions if whole.directions else frozenset()
        )
        base = base_words(view, index) if fig.kind == "percent" else ()
        figures.append(ClaimFigure(fig, required, periods, view.roles.get(index), directions, base))
    loose = tuple(t for t in words if t.start not in placed and _word(t))
    all_periods = own_periods + tuple(p for cf in figures for p in cf.periods if p not in own_periods)
    keys: set[str] = set()
    for token in content:
        keys |= token.keys
        for part in acronym_keys(token.low):
            keys |= part
        for equivalent in phrase_keys(token.low) if " " in token.low else ():
            for part in equivalent:  # an English lexicon phrase names what its Indonesian equivalent names
                keys |= part
    return ClaimParts(
        view,
        offset,
        tuple(figures),
        tuple(dict.fromkeys(all_periods)),
        loose,
        frozenset(keys),
        whole,
        tuple(t for t in words if _word(t)),
        reference_keys([r for r in view.parsed.references if r.start >= offset]),
        _negated_figures(view, offset, figures),
        {f.period: f.bound for f in view.figures if f.kind in PERIOD_KINDS and f.period and f.bound},
    )


CLAUSE_BREAK_RE = re.compile(r"[,;]|\b(?:dan|serta|sedangkan|and|while)\b", re.IGNORECASE)


def _own_periods(view: TextView, index: int, found: list[Figure]) -> list[Figure]:
    """The claim's periods for figure ``index``, less those closing the previous clause: in "8% mulai 1 Juli
    2031 dan menjadi 9% pada 2033" the July date is the 8%'s, not the 9%'s. (Prose only: a table row's
    column header dates every cell.)"""
    if index in view.in_table:
        return found
    start = view.figures[index].start
    return [
        period
        for period in found
        if period.end > start or not CLAUSE_BREAK_RE.search(view.text, period.end, start)
    ]


def _following_period(view: TextView, index: int, offset: int) -> tuple[str, ...]:
    """A period written right after the figure, in its clause ("8% mulai 1 Juli 2031"), before any other
    quantity: the figure's own date."""
    end = view.figures[index].end
    for figure in view.figures[index + 1 :]:
        if figure.kind not in PERIOD_KINDS:
            return ()
        if CLAUSE_BREAK_RE.search(view.text, end, figure.start) or figure.start - end > 40:
            return ()
        return (figure.period,) if figure.period and figure.start >= offset else ()
    return ()


def _words_in(words: list[Token], ranges: tuple[tuple[int, int], ...]) -> list[Token]:
    inside = []
    for token in words:
        position = token.start
        for start, end in ranges:
            if start <= position < end:
                inside.append(token)
                break
    return inside


def _negated_figures(view: TextView, offset: int, figures: list[ClaimFigure]) -> frozenset[int]:
    """Claim figures denied outright: "bukan Rp5 miliar", "tidak sebesar 9 persen"."""
    denied = set()
    for position, claim_fig in enumerate(figures):
        if claim_fig.figure.bound:
            continue  # "tidak melebihi 130%": the negation belongs to the bound
        start = claim_fig.figure.start
        before = [t for t in view.tokens_in(offset, start) if t.end <= start][-4:]
        for index, token in enumerate(before):
            if token.low in NEGATIONS and all(
                t.low in FRAMING_WORDS or t.low in MARKER_WORDS for t in before[index + 1 :]
            ):
                denied.add(position)
    return frozenset(denied)
