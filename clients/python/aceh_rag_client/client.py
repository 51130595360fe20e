"""``Client`` (sync) and ``AsyncClient``: one method per route of the service, typed with the models
generated from its JSON Schemas. Streams are iterators of typed events; a 429 is retried after its
Retry-After (bounded, see :class:`RetryPolicy`); every error status raises its :mod:`errors` class."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, Generic, Protocol, TypeVar, Unpack

import httpx

from aceh_rag_client import models as m
from aceh_rag_client._core import (
    DEFAULT_TIMEOUT,
    DocumentFilters,
    RetryPolicy,
    body,
    decode,
    document_params,
    headers,
    path,
    raise_for,
    stream_retry_wait,
)
from aceh_rag_client.errors import StreamCut
from aceh_rag_client.sse import TERMINAL, SSEParser, StreamEvent

H = TypeVar("H", httpx.Client, httpx.AsyncClient)
T = TypeVar("T", httpx.BaseTransport, httpx.AsyncBaseTransport)
H_co = TypeVar("H_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)


class _Opener(Protocol[H_co, T_contra]):
    """How a client opens its httpx client (``httpx.Client`` or ``httpx.AsyncClient`` itself)."""

    def __call__(
        self,
        *,
        base_url: str,
        headers: dict[str, str],
        timeout: httpx.Timeout | float,
        transport: T_contra | None,
    ) -> H_co: ...


class _Base(Generic[H, T]):
    """The constructor both clients share; ``transport`` is httpx's (tests pass an ASGI or mock transport)."""

    _open: _Opener[H, T]

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        token: str | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: T | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self._http: H = type(self)._open(
            base_url=base_url, headers=headers(api_key, token), timeout=timeout, transport=transport
        )


class Client(_Base[httpx.Client, httpx.BaseTransport]):
    """``Client("http://127.0.0.1:8000", api_key="demo-key", token=partner_jwt)``; use it as a context
    manager or call :meth:`close`."""

    _open = httpx.Client

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, method: str, url: str, **kw: Any) -> httpx.Response:
        attempt = 0
        while True:
            response = self._http.request(method, url, **kw)
            wait = self.retry.wait_s(response, attempt)
            if wait is None:
                return response
            time.sleep(wait)
            attempt += 1

    # ---------------------------------------------------------------- answers

    def query_v2(self, query: str, **options: Any) -> m.QueryV2Response:
        return decode(
            self._send("POST", "/query/v2", json=body(m.QueryV2Request, query=query, **options)),
            m.QueryV2Response,
        )

    def query(self, query: str, **options: Any) -> m.QueryV1Response:
        """v1: unconfirmed sentences removed; ``offer_artifacts=True`` lists CSV/XLSX files."""
        return decode(
            self._send("POST", "/query", json=body(m.QueryRequest, query=query, **options)), m.QueryV1Response
        )

    def search(self, query: str, **options: Any) -> m.SearchResponse:
        return decode(
            self._send("POST", "/search", json=body(m.SearchRequest, query=query, **options)),
            m.SearchResponse,
        )

    def playground(self, query: str, editorial_prompt: str, **options: Any) -> m.PlaygroundResponse:
        payload = body(m.PlaygroundRequest, query=query, editorial_prompt=editorial_prompt, **options)
        return decode(self._send("POST", "/playground", json=payload), m.PlaygroundResponse)

    def stream_v2(self, query: str, **options: Any) -> Iterator[StreamEvent]:
        """``/query/v2/stream`` as typed events, ending with DoneEvent or ErrorEvent; StreamCut when the
        connection ends before either."""
        return self._stream("/query/v2/stream", body(m.QueryV2Request, query=query, **options))

    def stream(self, query: str, **options: Any) -> Iterator[StreamEvent]:
        """``/query/stream`` (v1) as typed events."""
        return self._stream("/query/stream", body(m.QueryRequest, query=query, **options))

    def _stream(self, url: str, payload: dict[str, Any]) -> Iterator[StreamEvent]:
        attempt = 0
        while True:
            with self._http.stream("POST", url, json=payload) as response:
                if response.status_code != 200:
                    response.read()
                    wait = stream_retry_wait(response, url, self.retry, attempt)
                else:
                    parser = SSEParser()
                    for line in itertools.chain(response.iter_lines(), [""]):  # "": the last event
                        for event in parser.feed(line):
                            yield event
                            if isinstance(event, TERMINAL):
                                return
                    raise StreamCut(f"{url}: the stream ended without done or error")
            time.sleep(wait)
            attempt += 1

    # ---------------------------------------------------------------- conversations

    def create_conversation(self) -> m.ConversationCreated:
        return decode(self._send("POST", "/conversations"), m.ConversationCreated)

    def conversation(self, conversation_id: str) -> m.ConversationView:
        return decode(self._send("GET", path("conversations", conversation_id)), m.ConversationView)

    # ---------------------------------------------------------------- citation routes and artifacts

    def documents(self, **filters: Unpack[DocumentFilters]) -> m.DocumentList:
        """``GET /documents``, filtered and paged by :class:`DocumentFilters`."""
        return decode(self._send("GET", "/documents", params=document_params(filters)), m.DocumentList)

    def document(self, document_id: str) -> m.DocumentView:
        return decode(self._send("GET", path("documents", document_id)), m.DocumentView)

    def passage(self, document_id: str, chunk_id: str) -> m.PassageResponse:
        url = path("documents", document_id, "passages", chunk_id)
        return decode(self._send("GET", url), m.PassageResponse)

    def artifact(self, artifact: m.Artifact | str) -> bytes:
        """The file's bytes (CSV or XLSX); an artifact or its ``url``."""
        url = artifact.url if isinstance(artifact, m.Artifact) else artifact
        response = self._send("GET", url)
        raise_for(response)
        return response.content

    def health(self) -> dict[str, Any]:
        response = self._http.get("/healthz")
        payload: dict[str, Any] = response.json()
        return payload


class AsyncClient(_Base[httpx.AsyncClient, httpx.AsyncBaseTransport]):
    """The same methods as :class:`Client`, awaitable; streams are async iterators."""

    _open = httpx.AsyncClient

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, method: str, url: str, **kw: Any) -> httpx.Response:
        attempt = 0
        while True:
            response = await self._http.request(method, url, **kw)
            wait = self.retry.wait_s(response, attempt)
            if wait is None:
                return response
            await asyncio.sleep(wait)
            attempt += 1

    async def query_v2(self, query: str, **options: Any) -> m.QueryV2Response:
        payload = body(m.QueryV2Request, query=query, **options)
        return decode(await self._send("POST", "/query/v2", json=payload), m.QueryV2Response)

    async def query(self, query: str, **options: Any) -> m.QueryV1Response:
        payload = body(m.QueryRequest, query=query, **options)
        return decode(await self._send("POST", "/query", json=payload), m.QueryV1Response)

    async def search(self, query: str, **options: Any) -> m.SearchResponse:
        payload = body(m.SearchRequest, query=query, **options)
        return decode(await self._send("POST", "/search", json=payload), m.SearchResponse)

    async def playground(self, query: str, editorial_prompt: str, **options: Any) -> m.PlaygroundResponse:
        payload = body(m.PlaygroundRequest, query=query, editorial_prompt=editorial_prompt, **options)
        return decode(await self._send("POST", "/playground", json=payload), m.PlaygroundResponse)

    def stream_v2(self, query: str, **options: Any) -> AsyncIterator[StreamEvent]:
        return self._stream("/query/v2/stream", body(m.QueryV2Request, query=query, **options))

    def stream(self, query: str, **options: Any) -> AsyncIterator[StreamEvent]:
        return self._stream("/query/stream", body(m.QueryRequest, query=query, **options))

    async def _stream(self, url: str, payload: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        attempt = 0
        while True:
            async with self._http.stream("POST", url, json=payload) as response:
                if response.status_code != 200:
                    await response.aread()
                    wait = stream_retry_wait(response, url, self.retry, attempt)
                else:
                    parser = SSEParser()
                    async for line in response.aiter_lines():
                        for event in parser.feed(line):
                            yield event
                            if isinstance(event, TERMINAL):
                                return
                    for event in parser.feed(""):
                        yield event
                        if isinstance(event, TERMINAL):
                            return
                    raise StreamCut(f"{url}: the stream ended without done or error")
            await asyncio.sleep(wait)
            attempt += 1

    async def create_conversation(self) -> m.ConversationCreated:
        return decode(await self._send("POST", "/conversations"), m.ConversationCreated)

    async def conversation(self, conversation_id: str) -> m.ConversationView:
        return decode(await self._send("GET", path("conversations", conversation_id)), m.ConversationView)

    async def documents(self, **filters: Unpack[DocumentFilters]) -> m.DocumentList:
        """``GET /documents``, filtered and paged by :class:`DocumentFilters`."""
        return decode(await self._send("GET", "/documents", params=document_params(filters)), m.DocumentList)

    async def document(self, document_id: str) -> m.DocumentView:
        return decode(await self._send("GET", path("documents", document_id)), m.DocumentView)

    async def passage(self, document_id: str, chunk_id: str) -> m.PassageResponse:
        url = path("documents", document_id, "passages", chunk_id)
        return decode(await self._send("GET", url), m.PassageResponse)

    async def artifact(self, artifact: m.Artifact | str) -> bytes:
        url = artifact.url if isinstance(artifact, m.Artifact) else artifact
        response = await self._send("GET", url)
        raise_for(response)
        return response.content

    async def health(self) -> dict[str, Any]:
        response = await self._http.get("/healthz")
        payload: dict[str, Any] = response.json()
        return payload
