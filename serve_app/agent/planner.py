"""The planner: picks the agent's tools from the question's intent, with hybrid search as the default and
the fallback. Deterministic rules, no model call, so the whole model budget stays with writing and judging.

=================  ==============================================================================
intent             when
=================  ==============================================================================
chitchat           a greeting or thanks and nothing else (no tool; unless a re-asked follow-up)
summarize          a follow-up that refers to exactly one earlier document, or a summary request with
                   exactly one document in scope: reads that document whole
legal_check        the question names a regulation and its Pasal (ayat, huruf): exact article lookup
cross_reference    "apa yang mengubah/mencabut/merujuk UU 11/2006": regulations that cite a named one
table_query        an aggregate the table computes: a total or average over rows (then search too, so a
                   total the documents state can answer instead), compare, top-n; never a question
                   about a stated share ("berapa persen"): the tool itself refuses a table whose
                   columns and rows do not hold every asked term
sql_query          a quantity question when a structured SQL source is configured
bps / open_data    statistics indicators, when those live sources are enabled
mcp:<server>:<t>   statistics indicators, every allowed tool of each configured MCP server
search             everything else, and whenever the tools above found nothing readable
=================  ==============================================================================

What a question asks (its words, periods, article, named document, the kind of figure) is read by
:mod:`serve_app.agent.query`, which the embedded writer uses too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from serve_app.agent.query import SHARE_WORDS, expected_figure, search_query
from serve_app.agent.text import words
from serve_app.agent.tools.base import MCP_TOOL_PREFIX
from serve_app.agent.tools.table import detect_operation

_GREETING = frozenset(
    "halo hai hi hello hey pagi siang sore malam selamat terima kasih makasih thanks thank you "
    "assalamualaikum salam sapa apa kabar ok oke baik sip mantap".split()
)
_SUMMARY = ("ringkas", "ringkasan", "rangkum", "rangkuman", "ikhtisar", "intisari", "pokok", "garis")
_RELATIONS: dict[str, tuple[str, ...]] = {
    "amend": ("mengubah", "diubah", "perubahan", "mengamandemen", "amandemen"),
    "revoke": ("mencabut", "dicabut", "pencabutan", "membatalkan"),
    "cite": ("merujuk", "mengacu", "menyebut", "rujukan"),
}
# Words of a statistics indicator: a question with one goes to the live statistics sources (BPS, the CKAN
# portals) when they are configured, before the documents.
_STATISTICS = (
    "penduduk",
    "kemiskinan",
    "miskin",
    "inflasi",
    "pdrb",
    "pdb",
    "ipm",
    "pengangguran",
    "statistik",
    "persentase",
    "indeks",
    "produksi",
    "pertumbuhan",
)
_QUANTITY = ("berapa", "jumlah", "total", "banyaknya", "besaran", "nilai")


@dataclass(frozen=True, slots=True)
class PlannedCall:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Plan:
    intent: str
    calls: tuple[PlannedCall, ...] = ()
    task: str = "answer"  # what the writer is asked to do: answer | summarize | chitchat
    fallback_search: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)


def relation_of(text: str) -> str | None:
    """The cross-reference relation a question or a retriever label speaks of: amend, revoke or cite."""
    tokens = words(text)
    joined = " ".join(tokens)
    for relation, hints in _RELATIONS.items():
        if any(h in tokens for h in hints) or relation in joined:
            return relation
    if "dasar hukum" in joined:
        return "cite"
    return None


class Reference(Protocol):
    """What the planner reads of a legal reference: :class:`retrieval.legal.LegalRef`, or in tests a
    stand-in of the same fields."""

    @property
    def doc_type(self) -> str | None: ...

    @property
    def number(self) -> str | None: ...

    @property
    def year(self) -> int | None: ...

    @property
    def pasal(self) -> str | None: ...


FindReferences = Callable[[str], Sequence[Reference]]


def _default_find_references(text: str) -> Sequence[Reference]:
    from retrieval.legal import (
        find_references,
    )  # the retriever's parser; imported late to keep start-up light

    return list(find_references(text))


class Planner:
    def __init__(
        self,
        *,
        available: Collection[str],
        find_references: FindReferences | None = None,
        top_k: int = 8,
    ) -> None:
        self.available = frozenset(available)
        self.find_references = find_references or _default_find_references
        self.top_k = top_k

    def plan(
        self,
        query: str,
        *,
        document_ids: frozenset[str] | None = None,
        single_document_id: str | None = None,
        follow_up_reasked: bool = False,
    ) -> Plan:
        tokens = words(query)
        search = PlannedCall("search", {"query": search_query(query), "top_k": self.top_k})
        if tokens and all(t in _GREETING for t in tokens) and not follow_up_reasked:
            return Plan("chitchat", (), task="chitchat", fallback_search=False)
        summary_asked = any(t.startswith(_SUMMARY) for t in tokens)
        only_document = single_document_id
        if only_document is None and summary_asked and document_ids is not None and len(document_ids) == 1:
            only_document = next(iter(document_ids))
        if only_document is not None:
            task = "summarize" if summary_asked else "answer"
            return Plan("summarize", (PlannedCall("summarize", {"document_id": only_document}),), task=task)

        refs = self.find_references(query)
        relation = relation_of(query)
        # A bare "Pasal 12" names no regulation: search (which ranks the named article first) reads it.
        with_article = [r for r in refs if r.pasal and r.doc_type]
        whole_laws = [(r.doc_type, r.number, r.year) for r in refs if r.number and r.year]
        if with_article and relation is None:
            lookups = tuple(PlannedCall("legal_check", {"ref": r}) for r in with_article[:2])
            return Plan("legal_check", lookups)
        # "Berapa … setelah perubahan APBD (Qanun 7/2031)?" asks for a figure the named law states, not the
        # regulations that amend it: a question for a figure is never a cross-reference question.
        if relation is not None and whole_laws and expected_figure(query) is None:
            doc_type, number, year = whole_laws[0]
            args = {
                "doc_type": doc_type,
                "number": str(number),
                "year": int(year),
                "relation": relation,
            }
            return Plan("cross_reference", (PlannedCall("cross_reference", args),))

        operation = detect_operation(query)
        share = "%" in query or any(t in SHARE_WORDS for t in tokens)
        if share and operation in ("sum", "average", "compare"):
            # "Berapa persen belanja pendidikan dari total belanja?": a share the documents state, not a
            # sum to compute ("persen" is no row filter). A top-n over a percentage column stays.
            operation = None
        quantity = operation is not None or any(t in _QUANTITY for t in tokens)
        calls: list[PlannedCall] = []
        if operation is not None and "table_query" in self.available:
            calls.append(PlannedCall("table_query", {"query": query, "operation": operation}))
        # Live sources, when configured, are read before the documents are searched.
        if quantity and "sql_query" in self.available:
            calls.append(PlannedCall("sql_query", {"query": query}))
        if any(t.startswith(_STATISTICS) for t in tokens):
            for name in ("bps", "open_data"):
                if name in self.available:
                    calls.append(PlannedCall(name, {"query": query}))
            # Every allowed tool of the configured MCP servers; a tool whose required arguments the question
            # does not give is not called (serve_app/agent/tools/mcp_tool.py).
            for name in sorted(n for n in self.available if n.startswith(MCP_TOOL_PREFIX)):
                calls.append(PlannedCall(name, {"query": query}))
        if operation in ("sum", "average") and "table_query" in self.available:
            # A total is often stated in the documents themselves: search too, and let the writer
            # prefer the stated figure when it answers the question better than the computed one.
            calls.append(search)
        if calls:
            return Plan(calls[0].tool, tuple(calls))
        return Plan("search", (search,), fallback_search=False)
