"""OCR-tolerant word matching: a scanned statute damages letters inside words ("mengunglapkan" for
"mengungkapkan", "lifiing" for "lifting", "rn" read for "m"), so a long claim word that the passage spells one
letter off still names the same thing. Only long words qualify: among short words one letter tells different
words apart ("impor" / "ekspor" differ by more, but "naik" / "nail" would not)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

MIN_LENGTH = 7  # shorter words: one changed letter is too often another word
# Letter shapes a scanner confuses, folded before comparing (digits inside a word are always OCR damage).
_CONFUSIONS = (("rn", "m"), ("vv", "w"), ("1", "l"), ("!", "l"), ("|", "l"), ("0", "o"), ("5", "s"))


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """The word with confusable letter shapes folded to one spelling (cached: the same passage and claim
    words are compared again and again)."""
    for seen, meant in _CONFUSIONS:
        word = word.replace(seen, meant)
    return word


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one substituted, inserted or dropped letter."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]


def ocr_match(claim_word: str, passage_words: Iterable[str]) -> bool:
    """Whether a long claim word is written in the passage with OCR damage: one letter off after folding
    confusable shapes, the first letter intact (a scanner rarely damages the first letter and a changed first
    letter is more often another word)."""
    claim = fold(claim_word)
    if len(claim) < MIN_LENGTH:
        return False
    for word in passage_words:
        seen = fold(word)
        if len(seen) >= MIN_LENGTH - 1 and seen[0] == claim[0] and one_edit_apart(claim, seen):
            return True
    return False
