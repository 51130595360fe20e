"""Denials a claim and the passage words of its figure or sentence carry: which case of the passage a claim
restates, and where the rules cannot align a denial (then the claim is not shown to be supported)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from judge.claims import ClaimParts
from judge.grounding import Source
from judge.polarity import Polarity, polarity
from language.lexicon import NEGATIONS
from language.textunits import TextView

# English denials the negation list does not hold: "failing to pay", "unpaid", "lacks", "absent".
ENGLISH_DENIAL_RE = re.compile(r"\b(?:fail\w*|un[a-z]{3,}|lack\w*|absen\w*|neglect\w*|omit\w*)\b", re.I)


def region_polarity(view: TextView, ranges: tuple[tuple[int, int], ...]) -> Polarity:
    """Polarity of a passage's ranges, kept with the passage's view (it is cited by many claims)."""
    memo_key = ("polarity", ranges)
    cached = view.memo.get(memo_key)
    if cached is None:
        cached = view.memo[memo_key] = polarity(view, ranges)
    return cached  # type: ignore[return-value]


def negation_unaligned(
    parts: ClaimParts, sources: Sequence[Source], regions: dict[int, list[tuple[int, int]]]
) -> bool:
    """A claim without figures is its words and their polarity: when the claim denies and the sentence it is
    aligned to does not (or the reverse: "tidak mengizinkan … menggunakan" for "menggunakan"), the rules
    cannot tell a restatement from a contradiction, so it is not supported."""
    claim_denies = any(t.low in NEGATIONS for t in parts.view.tokens)
    for index, ranges in regions.items():
        view = sources[index].view
        denies = any(t.low in NEGATIONS for start, end in ranges for t in view.tokens_in(start, end))
        if denies != claim_denies:
            return True
    return False


def own_denial(view: TextView, figure_index: int) -> bool:
    """Whether the words a passage figure is read with deny something ("dengan tidak mencantumkan …
    dipidana … 5 tahun"): a claim restating that figure without any negation has turned the condition round,
    or says it in words the rules cannot align; either way it is not shown to be supported."""
    own = region_polarity(view, view.labels.get(figure_index) or view.regions.get(figure_index, ()))
    return bool(own.negated)


def denies_own_words(parts: ClaimParts, source: Source, figure_index: int) -> bool:
    """Whether the claim denies a word the grounded figure's own words assert, while neither the figure's own
    sentence nor one holding an equal figure denies it: "(2) … tidak melapor … tidak mendapat …; (3) …
    melapor … mendapat 75%" does not give 75% to those who "tidak melapor" (the denial in (2) is another
    case). Where an equal figure stands in the denying sentence ("(10) … denda 30% … tidak dikenakan"), the
    claim may be about that one and the polarity check of its region decides."""
    if not parts.polarity.negated:
        return False
    view = source.view
    own = region_polarity(view, view.labels.get(figure_index) or view.regions.get(figure_index, ()))
    value = view.figures[figure_index].value
    for keys in parts.polarity.negated:
        if keys.isdisjoint(own.asserted) or any(not keys.isdisjoint(n) for n in own.negated):
            continue
        # the figure's own sentence counts too: "… nilai: 152340 jiwa (… bukan statistik resmi)" denies there
        rivals = [
            view.sentence_at(view.figures[i].start)
            for i in view.quantities
            if i == figure_index or view.figures[i].value == value
        ]
        if not any(_sentence_denies(view, sentence, keys) for sentence in rivals):
            return True
    return False


def _sentence_denies(view: TextView, sentence: tuple[int, int], keys: frozenset[str]) -> bool:
    found = region_polarity(view, (sentence,))
    return any(not keys.isdisjoint(n) for n in found.negated) or (
        any(t.low in NEGATIONS for t in view.tokens_in(*sentence)) and not keys.isdisjoint(found.asserted)
    )
