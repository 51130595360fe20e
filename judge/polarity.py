"""Direction (naik/turun) and negation (tidak/bukan/belum) in a span of a text view.

Bounds ("paling sedikit", "lebih dari") belong to figures and are compared there
(language.numbers.Figure.bound).
"""

from __future__ import annotations

from typing import NamedTuple

from language.lexicon import (
    COMPARATIVE_DOWN,
    COMPARATIVE_UP,
    DIRECTION_DOWN,
    DIRECTION_UP,
    NEGATION_SKIP,
    NEGATIONS,
    STOPWORDS,
)
from language.textunits import NON_CONTENT, TextView, Token


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Polarity(NamedTuple):
    directions: frozenset[str]  # "up" / "down"
    negated: tuple[frozenset[str], ...]  # keys of each negated word
    asserted: frozenset[str]  # keys of words not under a negation
    # keys of the content words right after each negated word (its object: "tidak termasuk penerbitan SBN")
    objects: tuple[frozenset[str], ...] = ()


def _is_negation(token: Token) -> bool:
    return token.low in NEGATIONS or token.low.endswith("n't")


_DIRECTION_TRIGGERS = DIRECTION_UP | DIRECTION_DOWN | {"lebih", "more", "less"}
# "tidak lebih dari", "no later than": a negated comparison is a bound on a figure (language.qualifiers), not
# a denied proposition.
_BOUND_AFTER_NEGATION = frozenset(
    {"lebih", "kurang", "melebihi", "more", "less", "later", "earlier", "exceed", "exceeding"}
)
# Indicators named after a movement: "pertumbuhan ekonomi" is economic growth, whichever way it goes.
_INDICATOR_AFTER = frozenset({"ekonomi", "economic", "rate"})
_COMPARATIVE_UP = COMPARATIVE_UP | {"tinggi"}


def polarity(view: TextView, ranges: tuple[tuple[int, int], ...]) -> Polarity:
    directions: set[str] = set()
    negated: list[frozenset[str]] = []
    objects: list[frozenset[str]] = []
    asserted: set[str] = set()
    for start, end in ranges:
        tokens = view.tokens_in(start, end)
        skip_next = -1
        for index, token in enumerate(tokens):
            low = token.low
            if low in _DIRECTION_TRIGGERS:
                following = tokens[index + 1].low if index + 1 < len(tokens) else ""
                previous = tokens[index - 1].low if index else ""
                if following in _INDICATOR_AFTER or (low == "up" and previous in ("make", "makes", "made")):
                    pass  # "economic growth", "make up": no movement stated
                elif low in DIRECTION_UP and not (low == "up" and following == "to"):
                    directions.add("up")
                elif low in DIRECTION_DOWN:
                    directions.add("down")
                elif low in ("lebih", "more") and following in _COMPARATIVE_UP:
                    directions.add("up")
                elif low in ("lebih", "less") and following in COMPARATIVE_DOWN:
                    directions.add("down")
            if low.startswith("non-") and len(low) > 4 and " " not in low:
                negated.append(token.keys - {low})
                objects.append(frozenset())
                continue
            if low in NEGATIONS or low.endswith("n't"):
                if index + 1 < len(tokens) and tokens[index + 1].low in _BOUND_AFTER_NEGATION:
                    continue
                if _either_way(tokens, index):
                    continue  # "berturut-turut atau tidak berturut-turut": whether or not, no denial
                for offset, target in enumerate(tokens[index + 1 : index + 4], index + 1):
                    if target.low in NEGATION_SKIP or target.low in STOPWORDS:
                        continue
                    negated.append(target.keys)
                    objects.append(_object_keys(tokens[offset + 1 : offset + 5]))
                    skip_next = offset
                    break
                continue
            if index != skip_next and len(low) > 2 and low not in NON_CONTENT and low[0] != "§":
                asserted |= token.keys
    return Polarity(frozenset(directions), tuple(negated), frozenset(asserted), tuple(objects))


_EITHER = frozenset({"atau", "maupun", "or"})


def _either_way(tokens: tuple[Token, ...], index: int) -> bool:
    """Whether the negation at ``index`` only closes a "whether or not": "X atau tidak X" (the word it
    negates is the one written just before the "atau"), which states both and denies neither."""
    if index < 2 or tokens[index - 1].low not in _EITHER:
        return False
    target = next(
        (t for t in tokens[index + 1 : index + 4] if t.low not in NEGATION_SKIP and t.low not in STOPWORDS),
        None,
    )
    before = tokens[index - 2]
    return target is not None and target.low == before.low and target.low not in NON_CONTENT


def _object_keys(tokens: tuple[Token, ...]) -> frozenset[str]:
    keys: set[str] = set()
    for token in tokens:
        if token.low in NON_CONTENT or len(token.low) <= 2 or token.low[0] == "§":
            continue
        keys |= token.keys
        if len(keys) > 1 and token.low not in STOPWORDS:
            break
    return frozenset(keys)


def _negates(keys: frozenset[str], negated: tuple[frozenset[str], ...]) -> bool:
    return any(not keys.isdisjoint(other) for other in negated)


def polarity_conflicts(claim: Polarity, region: Polarity, whole: Polarity) -> list[str]:
    """Reason codes where the claim's direction or negation disagrees with the source: first the region that
    grounded the claim (a figure's label, the best sentence), then, for words it lacks, the whole passage."""
    reasons = []
    if claim.directions and region.directions and claim.directions.isdisjoint(region.directions):
        reasons.append("polarity_conflict")
    elif claim.directions and not claim.directions <= region.directions:
        reasons.append("direction_unsupported")
    objects = claim.objects or (frozenset(),) * len(claim.negated)
    for keys, thing in zip(claim.negated, objects, strict=True):
        if _negates(keys, region.negated) or _negates(keys, whole.negated):
            continue  # the source denies it too (in the region, or in the clause the claim restates)
        if thing and any(not thing.isdisjoint(other) for other in (*region.objects, *whole.objects)):
            continue  # it denies the same object in other words ("tidak mencakup" / "tidak termasuk")
        if not keys.isdisjoint(region.asserted) or (
            not _negates(keys, whole.negated) and not keys.isdisjoint(whole.asserted)
        ):
            reasons.append("polarity_conflict")  # the claim denies what the source asserts
            break
        if not _negates(keys, whole.negated) and not whole.negated and "non" not in keys:
            # ("non-tax" names a term, checked as a word; only a denied proposition needs the source's denial)
            # the claim denies something the source neither denies nor writes: nothing supports the denial
            reasons.append("negation_unsupported")
            break
    for keys in region.negated:
        if not keys.isdisjoint(claim.asserted) and not _negates(keys, claim.negated):
            reasons.append("polarity_conflict")  # the claim asserts what the source denies
            break
    else:
        for keys in whole.negated:
            # denied elsewhere in the passage and asserted nowhere in it ("tanpa memungut biaya" for "dengan
            # memungut biaya"): the passage never says what the claim asserts
            if (
                not keys.isdisjoint(claim.asserted)
                and not _negates(keys, claim.negated)
                and keys.isdisjoint(whole.asserted)
            ):
                reasons.append("polarity_conflict")
                break
    return sorted(set(reasons))
