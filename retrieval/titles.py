"""Documents a query names by the words of their title, not by number.

People name a statute by its subject ("UU Perlindungan Konsumen", "UU Sistem Pendidikan Nasional") or a budget
law by its fiscal year ("APBN Tahun Anggaran 2015": the title says "Anggaran Pendapatan dan Belanja Negara
Tahun Anggaran 2015", its number says 2014). A corpus-wide chunk ranking often misses such a document: other
statutes repeat the question's words more often. This index scores each document by how much of the query's
weight its title covers: a term's weight is its idf over the titles (so "undang", "tahun" or "republik", in
every title, weigh almost nothing), and an abbreviation of the bilingual lexicon is read as its expansion
("APBN", "otsus"), the form titles are written in.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from language.bilingual import find_phrases

_WORD_RE = re.compile(r"[\w-]+")
# A title must cover at least this share of the query's title weight to count as named, with two terms at
# least: one word shared by chance ("desa" in a question and in one title) is not a name.
MIN_COVERAGE = 0.3
MIN_TERMS = 2
COMMON_SHARE = 0.5
# Titles within this share of the best title's score are named too (a budget law and its amendment).
NEAR_BEST = 0.8


class TitleIndex:
    """Analysed title terms per document, with their idf over the titles."""

    def __init__(self, titles: Mapping[str, Sequence[str]]) -> None:
        self._postings: dict[str, list[str]] = {}
        for document_id, terms in titles.items():
            for term in dict.fromkeys(terms):
                self._postings.setdefault(term, []).append(document_id)
        self._count = len(titles)

    def weight(self, term: str) -> float:
        """Title idf of ``term``; 0 for a term no title holds (it cannot name a document) and for one most
        titles hold ("undang", "tahun", "republik": the form of a title, not its subject)."""
        df = len(self._postings.get(term, ()))
        if not df or df > COMMON_SHARE * self._count:
            return 0.0
        return math.log(1.0 + (self._count - df + 0.5) / (df + 0.5))

    def named(self, terms: Sequence[str], *, limit: int = 3) -> list[tuple[str, float]]:
        """(document id, covered share of the query's title weight) of the documents whose title the
        query names, best first, at most ``limit``; empty when no title covers enough of the query."""
        weights = {t: self.weight(t) for t in dict.fromkeys(terms)}
        total = sum(weights.values())
        if total <= 0:
            return []
        scores: dict[str, float] = {}
        matched: dict[str, int] = {}
        for term, weight in weights.items():
            if weight <= 0:
                continue
            for document_id in self._postings.get(term, ()):
                scores[document_id] = scores.get(document_id, 0.0) + weight
                matched[document_id] = matched.get(document_id, 0) + 1
        ranked = sorted(
            ((d, s) for d, s in scores.items() if matched[d] >= MIN_TERMS and s / total >= MIN_COVERAGE),
            key=lambda pair: -pair[1],
        )
        if not ranked:
            return []
        best = ranked[0][1]
        return [(d, s / total) for d, s in ranked[:limit] if s >= NEAR_BEST * best]


def title_query(query: str) -> str:
    """``query`` with each lexicon abbreviation it contains followed by its Indonesian expansion ("APBN 2015"
    → "APBN 2015 anggaran pendapatan dan belanja negara"): titles spell names out."""
    tokens = _WORD_RE.findall(query)
    added = [
        match.equivalents[0]
        for match in find_phrases(tokens)
        if match.language == "abbr" and match.equivalents
    ]
    return " ".join([query, *added]) if added else query


def build_title_index(titles: Mapping[str, str], analyze: Callable[[str], list[str]]) -> TitleIndex:
    return TitleIndex({document_id: analyze(title) for document_id, title in titles.items()})
