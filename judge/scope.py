"""Scope and flow words a claim adds to what the passage says: "seluruh", "setiap", "hanya"; "dari" for
"kepada".

A figure written for "Belanja Tunjangan Pimpinan dan Anggota" is not what "setiap anggota" receives; the
amount of one revenue line ("DBH Pajak") is not "seluruh Dana Bagi Hasil"; a condition the passage gives as
one of two ("15% kursi atau 15% suara") is not the "only" one. Such words widen or narrow the claim's scope,
so the passage must write one of the same kind for the claim to stand. Likewise a transfer "kepada
kabupaten" is not a receipt "dari kabupaten": a flow preposition before the same party must agree with the
passage's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Each group: words of one scope, in both languages; the passage must write a word of the claim's group.
_SCOPE_GROUPS = (
    frozenset({"seluruh", "seluruhnya", "semua", "semuanya", "segenap", "all", "entire", "whole"}),
    frozenset({"setiap", "tiap", "tiap-tiap", "masing-masing", "each", "every"}),
    frozenset({"hanya", "semata", "semata-mata", "solely", "exclusively"}),
)
# English "only" is an adverb of many uses ("only partly granted", "amounts to only Rp…"); it restricts a
# condition when it opens one.
_ONLY_CONDITION_RE = re.compile(r"\bonly\s+(?:if|when|where|for|to)\b", re.IGNORECASE)
_EXCLUSIVE = _SCOPE_GROUPS[2]
_WORD_RE = re.compile(r"[a-z]+(?:-[a-z]+)*")

# A flow toward a party and one from it: the party (the next word) must not change side.
_TOWARD = frozenset({"kepada", "ke", "untuk", "to", "towards"})
_AWAY = frozenset({"dari", "from"})
_FLOW_RE = re.compile(r"\b(kepada|ke|untuk|to|towards|dari|from)\s+(?:the\s+)?([a-z]{4,})", re.IGNORECASE)


@lru_cache(maxsize=2048)
def scope_words(text: str) -> frozenset[str]:
    """The scope words a text writes (lower case)."""
    words = set(_WORD_RE.findall(text.lower()))
    found = {w for group in _SCOPE_GROUPS for w in group if w in words}
    if _ONLY_CONDITION_RE.search(text):
        found.add("solely")
    return frozenset(found)


def scope_unsupported(claim: str, passages: Iterable[str]) -> bool:
    """Whether the claim writes a scope word of a group no passage writes a word of."""
    claimed = scope_words(claim)
    if not claimed:
        return False
    written = frozenset().union(*(scope_words(p) for p in passages))
    return any(not claimed.isdisjoint(group) and written.isdisjoint(group) for group in _SCOPE_GROUPS)


@lru_cache(maxsize=2048)
def _flows(text: str) -> frozenset[tuple[str, str]]:
    """(side, party stem) of each flow preposition: ("toward", "pemerin") for "kepada pemerintahan"."""
    flows = set()
    for match in _FLOW_RE.finditer(text):
        side = "toward" if match.group(1).lower() in _TOWARD else "away"
        flows.add((side, match.group(2).lower()[:6]))
    return frozenset(flows)


def flow_conflict(claim: str, passages: Iterable[str]) -> bool:
    """Whether the claim puts a party on the other side of a flow than every passage does: "dari kabupaten"
    where the passage writes only "kepada kabupaten" (a party's word compared by its first six letters, so
    "pemerintah" and "pemerintahan" are one party; the English claim's party must be written in Indonesian
    to be compared at all)."""
    claimed = _flows(claim)
    if not claimed:
        return False
    written: set[tuple[str, str]] = set()
    for passage in passages:
        written |= _flows(passage)
    for side, party in claimed:
        other = "away" if side == "toward" else "toward"
        if (other, party) in written and (side, party) not in written:
            return True
    return False


_NON_RE = re.compile(r"\b(non)(?:[ -]?)([a-z]{4,})\b|\b([a-z]{4,})\b", re.IGNORECASE)


@lru_cache(maxsize=2048)  # a passage is scanned once, not once per claim
def _non_words(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words written under "non", words written plain): "nonfisik", "non-fisik", "Non Fisik" → "fisik"."""
    negated: set[str] = set()
    plain: set[str] = set()
    for match in _NON_RE.finditer(text):
        if match.group(1):
            negated.add(match.group(2).lower())
        else:
            plain.add(match.group(3).lower())
    return frozenset(negated), frozenset(plain)


def prefix_conflict(claim: str, passages: Iterable[str]) -> bool:
    """Whether a negating prefix turns the claim's entity into the passage's other one: "nonfisik" where the
    passage writes only "fisik", or "fisik" where it writes only "non fisik" (nonmigas is not migas)."""
    claim_negated, claim_plain = _non_words(claim)
    negated: set[str] = set()
    plain: set[str] = set()
    for passage in passages:
        found_negated, found_plain = _non_words(passage)
        negated |= found_negated
        plain |= found_plain
    if any(word in plain and word not in negated for word in claim_negated):
        return True
    return any(word in negated and word not in plain for word in claim_plain - claim_negated)


# Inclusion and exclusion of one thing: "sudah termasuk gaji" against "di luar gaji" (the thing: next word).
_EXCLUDE_RE = re.compile(
    r"\b(?:di\s+luar|tidak\s+termasuk|belum\s+termasuk|kecuali|selain|excluding|except|outside)\s+"
    r"(?:the\s+)?([a-z]{3,})",
    re.IGNORECASE,
)
_INCLUDE_RE = re.compile(
    r"\b(tidak\s+|belum\s+)?(?:termasuk|mencakup|meliputi|including|includes|included)\s+(?:the\s+)?([a-z]{3,})",
    re.IGNORECASE,
)


@lru_cache(maxsize=2048)
def _scopes(text: str) -> frozenset[tuple[str, str]]:
    found = {("out", m.group(1).lower()[:5]) for m in _EXCLUDE_RE.finditer(text)}
    found |= {("in", m.group(2).lower()[:5]) for m in _INCLUDE_RE.finditer(text) if not m.group(1)}
    return frozenset(found)


def inclusion_conflict(claim: str, passages: Iterable[str]) -> bool:
    """Whether the claim includes what every passage excludes, or excludes what it only includes."""
    claimed = _scopes(claim)
    if not claimed:
        return False
    written = frozenset().union(*(_scopes(p) for p in passages))
    for side, thing in claimed:
        other = "out" if side == "in" else "in"
        if (other, thing) in written and (side, thing) not in written:
            return True
    return False
