"""An abbreviation and the words it stands for are one entity: "TPS" in the passage is the claim's "Tempat
Pemungutan Suara", the claim's "SiLPA" is the passage's "sisa lebih pembiayaan anggaran".

Statutes define their abbreviations once ("… yang selanjutnya disingkat RKD") and then write only the short
form, often far from a cited passage; government text writes the standard ones (APBD, DAK, PPPK) everywhere.
Rather than list them, an abbreviation is matched to a run of words the way Indonesian ones are formed:
split into pieces, each piece a prefix of the next word (initials, or a first syllable: Si-L-P-A), with
linking words (dan, dengan, atas, …) skipped. The claim is then read with the passage's own form, so every
later check (figures, entity words, polarity) compares like with like. Only abbreviations of three letters or
more with two capitals are matched, and each piece must open its word: "DAU" is never "dana alokasi khusus";
only the last piece may instead be its word's first and last letters ("KWH" for "Kepala Wilayah").
"""

from __future__ import annotations

import re
from functools import lru_cache

_ACRONYM_RE = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z]*\b")
_WORD_RE = re.compile(r"[A-Za-z]+")
_LINKING = frozenset({"dan", "dengan", "atas", "yang", "dari", "untuk", "serta", "bagi", "di", "ke", "pada"})
_MAX_WORDS = 9
# words that sit before a figure, never inside a name an abbreviation shortens
_NAMELESS = frozenset(
    "sebesar sejumlah senilai sebanyak sekitar paling menjadi mencapai adalah yaitu rp rupiah persen".split()
)


def _is_acronym(token: str) -> bool:
    capitals = sum(c.isupper() for c in token)
    return 3 <= len(token) <= 9 and capitals >= 2 and (token.isupper() or capitals >= len(token) // 2)


def _pieces_match(letters: str, words: list[str]) -> int:
    """How many of ``words`` (lower case) ``letters`` abbreviates, from the first word; 0 when it does not:
    each word (but a linking word, which may be skipped) takes a non-empty prefix of what is left."""

    def walk(rest: str, index: int) -> int:
        if not rest:
            return index
        if index >= len(words) or index >= _MAX_WORDS:
            return 0
        word = words[index]
        for size in range(min(len(word), len(rest), 3), 0, -1):
            if word.startswith(rest[:size]):
                done = walk(rest[size:], index + 1)
                if done:
                    return done
        if len(rest) == 2 and len(word) > 3 and rest == word[0] + word[-1]:
            return index + 1  # the last piece may be its word's first and last letters: "WH" for "wilayah"
        if word in _LINKING and index:
            return walk(rest, index + 1)
        return 0

    return walk(letters, 0)


def _phrases(text: str, letters: str, *, capitals: bool) -> list[tuple[int, int]]:
    """Spans of ``text`` whose words ``letters`` abbreviates (the last word being no linking word), no word
    of them a function or framing word ("sebesar" names nothing); ``capitals``: each word but a linking one
    capitalised, as a claim writes a name it spells out ("Tempat Pemungutan Suara")."""
    words = list(_WORD_RE.finditer(text))
    lows = [w.group().lower() for w in words]
    found = []
    for start in range(len(words)):
        if lows[start][0] != letters[0] or lows[start] in _LINKING:
            continue
        count = _pieces_match(letters, lows[start:])
        if count < 2 or lows[start + count - 1] in _LINKING:
            continue
        run = range(start, start + count)
        if any(lows[i] not in _LINKING and (lows[i] in _NAMELESS or len(lows[i]) < 3) for i in run):
            continue
        if capitals and any(lows[i] not in _LINKING and not words[i].group()[0].isupper() for i in run):
            continue
        found.append((words[start].start(), words[start + count - 1].end()))
    return found


@lru_cache(maxsize=2048)
def _acronyms(text: str) -> frozenset[str]:
    return frozenset(m.group() for m in _ACRONYM_RE.finditer(text) if _is_acronym(m.group()))


@lru_cache(maxsize=4096)
def _expansion(acronym: str, passage: str) -> str | None:
    """The words of the passage the acronym abbreviates (the first such run), or None."""
    spans = _phrases(passage, acronym.lower(), capitals=False)
    return passage[spans[0][0] : spans[0][1]] if spans else None


@lru_cache(maxsize=1024)
def _written(passages: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """The passages' abbreviations and their lower-case text, once per cited set (claims about it repeat)."""
    return frozenset().union(*(_acronyms(p) for p in passages)), " ".join(passages).lower()


def _longest_first(acronym: str) -> tuple[int, str]:
    return -len(acronym), acronym


@lru_cache(maxsize=1024)
def align_abbreviations(claim: str, passages: tuple[str, ...]) -> str:
    """The claim with each abbreviation the passages spell out written as they spell it, and each phrase the
    passages abbreviate written as their abbreviation. Unchanged when nothing matches."""
    text = claim
    written, lowered = _written(passages)
    # longest first, in a fixed order: a set's order changes from run to run, and a short abbreviation ("KH")
    # replaced first inside a longer one's words ("Wakil K… H…") would leave the longer one unmatched
    for acronym in sorted(_acronyms(claim), key=_longest_first):
        if acronym in written or acronym.lower() in lowered:
            continue
        for passage in passages:
            expansion = _expansion(acronym, passage)
            if expansion is not None:
                text = re.sub(rf"\b{re.escape(acronym)}\b", expansion, text)
                break
    for acronym in sorted(written, key=_longest_first):
        if re.search(rf"\b{re.escape(acronym)}\b", text):  # "KWH" inside "WKWH" is not written
            continue
        spans = _phrases(text, acronym.lower(), capitals=True)
        if spans:
            start, end = spans[0]
            text = text[:start] + acronym + text[end:]
    return text
