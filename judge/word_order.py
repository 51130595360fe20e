"""The order of a claim's words against the passage's: roles a claim without figures swaps are not aligned.

"Kota B menyerahkan gedung kepada Kota A" uses every word of "Kota A menyerahkan gedung kepada Kota B", and
a word-by-word alignment finds them all. Indonesian keeps subject, verb and object in order (a passive puts
the object first, and a restatement may move one phrase), so the claim's words, found in the passage, must
keep the passage's order, a claim of five found words or more with at most one word out of place (the
longest run of them in increasing passage order covers all but one). Otherwise the claim is
``order_unaligned``: the rules cannot show that its relations are the passage's.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from language.textunits import TextView, Token

_MIN_WORDS = 3  # two words have no order to check that a restatement does not turn round
_SLACK = 1  # words that may stand out of the passage's order (one moved phrase head) ...
_SLACK_FROM = 5  # ... in a claim of this many found words or more; a shorter one keeps the order exactly


def _longest_increasing(positions: Sequence[int]) -> int:
    tails: list[int] = []
    for position in positions:
        index = bisect.bisect_left(tails, position)
        if index == len(tails):
            tails.append(position)
        else:
            tails[index] = position
    return len(tails)


def _positions(words: Sequence[Token], view: TextView) -> list[int]:
    """Where each claim word first stands in the passage (words the passage lacks are skipped)."""
    positions = []
    for word in words:
        for index, token in enumerate(view.tokens):
            if not word.keys.isdisjoint(token.keys):
                positions.append(index)
                break
    return positions


def order_unaligned(words: Sequence[Token], views: Sequence[TextView]) -> bool:
    """Whether the claim's words, in the passage that holds most of them, break its order by more than one."""
    best = max((_positions(words, view) for view in views), key=len, default=[])
    slack = _SLACK if len(best) >= _SLACK_FROM else 0
    return len(best) >= _MIN_WORDS and _longest_increasing(best) < len(best) - slack
