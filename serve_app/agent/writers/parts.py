"""Two-part questions: "berapa X dan berapa Y", "how much X and how much Y", "X ... ; Y?".

Scored as one question, the statement of X and the statement of Y each cover only half the asked words, and
the best of them decides alone: the other part goes unanswered (or the whole is refused below the writer's
coverage threshold). Each part is asked on its own instead, with the words before the first question word
("Dalam APBN 2031, ...") carried into the second part, since they scope both.
"""

from __future__ import annotations

import re

# "... dan berapa ...", "... serta berapa ...", "... and how much ...", "... and what ...": a second ask.
_SECOND_ASK = re.compile(
    r"\s*[,;]?\s+(?:dan|serta)\s+(?=(?:berapa|berapakah|apa|kapan|siapa)\b)"
    r"|\s*[,;]?\s+and\s+(?=(?:how\s+(?:much|many|long|large)|what|when|who)\b)",
    re.IGNORECASE,
)
_FIRST_ASK = re.compile(r"\b(?:berapa|berapakah|apa|kapan|siapa|how|what|when|who|which)\b", re.IGNORECASE)


def question_parts(query: str) -> list[str]:
    """The asks of ``query``: one item for a single question, two or more for "X dan berapa Y"."""
    pieces = [p.strip() for p in _SECOND_ASK.split(query) if p.strip()]
    if len(pieces) < 2:
        return [query]
    first = _FIRST_ASK.search(pieces[0])
    scope = pieces[0][: first.start()].strip() if first else ""
    return [pieces[0], *(f"{scope} {p}".strip() for p in pieces[1:])]
