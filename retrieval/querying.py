"""What the first stages and the reranker read of a query, and how the final list keeps documents in view.

* Cross-lingual: the corpus is Indonesian. An English question gains the Indonesian words of every lexicon
  phrase it contains (``language.bilingual``, general public-finance and legal terms: "capital expenditure" →
  "belanja modal", "special autonomy" → "otonomi khusus"), so BM25 and the feature reranker can match the
  statutes' words. The dense stage keeps the question as asked: a multilingual encoder
  (``retrieval.encoder`` in the config) reads English directly.
* Diversity: several chunks of one statute often outrank every other statute (a long budget law repeats its
  terms in each article). The final list keeps the best chunk of each of the first ``share * k`` documents,
  and the best of the rest fill the other places, so the top 10 keeps other documents in view while the best
  document keeps most of its places; the ranker's order is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from language.bilingual import find_phrases

_WORD_RE = re.compile(r"[\w-]+")
_GLOSS_RE = re.compile(r"\([^)]*\)")  # "(Belanja Negara)": the Indonesian name an English question quotes
# Function and question words: which language a question is asked in (names and glosses say nothing).
_EN_WORDS = frozenset(
    "what which who whom how much many does did do is are was were the of in for to under according by "
    "from with and or that this be been has have its their at on".split()
)
_ID_WORDS = frozenset(
    "berapa berapakah apa apakah siapa bagaimana kapan mengapa yang dan di dari untuk dalam menurut pada "
    "dengan atau oleh ke adalah tentang sebesar saja itu ini".split()
)
# English names of regulations a question may use: "Law 21/2001", "Law No. 13 of 2003", "Government
# Regulation Number 12 of 2019". They are written the Indonesian way ("UU 21/2001") so the legal-reference
# reader (retrieval.legal) finds the named regulation.
_ENGLISH_REGULATION = re.compile(
    r"\b(?P<kind>Law|Act|Government\s+Regulation|Presidential\s+Regulation)\s+"
    r"(?:(?:No|Nr|Number)\.?\s*)?(?P<number>\d+)\s*(?:/|\s+of\s+(?:the\s+year\s+)?)(?P<year>\d{4})\b",
    re.IGNORECASE,
)
_REGULATION_CODES = {
    "law": "UU",
    "act": "UU",
    "government regulation": "PP",
    "presidential regulation": "Perpres",
}
_T = TypeVar("_T")


def is_english(query: str) -> bool:
    """True when more English than Indonesian function words stand outside parentheses."""
    words = [w.lower() for w in _WORD_RE.findall(_GLOSS_RE.sub(" ", query))]
    english = sum(w in _EN_WORDS for w in words)
    return english >= 2 and english > sum(w in _ID_WORDS for w in words)


def corpus_query(query: str) -> str:
    """``query`` for the lexical stage, the legal-reference reader and the reranker: an English question with
    the regulations it names written the Indonesian way ("Law 21/2001" → "UU 21/2001"), followed by the
    Indonesian equivalents of its lexicon phrases (English names are not added to Indonesian questions: the
    corpus has none). Any other question is returned as is."""
    tokens = _WORD_RE.findall(query)
    if not tokens or not is_english(query):
        return query
    query = _ENGLISH_REGULATION.sub(_indonesian_regulation, query)
    seen = {t.lower() for t in tokens}
    added: list[str] = []
    for match in find_phrases(tokens):
        if match.language == "id":
            continue
        # an English phrase maps to Indonesian phrases; an abbreviation to its expansion and English names
        equivalents = match.equivalents[:1] if match.language == "abbr" else match.equivalents
        for phrase in equivalents:
            for word in _WORD_RE.findall(phrase.lower()):
                if word not in seen:
                    seen.add(word)
                    added.append(word)
    return f"{query} {' '.join(added)}" if added else query


def _indonesian_regulation(m: re.Match[str]) -> str:
    code = _REGULATION_CODES[" ".join(m.group("kind").lower().split())]
    return f"{code} {m.group('number')}/{m.group('year')}"


def diversify(items: Sequence[_T], document_of: Callable[[_T], str], share: float, k: int) -> list[_T]:
    """The first ``k`` of ``items`` (best first), with the best item of each of the first ``share * k``
    documents kept in them: those stay, and the remaining places go to the best of the rest, so the best
    document keeps most of its places and other documents stay in view. Ranked order is kept."""
    reserve = int(share * k)
    if reserve <= 1:
        return list(items[:k])
    firsts: set[int] = set()
    seen: set[str] = set()
    for i, item in enumerate(items):
        doc = document_of(item)
        if doc not in seen:
            seen.add(doc)
            firsts.add(i)
            if len(firsts) == reserve:
                break
    others = k - len(firsts)
    out: list[_T] = []
    for i, item in enumerate(items):
        if i in firsts:
            out.append(item)
        elif others > 0:
            out.append(item)
            others -= 1
        if len(out) == k:
            break
    return out
