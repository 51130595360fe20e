"""The serving side of the citation routes: which documents the caller may see (the partner scoping of
:func:`serve_app.scope.visible_documents`, and a named selection when asked), then the retriever's
catalogue, mapped to wire models. A document the caller may not see is exactly as absent as an unknown one:
not listed, and 404."""

from __future__ import annotations

from retrieval.catalog import DocumentQuery
from retrieval.port import RetrieverPort
from serve_app import errors
from serve_app.config import AppConfig
from serve_app.guard.auth import Principal
from serve_app.scope import partner_limited, resolve_scope, selection_filter_ids, visible_documents
from serve_app.wire.documents import (
    DocumentList,
    DocumentListParams,
    DocumentView,
    PassageResponse,
    document_list,
    document_view,
    passage_response,
)

NEIGHBOURS = 1  # passages shown on each side of the cited one: the reader's surrounding text


class DocumentCatalog:
    def __init__(self, retriever: RetrieverPort, config: AppConfig) -> None:
        self.retriever = retriever
        self.config = config

    async def visible(self, principal: Principal, selection: str | None = None) -> frozenset[str] | None:
        """None: every indexed document; an empty set: nothing."""
        issuer = principal.issuer if principal.verified else None
        selections = self.config.selections
        limited = bool(partner_limited(selections))
        if not limited and selection is None:
            return None
        indexed = [d.document_id for d in await self.retriever.documents()]
        names = list(selections) if limited else [selection] if selection else []
        filter_ids = await selection_filter_ids(self.retriever, selections, names)
        if selection is None:
            return visible_documents(
                selections=selections, indexed_ids=indexed, filter_ids=filter_ids, caller_issuer=issuer
            )
        # resolve_scope leaves out what a partner-limited selection keeps from this caller.
        scope = resolve_scope(
            selection=selection, document_ids=None, selections=selections, indexed_ids=indexed,
            filter_ids=filter_ids, caller_issuer=issuer,
        )
        if scope.empty or scope.document_ids is None:
            return frozenset()
        return scope.document_ids

    async def list(self, params: DocumentListParams, principal: Principal) -> DocumentList:
        query = DocumentQuery(
            q=params.q, doc_type=params.type, number=params.number, year=params.year,
            visible=await self.visible(principal, params.selection), page=params.page,
            page_size=params.page_size,
        )
        return document_list(await self.retriever.find_documents(query), params)

    async def document(self, document_id: str, principal: Principal) -> DocumentView:
        outline = await self.retriever.document_outline(document_id, visible=await self.visible(principal))
        if outline is None:
            raise errors.NotFound()
        return document_view(outline)

    async def passage(self, document_id: str, chunk_id: str, principal: Principal) -> PassageResponse:
        view = await self.retriever.passage(
            document_id, chunk_id, neighbours=NEIGHBOURS, visible=await self.visible(principal)
        )
        if view is None:
            raise errors.NotFound()
        return passage_response(view)
