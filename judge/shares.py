"""What a share is a share of: the base written after a percent ("12% dari penerimaan pajak daerah",
"12% of state spending").

A percent with a stated base says of what it is a part. When the passage states the base of the percent a
claim reads, the claim's own base must name it: "12% of state spending" is not "12% dari penerimaan pajak
daerah", though the passage's topic (an APBN, "Anggaran Pendapatan dan Belanja Negara") may write both words.
The claim's base must share a word with the passage's, and every term or name in it must stand there.
"""

from __future__ import annotations

import re

from language.figure import TWIN_GAP_RE
from language.lexicon import FRAMING_WORDS
from language.textunits import TextView, Token, content_tokens, is_grounded, names_term

# After the percent (and its spelled twin's closing parenthesis): "dari"/"of" opens the base.
_BASE_OPEN_RE = re.compile(r"\s*\)?\s*,?\s*(?:dari|of)\s+", re.IGNORECASE)
# A claim's base is a noun phrase: it ends at punctuation, a conjunction, a relative or a purpose clause. A
# passage's base is read to its clause's end ("dari pokok retribusi yang belum atau terlambat disetor"): the
# claim may name it by any of its words.
_CLAIM_BASE_END_RE = re.compile(
    r"[,;.:]|\s(?:dan|serta|yang|untuk|bagi|pada|sejak|mulai|sehingga|and|which|that|for|in|from)\s",
    re.IGNORECASE,
)
_PASSAGE_BASE_END_RE = re.compile(r"[,;.:]\s|\s(?:dan|serta|and)\s", re.IGNORECASE)
_BASE_REACH = 80


def _base_span(view: TextView, index: int, end_re: re.Pattern[str]) -> tuple[int, int] | None:
    figures = view.figures
    fig = figures[index]
    if fig.kind != "percent":
        return None
    end = fig.end
    twin = figures[index + 1] if index + 1 < len(figures) else None
    if twin is not None and twin.spelled and TWIN_GAP_RE.fullmatch(view.text, fig.end, twin.start):
        end = twin.end
    opening = _BASE_OPEN_RE.match(view.text, end)
    if opening is None:
        return None
    stop = end_re.search(view.text, opening.end(), opening.end() + _BASE_REACH)
    span = (opening.end(), stop.start() if stop else min(len(view.text), opening.end() + _BASE_REACH))
    return span if span[1] > span[0] else None


def base_words(view: TextView, index: int) -> tuple[Token, ...]:
    """The content words of the base written after figure ``index`` (empty when none is written)."""
    span = _base_span(view, index, _CLAIM_BASE_END_RE)
    if span is None:
        return ()
    return tuple(t for t in content_tokens(view, *span) if t.low not in FRAMING_WORDS)


def base_keys(view: TextView, index: int) -> frozenset[str] | None:
    """Keys of the base a passage writes after its figure ``index``; None when it writes none."""
    memo_key = ("base", index)
    if memo_key in view.memo:
        return view.memo[memo_key]  # type: ignore[return-value]
    span = _base_span(view, index, _PASSAGE_BASE_END_RE)
    keys = None if span is None else view.keys_in((span,))
    view.memo[memo_key] = keys
    return keys


def base_named(claim_base: tuple[Token, ...], view: TextView, index: int) -> bool:
    """Whether a claim's base (``base_words``) names the base the passage writes after figure ``index``;
    True when the passage writes none (other checks read the figure's words then)."""
    written = base_keys(view, index)
    if written is None or not claim_base:
        return True
    grounded = [is_grounded(t, written) for t in claim_base]
    if not any(grounded):
        return False
    return all(ok or not (t.capital or names_term(t)) for t, ok in zip(claim_base, grounded, strict=True))
