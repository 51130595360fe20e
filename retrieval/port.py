"""The retriever as an async service: the one interface every caller uses (the agent's tools, the pipeline's
scope and ``/search``, the Ray deployment), and the adapter that runs a local
:class:`~retrieval.retriever.Retriever` in worker threads so the event loop stays free. Behind a Ray handle
the same methods are reached through ``serve_app.runtime.ports.RemoteRetriever``."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Collection
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from retrieval import catalog
from retrieval.catalog import DocumentOutline, DocumentPage, DocumentQuery, PassageView
from retrieval.live import LiveRetriever, version_of
from retrieval.retriever import Retriever
from retrieval.types import Chunk, DocumentInfo, SearchHit

if TYPE_CHECKING:
    from retrieval.legal import LegalRef
    from retrieval.types import TableData


class RetrieverPort(Protocol):
    """The methods of :class:`~retrieval.retriever.Retriever` that callers use, async, and the index version
    a request reads (``pin`` holds it for the rest of the request)."""

    async def pin(self) -> str: ...

    async def index_version(self) -> str: ...

    async def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        document_ids: Collection[str] | None = None,
        provenance: bool = False,
    ) -> list[SearchHit]: ...

    async def documents(self) -> list[DocumentInfo]: ...

    async def resolve_filter(
        self, *, type: str | None = None, year: int | None = None, issuer: str | None = None
    ) -> list[str]: ...

    async def document_chunks(self, document_id: str) -> list[Chunk]: ...

    async def lookup_article(self, ref: LegalRef) -> list[Chunk]: ...

    async def cross_references(
        self, doc_type: str, number: str, year: int
    ) -> list[tuple[DocumentInfo, str, Chunk]]: ...

    async def table(self, document_id: str) -> TableData | None: ...

    async def chunk(self, chunk_id: str) -> Chunk | None: ...

    async def reachable(self) -> bool:
        """Whether the retriever answers at all now (asked after a call ran out of time: a retriever that is
        gone, e.g. a replica being replaced, is a service failure, not a search that found nothing)."""
        ...

    # The citation routes' catalogue (retrieval.catalog): the filtering runs where the index is.
    async def find_documents(self, query: DocumentQuery) -> DocumentPage: ...

    async def document_outline(
        self, document_id: str, *, visible: frozenset[str] | None = None
    ) -> DocumentOutline | None: ...

    async def passage(
        self, document_id: str, chunk_id: str, *, neighbours: int = 1, visible: frozenset[str] | None = None
    ) -> PassageView | None: ...


# The index version a request holds (port, retriever): set by ``pin`` in the request's task, so every later
# call of the request, and the tasks it starts, read the same version (retrieval.live).
_snapshot: contextvars.ContextVar[tuple[int, Retriever] | None] = contextvars.ContextVar(
    "aceh_index", default=None
)


class SearchOptions(TypedDict, total=False):
    """The keyword options of :meth:`Retriever.search` a caller may give; those left out keep the
    retriever's own defaults."""

    top_k: int
    document_ids: Collection[str] | None
    provenance: bool
    mode: str
    rerank: bool


class LocalRetrieverPort:
    """Wraps an in-process retriever, or a ``retrieval.live.LiveRetriever`` that follows ingest; each call
    runs in a worker thread so the event loop stays free."""

    def __init__(self, retriever: Retriever | LiveRetriever) -> None:
        self.source = retriever

    def _newest(self) -> Retriever:
        source = self.source
        return source.current() if isinstance(source, LiveRetriever) else source

    @property
    def retriever(self) -> Retriever:
        """The request's pinned version, else the newest loaded one."""
        pinned = _snapshot.get()
        if pinned is not None and pinned[0] == id(self):
            return pinned[1]
        return self._newest()

    async def pin(self) -> str:
        """Hold the current version for the rest of this request; returns its version."""
        retriever = self._newest()
        _snapshot.set((id(self), retriever))
        return version_of(retriever)

    async def index_version(self) -> str:
        return version_of(self.retriever)

    async def reachable(self) -> bool:
        return True  # in this process: as reachable as the caller

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> list[SearchHit]:
        """RetrieverPort.search: ``options`` (top_k, document_ids, provenance) go to the retriever as given,
        so the retriever's own defaults apply (not a second copy of them here)."""
        return await asyncio.to_thread(self.retriever.search, query, **options)

    async def documents(self) -> list[DocumentInfo]:
        return await asyncio.to_thread(self.retriever.documents)

    async def resolve_filter(
        self, *, type: str | None = None, year: int | None = None, issuer: str | None = None
    ) -> list[str]:
        """Document ids a named selection's metadata filter matches (used by the pipeline's scope)."""
        return await asyncio.to_thread(self.retriever.resolve_filter, type=type, year=year, issuer=issuer)

    async def document_chunks(self, document_id: str) -> list[Chunk]:
        return await asyncio.to_thread(self.retriever.document_chunks, document_id)

    async def lookup_article(self, ref: LegalRef) -> list[Chunk]:
        return await asyncio.to_thread(self.retriever.lookup_article, ref)

    async def cross_references(
        self, doc_type: str, number: str, year: int
    ) -> list[tuple[DocumentInfo, str, Chunk]]:
        return await asyncio.to_thread(self.retriever.cross_references, doc_type, number, year)

    async def table(self, document_id: str) -> TableData | None:
        return await asyncio.to_thread(self.retriever.table, document_id)

    async def chunk(self, chunk_id: str) -> Chunk | None:
        return await asyncio.to_thread(self.retriever.chunk, chunk_id)

    async def find_documents(self, query: DocumentQuery) -> DocumentPage:
        return await asyncio.to_thread(catalog.find_documents, self.retriever, query)

    async def document_outline(
        self, document_id: str, *, visible: frozenset[str] | None = None
    ) -> DocumentOutline | None:
        return await asyncio.to_thread(catalog.document_outline, self.retriever, document_id, visible=visible)

    async def passage(
        self, document_id: str, chunk_id: str, *, neighbours: int = 1, visible: frozenset[str] | None = None
    ) -> PassageView | None:
        return await asyncio.to_thread(
            catalog.passage_view,
            self.retriever,
            document_id,
            chunk_id,
            neighbours=neighbours,
            visible=visible,
        )
