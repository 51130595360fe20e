"""Which passages may answer a question that asks for one state-budget law by its fiscal year.

"Berapa belanja hibah dalam APBN-P 2031?" is answered by the revision law of fiscal year 2031 only: the same
line of the 2031 budget as first enacted, of the 2030 or 2032 budget, or of a regional budget is another
figure, and a figure for another year or document is not an answer. The retriever ranks that law first when
the index holds it (:mod:`retrieval.budget_years`); when it holds none, the passages it returns are the
neighbours', and writing their figures would answer a question nobody asked. So the writer reads only the
passages of the asked law, and says "not found" when none was retrieved.

A question that names a regulation by number is answered from that regulation's passages when any was
retrieved (the same rule: another law's figure is no answer). Left alone: questions that ask for no single
fiscal year; a bare "anggaran 2031" loses only the other years' APBN laws (it may ask for a regional budget).
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.budget_years import BudgetAsk, BudgetLaw, budget_ask, law_of_title, names_national_budget
from retrieval.legal import LegalRef, find_references
from retrieval.querying import corpus_query
from serve_app.answer.segments import Passage


def asked_law(query: str) -> BudgetAsk | None:
    """The budget law ``query`` asks for, or None when it names a regulation or asks for no budget law."""
    if any(ref.names_document for ref in find_references(corpus_query(query))):
        return None
    return budget_ask(query)


def _is_named(ref: LegalRef, p: Passage) -> bool:
    assert p.chunk is not None
    ident = p.chunk.identity
    return ref.same_document(ident.doc_type, ident.number, ident.year)


def _law(p: Passage) -> BudgetLaw | None:
    return None if p.chunk is None else law_of_title(p.chunk.identity.title or p.chunk.document_title)


def _is(law: BudgetLaw | None, ask: BudgetAsk) -> bool:
    return law is not None and law.fiscal_year == ask.fiscal_year and law.kind == ask.kind


def answering_passages(query: str, passages: Sequence[Passage]) -> list[Passage]:
    """``passages`` that may answer ``query``: all of them, unless it asks for one budget law. Then, when it
    names the state budget ("APBN-P 2031"), that law's chunks only (possibly none); when it names only a
    fiscal year ("anggaran 2031"), every passage but those of the other years' and kinds' APBN laws (a
    regional budget's document may be what it asks for)."""
    refs = [r for r in find_references(corpus_query(query)) if r.names_document and r.number]
    if refs:
        # a regulation named by its number is the scope: another law's figure is no answer, when the named
        # one was retrieved at all (else the writer reads what was found)
        named = [p for p in passages if p.chunk is not None and any(_is_named(r, p) for r in refs)]
        return named or list(passages)
    ask = asked_law(query)
    if ask is None:
        return list(passages)
    if names_national_budget(query):
        return [p for p in passages if _is(_law(p), ask)]
    return [p for p in passages if (law := _law(p)) is None or _is(law, ask)]
