"""The strict rule check of one claim against its cited passages, the reader's context and document identity.

A claim is ``supported`` only when every figure in it is grounded by an equal figure (language.numbers) with a
compatible unit and period, written near the same entity; its periods and references are found in the
passages or their identity; its direction and negation words agree; and, without figures, its content words
are covered (stemmed, with a small bilingual lexicon). Anything else is ``unsupported`` with reason codes.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from judge.base import Judge
from judge.claims import ClaimParts, claim_parts
from judge.conditions import condition_elsewhere
from judge.csv_rows import csv_prose
from judge.denials import (
    ENGLISH_DENIAL_RE,
    denies_own_words,
    negation_unaligned,
    own_denial,
    region_polarity,
)
from judge.grounding import Source, allowed_unknown, ground_figure, ground_period
from judge.polarity import Polarity, polarity_conflicts
from judge.scope import flow_conflict, inclusion_conflict, prefix_conflict, scope_unsupported
from judge.types import JudgeItem, JudgePassage, JudgeResult
from judge.word_order import order_unaligned
from language.abbreviations import align_abbreviations
from language.numbers import PERIOD_KINDS
from language.references import reference_keys
from language.textunits import (
    TextView,
    Token,
    build_view,
    contrast_keys,
    is_grounded,
    names_term,
)

# Reasons that contradict the passage outright: the LLM judge may let these veto its own "supported".
HARD_REASONS = frozenset(
    {
        "figure_mismatch",
        "scale_mismatch",
        "unit_mismatch",
        "period_mismatch",
        "polarity_conflict",
        "reference_as_quantity",
        "rounding_unmarked",
        "ratio_orientation",
    }
)
# Share of a claim's lower-case content words the passage may not write (a restatement's own words: "porsi",
# "diancam", "berjumlah"); English claims use more words the lexicon cannot translate.
PARAPHRASE_RATIO = {"id": 0.5, "en": 0.75}
_IDENTITY_FIELDS = (
    "title",
    "type",
    "number",
    "year",
    "issuer",
    "section",
    "legal_reference",
    "dataset",
    "source",
    "period",
)


@dataclass(frozen=True, slots=True)
class RuleCheck:
    verdict: Literal["supported", "unsupported"]
    reasons: tuple[str, ...]
    spans: tuple[tuple[str, int, int], ...]


@lru_cache(maxsize=2048)
def _identity(
    items: tuple[tuple[str, str], ...],
) -> tuple[frozenset[str], tuple[str, ...], frozenset[tuple[str, str]], frozenset[str]]:
    """(keys, periods, references, lower-case words) of a document identity. Its ``year`` is the year of
    enactment (APBN 2023 is enacted in 2022), so it grounds "Tahun 2022" in a reference, never a period."""
    values = dict(items)
    view = build_view(" | ".join(value for name, value in items if name not in ("year", "number")))
    periods = tuple(fig.period for fig in view.figures if fig.kind in PERIOD_KINDS and fig.period)
    refs = set(reference_keys(list(view.parsed.references)))
    year = values.get("year", "")
    if year.isdigit():
        refs.add(("tahun", year))
    number = values.get("number", "")
    if number:
        refs.add(("nomor", number.lstrip("0") or "0"))
    keys = frozenset(view.all_keys | {t.low for t in view.tokens})
    return keys, periods, frozenset(refs), frozenset(t.low for t in view.tokens)


def _source(passage: JudgePassage, context_words: frozenset[str]) -> Source:
    identity = passage.identity
    items: list[tuple[str, str]] = []
    if identity:
        for name in _IDENTITY_FIELDS:
            value = identity.get(name)
            if value is not None and value != "":
                items.append((name, value if type(value) is str else str(value)))
    return _cached_source(passage.key, passage.text, tuple(items), context_words)


@lru_cache(maxsize=1024)
def _context_words(context: str) -> frozenset[str]:
    return frozenset(t.low for t in build_view(context).tokens) if context else frozenset()


@lru_cache(maxsize=4096)
def _cached_source(
    key: str, text: str, items: tuple[tuple[str, str], ...], context_words: frozenset[str]
) -> Source:
    keys, periods, refs, words = _identity(items)
    prose = csv_prose(text)
    view = build_view(prose.text if prose else text)
    return Source(key, view, keys, periods, refs, words | context_words, prose)


def _cited_spans(
    spans: list[tuple[str, int, int]], sources: Sequence[Source]
) -> tuple[tuple[str, int, int], ...]:
    """Spans in the cited text: one found in a CSV row's prose points at the cell it was read from."""
    proses = {s.key: s.prose for s in sources if s.prose is not None}
    cited = []
    for key, start, end in spans:
        prose = proses.get(key)
        cited.append((key, *prose.origin(start, end)) if prose else (key, start, end))
    return tuple(dict.fromkeys(cited))


def _whole(view: TextView) -> Polarity:
    return region_polarity(view, ((0, len(view.text)),))


def _figure_direction(claimed: frozenset[str], view: TextView, figure_index: int) -> list[str]:
    # the figure's own words: a list's lead-in ("sasaran pertumbuhan ekonomi …:") moves none of its items
    own = view.labels.get(figure_index) or view.regions.get(figure_index, ())
    directions = region_polarity(view, own).directions
    if directions and claimed.isdisjoint(directions):
        return ["polarity_conflict"]
    return [] if claimed <= directions else ["direction_unsupported"]


def _best_sentence(source: Source, words: Sequence[Token]) -> tuple[int, int]:
    best, best_score = source.view.sentences[0], -1
    for sentence in source.view.sentences:
        keys = source.view.keys_in((sentence,))
        score = sum(1 for token in words if is_grounded(token, keys))
        if score > best_score:
            best, best_score = sentence, score
    return best


def check_claim(
    claim: str,
    passages: Sequence[JudgePassage],
    *,
    context: str = "",
    max_unknown_ratio: float | None = None,
) -> RuleCheck:
    """Check one claim strictly against its passages (and the reader's ``context``: heading, list lead-in or
    table header). ``max_unknown_ratio``: share of a claim's content words that may be missing from the
    sources when they are lower-case (names never are; nor a word whose contrast the passage writes there);
    0 is strictest; None takes the paraphrase default of the claim's language (PARAPHRASE_RATIO)."""
    if not passages:
        return RuleCheck("unsupported", ("no_passage",), ())
    context_words = _context_words(context)
    sources = [_source(p, context_words) for p in passages]
    texts = tuple(s.view.text for s in sources)
    # read the claim with the passage's own form of each abbreviation ("TPS" / "Tempat Pemungutan Suara")
    claim = align_abbreviations(claim, texts)
    parts = claim_parts(claim, context)
    english = parts.view.parsed.lang == "en"
    if max_unknown_ratio is None:
        max_unknown_ratio = PARAPHRASE_RATIO["en" if english else "id"]
    all_keys = sources[0].keys if len(sources) == 1 else frozenset().union(*(s.keys for s in sources))
    reasons: list[str] = []
    spans: list[tuple[str, int, int]] = []
    regions: dict[int, list[tuple[int, int]]] = {}
    denied = parts.denied
    placed: dict[int, tuple[int, int]] = {}  # claim figure position → (source index, figure index)
    for position, claim_fig in enumerate(parts.figures):
        grounding = ground_figure(claim_fig, sources, all_keys, max_unknown_ratio, parts.keys, english)
        if not grounding.ok:
            reasons.append(grounding.reason or "figure_mismatch")
            continue
        if position in denied:
            reasons.append("polarity_conflict")
        assert grounding.span is not None and grounding.source_index is not None
        spans.append(grounding.span)
        source = sources[grounding.source_index]
        assert grounding.figure_index is not None
        placed[position] = (grounding.source_index, grounding.figure_index)
        if claim_fig.directions:  # "naik sebesar Rp934 miliar" read off "ditetapkan sebesar Rp934 miliar"
            reasons.extend(_figure_direction(claim_fig.directions, source.view, grounding.figure_index))
        regions.setdefault(grounding.source_index, []).extend(
            source.view.regions.get(grounding.figure_index, ())
        )
    if _unread_amount(parts.view):
        reasons.append("figure_mismatch")  # "Rp.12.345,000.000,00": written, but no figure reads it
    if scope_unsupported(claim, texts):
        reasons.append("scope_unsupported")  # "seluruh", "setiap", "hanya" the passage does not write
    if inclusion_conflict(claim, texts):
        reasons.append("polarity_conflict")  # "sudah termasuk gaji" where the passage says "di luar gaji"
    if prefix_conflict(claim, texts):
        reasons.append("polarity_conflict")  # "nonfisik" where the passage says "fisik" (or the reverse)
    if flow_conflict(claim, texts):
        reasons.append("polarity_conflict")  # "dari kabupaten" where the passage says "kepada kabupaten"
    if (
        english
        and not parts.polarity.negated
        and not ENGLISH_DENIAL_RE.search(claim)
        and any(own_denial(sources[s].view, f) for s, f in placed.values())
    ):
        # an English claim is aligned to the Indonesian passage through a lexicon, never word for word: the
        # figure's own words deny something ("dengan tidak mencantumkan …") the claim never denies
        reasons.append("negation_unaligned")
    if any(denies_own_words(parts, sources[s], f) for s, f in placed.values()):
        reasons.append("polarity_conflict")
    if condition_elsewhere(parts, sources, placed):
        reasons.append("condition_elsewhere")
    for period in parts.periods:
        ok, span = ground_period(period, sources, parts.period_bounds.get(period))
        if not ok:
            reasons.append("period_mismatch")
        elif span is not None and span[0] == "bound":
            reasons.append("polarity_conflict")  # "paling cepat 30 November" for "paling lambat 30 November"
            continue
        elif span is not None and not parts.figures:
            spans.append(span)
    claim_refs = parts.references
    if claim_refs and not claim_refs <= frozenset().union(*(s.references for s in sources)):
        reasons.append("reference_mismatch")
    words = parts.loose_words if parts.figures else parts.words
    unknown = [t for t in words if not is_grounded(t, all_keys)]
    contrasted = any(not contrast_keys(t.low, english).isdisjoint(all_keys) for t in unknown)
    named = any(t.capital or names_term(t) for t in unknown)
    # without a figure the words are all the claim says: every one must be aligned (morphology, lexicon)
    ratio = max_unknown_ratio if parts.figures else 0.0
    allowed = allowed_unknown(ratio, len(words)) if parts.figures else int(ratio * len(words))
    if contrasted or named or len(unknown) > allowed:
        reasons.append("entity_missing" if parts.figures else "low_coverage")
    if not parts.figures and not words and not parts.periods and not claim_refs:
        reasons.append("low_coverage")  # nothing in the claim can be checked
    if not regions:
        for index, source in enumerate(sources):
            sentence = _best_sentence(source, words)
            regions[index] = [sentence]
            if not parts.figures and not spans and not reasons:
                spans.append((source.key, *sentence))
    claim_polarity = parts.polarity
    if any(cf.directions for cf in parts.figures):
        # each figure's direction was checked against its own passage figure: several figures may move in
        # different directions ("kemiskinan turun …, pertumbuhan …")
        claim_polarity = claim_polarity._replace(directions=frozenset())
    for index, ranges in regions.items():
        view = sources[index].view
        reasons.extend(
            polarity_conflicts(claim_polarity, region_polarity(view, tuple(ranges)), _whole(view))
        )
    if not parts.figures and "polarity_conflict" not in reasons:
        if negation_unaligned(parts, sources, regions):
            reasons.append("negation_unaligned")
        if not parts.periods and order_unaligned(parts.words, [s.view for s in sources]):
            reasons.append("order_unaligned")  # swapped roles: the passage's words in another order
    if parts.polarity.directions and "direction_unsupported" in reasons:
        # the whole claim's direction, even where each figure's was checked: "dinaikkan bertahap: 3% …, 6% …,
        # 10% …" states its rise by its own grounded figures
        reasons = _direction_by_arithmetic(parts, reasons)
    unique = tuple(dict.fromkeys(reasons))
    return RuleCheck("unsupported" if unique else "supported", unique, _cited_spans(spans, sources))


_AMOUNT_RE = re.compile(r"\bRp\.?\s?\d[\d.,]*\d")


def _unread_amount(view: TextView) -> bool:
    """Whether the claim writes a rupiah amount no figure was read from (malformed grouping): its value,
    direction and entity would go unchecked while the claim's other figures are grounded."""
    if "Rp" not in view.text:
        return False
    spans = [(f.start, f.end) for f in view.figures]
    return any(
        not any(start <= m.start() < end or m.start() <= start < m.end() for start, end in spans)
        for m in _AMOUNT_RE.finditer(view.text)
    )


def _direction_by_arithmetic(parts: ClaimParts, reasons: list[str]) -> list[str]:
    """ "naik dari Rp4 miliar menjadi Rp5 miliar": two grounded figures of one kind state the direction."""
    figures = [cf.figure for cf in parts.figures if cf.figure.kind in ("amount", "count", "percent")]
    if len(figures) < 2 or figures[0].kind != figures[-1].kind or "figure_mismatch" in reasons:
        return reasons
    direction = "up" if figures[-1].value > figures[0].value else "down"
    claimed = parts.polarity.directions
    if claimed == {direction}:
        return [r for r in reasons if r != "direction_unsupported"]
    return reasons


def hard_contradiction(claim: str, passages: Sequence[JudgePassage], context: str = "") -> tuple[str, ...]:
    """The reason codes by which the passages contradict the claim outright (a figure, scale, unit, period,
    polarity or reference read as a quantity); empty when there is none. The LLM judge may use these to
    veto its own "supported" verdict."""
    parts = claim_parts(claim, context)
    if not parts.figures and not parts.periods:
        return ()  # no figure to contradict: wording and negation are the LLM judge's call
    return tuple(r for r in check_claim(claim, passages, context=context).reasons if r in HARD_REASONS)


class RuleJudge(Judge):
    """The embedded, deterministic judge: ``check_claim`` for every item, no model needed."""

    name = "rules"
    deterministic = True

    def __init__(
        self, *, max_unknown_ratio: float | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._max_unknown_ratio = max_unknown_ratio
        self._clock = clock

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        results = []
        for position, item in enumerate(items):
            if position and position % 64 == 0:
                await asyncio.sleep(0)  # long batches must not starve the event loop
            if item.deadline is not None and self._clock() > item.deadline:
                results.append(JudgeResult(item.item_id, "unverified", ("deadline",), "deadline"))
                continue
            try:
                check = check_claim(
                    item.claim, item.passages, context=item.context, max_unknown_ratio=self._max_unknown_ratio
                )
            except Exception as error:  # one bad item never sinks the batch
                results.append(
                    JudgeResult(
                        item.item_id,
                        "unverified",
                        (f"rule_error:{type(error).__name__}",),
                        "judge_unavailable",
                    )
                )
                continue
            results.append(JudgeResult(item.item_id, check.verdict, check.reasons, None, check.spans))
        return results
