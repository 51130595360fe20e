"""Tools over the indexed documents: hybrid search (default and fallback), exact article lookup,
cross-references between regulations, and reading one document whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from models.tokens import estimate_tokens
from retrieval.types import Chunk, SearchHit
from serve_app.agent.query import FIGURES, analyse, statement_query
from serve_app.agent.tools.base import Evidence, Tool, ToolArgs, ToolContext, ToolResult, as_int, text_arg

if TYPE_CHECKING:
    from retrieval.legal import LegalRef

# A figure question also reads the provisions of its leading documents that state a figure of the asked kind
# (see statement_query): this many documents, this many candidates, at most this share of top_k added.
STATEMENT_DOCUMENTS = 2
STATEMENT_CANDIDATES = 24
STATEMENT_SHARE = 0.5


def _scoped(ctx: ToolContext, ids: frozenset[str] | None) -> frozenset[str] | None:
    if ctx.document_ids is None:
        return ids
    return ctx.document_ids if ids is None else ids & ctx.document_ids


class SearchTool(Tool):
    """Hybrid search in the request's scope. With ``preferred_document_ids`` (documents cited by the previous
    verified answer) it searches those first and puts up to half of ``top_k`` of their hits in front."""

    name = "search"

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        query = str(args.get("query") or ctx.query)
        top_k = as_int(args.get("top_k") or ctx.top_k)
        hits = await ctx.retriever.search(query, top_k=top_k, document_ids=ctx.document_ids)
        preferred = frozenset(ctx.preferred_document_ids)
        if preferred:
            pref_scope = _scoped(ctx, preferred)
            if pref_scope:
                pref_hits = await ctx.retriever.search(query, top_k=top_k, document_ids=pref_scope)
                hits = pref_hits[: max(1, top_k // 2)] + hits
        seen: set[str] = set()
        evidence = []
        for hit in hits:
            if hit.chunk.chunk_id in seen or not ctx.in_scope(hit.chunk.document_id):
                continue
            seen.add(hit.chunk.chunk_id)
            evidence.append(Evidence.of_chunk(hit.chunk, hit.score))
        evidence = evidence[:top_k]
        for hit in await self._statements(ctx, evidence, top_k):
            if hit.chunk.chunk_id not in seen:
                seen.add(hit.chunk.chunk_id)
                evidence.append(Evidence.of_chunk(hit.chunk, hit.score))
        return ToolResult("ok" if evidence else "empty", evidence)

    async def _statements(self, ctx: ToolContext, found: list[Evidence], top_k: int) -> list[SearchHit]:
        """For a figure question: the chunks of the leading documents that state a figure of the asked kind,
        best first, found by :func:`statement_query` (they come after the first list, so the writer reads
        both and picks the sentence that states what was asked)."""
        query = statement_query(ctx.query)
        kind = analyse(ctx.query).figure
        if query is None or kind is None:
            return []
        docs = list(dict.fromkeys(e.chunk.document_id for e in found if e.chunk is not None))
        docs = [d for d in docs if ctx.in_scope(d)][:STATEMENT_DOCUMENTS]
        if not docs:
            return []
        hits = await ctx.retriever.search(query, top_k=STATEMENT_CANDIDATES, document_ids=frozenset(docs))
        stating = [h for h in hits if FIGURES[kind].search(h.chunk.text)]
        return stating[: max(1, int(top_k * STATEMENT_SHARE))]


class LegalCheckTool(Tool):
    """Exact article lookup: ``args["ref"]`` is a ``retrieval.legal.LegalRef`` naming a regulation and its
    Pasal (optionally ayat, huruf). Articles outside the request's scope are not read."""

    name = "legal_check"

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        # the planner's parsed reference (tests plan a stand-in of the same shape with their fake retriever)
        chunks = await ctx.retriever.lookup_article(cast("LegalRef", args["ref"]))
        if not chunks:
            return ToolResult("empty")
        inside = [c for c in chunks if ctx.in_scope(c.document_id)]
        if not inside:
            return ToolResult("out_of_scope")
        return ToolResult("ok", [Evidence.of_chunk(c, 1.0) for c in inside[: ctx.top_k]])


def relation_kind(label: str) -> str:
    """The retriever's relation labels (revokes, amends, as_amended, legal_basis, considers, cites, or the
    Indonesian verbs) reduced to what a question asks about: revoke, amend or cite."""
    label = label.lower()
    if "revok" in label or "cabut" in label:
        return "revoke"
    if ("amend" in label and "as_amended" not in label) or "ubah" in label:
        return "amend"
    return "cite"


class CrossReferenceTool(Tool):
    """Regulations that cite, amend or revoke a given one; each result is the chunk stating the relation."""

    name = "cross_reference"

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        found = await ctx.retriever.cross_references(
            text_arg(args, "doc_type"), str(args["number"]), as_int(args["year"])
        )
        if not found:
            return ToolResult("empty")
        wanted = args.get("relation")
        inside = [(doc, rel, chunk) for doc, rel, chunk in found if ctx.in_scope(chunk.document_id)]
        if not inside:
            return ToolResult("out_of_scope")
        # The relation asked for (amend, revoke, cite) first, then the rest, newest citing document first.
        inside.sort(
            key=lambda t: (wanted is not None and relation_kind(t[1]) != wanted, -(t[0].identity.year or 0))
        )
        seen: set[str] = set()
        evidence = []
        for _doc, _rel, chunk in inside:
            if chunk.chunk_id not in seen:
                seen.add(chunk.chunk_id)
                evidence.append(Evidence.of_chunk(chunk, 1.0))
        return ToolResult("ok", evidence[: max(ctx.top_k, 4)])


class SummarizeTool(Tool):
    """Reads one named document whole. When it does not fit the room left in the context, keeps the chunks
    the question points at (search inside the document) and then the opening ones, in document order."""

    name = "summarize"

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        document_id = str(args["document_id"])
        if not ctx.in_scope(document_id):
            return ToolResult("out_of_scope")
        chunks = sorted(await ctx.retriever.document_chunks(document_id), key=lambda c: c.ordinal)
        if not chunks:
            return ToolResult("empty")
        if sum(estimate_tokens(c.text) for c in chunks) > ctx.token_room:
            chunks = await self._fit(chunks, ctx, document_id)
        return ToolResult("ok" if chunks else "empty", [Evidence.of_chunk(c, 1.0) for c in chunks])

    async def _fit(self, chunks: list[Chunk], ctx: ToolContext, document_id: str) -> list[Chunk]:
        hits = await ctx.retriever.search(ctx.query, top_k=min(50, len(chunks)), document_ids={document_id})
        by_id = {c.chunk_id: c for c in chunks}
        order = [h.chunk.chunk_id for h in hits if h.chunk.chunk_id in by_id] + [c.chunk_id for c in chunks]
        kept: dict[str, Chunk] = {}
        room = ctx.token_room
        for chunk_id in order:
            if chunk_id in kept:
                continue
            cost = estimate_tokens(by_id[chunk_id].text)
            if cost <= room:
                kept[chunk_id] = by_id[chunk_id]
                room -= cost
        return sorted(kept.values(), key=lambda c: c.ordinal)
