"""The Python client (clients/python) against the running service: typed answers, typed SSE events in the
contract's order, the citation routes, v1 artifacts, errors as their classes, and a 429 retried after the
service's Retry-After. Sync and async alike."""

from __future__ import annotations

import asyncio
import csv
import io
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from aceh_rag_client import (
    AsyncClient,
    Client,
    NotFound,
    RateLimited,
    RetryPolicy,
    Unauthorized,
    ValidationFailed,
)
from aceh_rag_client import models as m

from tests.conftest import API_KEY
from tests.support.live import serve_demo
from tests.support.service import BUDGET_QUESTION

TABLE_QUESTION = "Berapa pagu Pajak Daerah dan Retribusi Daerah dalam lampiran APBA 2023?"


def test_query_v2_is_typed_and_its_offsets_hold(service: str) -> None:
    with Client(service, api_key=API_KEY) as client:
        answer = client.query_v2(BUDGET_QUESTION)
    assert isinstance(answer, m.QueryV2Response) and answer.schema_ == "annotate-v2"
    assert answer.claims and any(c.verdict == "supported" for c in answer.claims)
    for claim in answer.claims:
        assert answer.answer[claim.start : claim.end] == claim.text
        assert answer.answer.encode("utf-16-le")[2 * claim.start_utf16 : 2 * claim.end_utf16].decode(
            "utf-16-le") == claim.text


def test_the_stream_is_typed_events_in_the_contracts_order(service: str) -> None:
    with Client(service, api_key=API_KEY) as client:
        events = list(client.stream_v2(BUDGET_QUESTION))
        whole = client.query_v2(BUDGET_QUESTION)
    kinds = [type(e) for e in events]
    assert kinds[-1] is m.DoneEvent and kinds.count(m.DoneEvent) == 1
    first = kinds.index
    assert first(m.MessageStartEvent) < first(m.AnnotationsEvent) < first(m.AnswerDeltaEvent)
    text = "".join(e.text for e in events if isinstance(e, m.AnswerDeltaEvent))
    assert text == whole.answer
    annotations = next(e for e in events if isinstance(e, m.AnnotationsEvent))
    assert [(c.start, c.end, c.verdict) for c in annotations.claims] == [
        (c.start, c.end, c.verdict) for c in whole.claims
    ]


def test_async_client_does_the_same(service: str) -> None:
    async def run() -> tuple[m.QueryV2Response, list[Any], m.DocumentList]:
        async with AsyncClient(service, api_key=API_KEY) as client:
            answer = await client.query_v2(BUDGET_QUESTION)
            events = [e async for e in client.stream_v2(BUDGET_QUESTION)]
            docs = await client.documents(type="Qanun")
            return answer, events, docs

    answer, events, docs = asyncio.run(run())
    assert isinstance(events[-1], m.DoneEvent)
    assert "".join(e.text for e in events if isinstance(e, m.AnswerDeltaEvent)) == answer.answer
    assert docs.total >= 1 and all(d.type == "Qanun" for d in docs.documents)


def test_citation_routes_open_the_passage_a_claim_cites(service: str) -> None:
    with Client(service, api_key=API_KEY) as client:
        answer = client.query_v2(BUDGET_QUESTION)
        cited = next(c for c in answer.claims if c.verdict == "supported").citations[0].citation
        assert cited.document_id is not None and cited.chunk_id is not None
        passage = client.passage(cited.document_id, cited.chunk_id)
        document = client.document(cited.document_id)
    assert passage.chunk_id == cited.chunk_id and passage.text
    assert any(cited.chunk_id in s.chunk_ids for s in document.sections)


def test_v1_artifacts_come_back_as_files(service: str) -> None:
    with Client(service, api_key=API_KEY) as client:
        answer = client.query(TABLE_QUESTION, offer_artifacts=True)
        assert answer.artifacts
        csv_file = next(a for a in answer.artifacts if a.media_type == "text/csv")
        rows = list(csv.reader(io.StringIO(client.artifact(csv_file).decode("utf-8"))))
    assert rows[0][-2:] == ["sumber", "chunk_id"] and len(rows) - 1 == csv_file.rows


def test_errors_are_their_classes(service: str) -> None:
    with Client(service, api_key="wrong-key") as client, pytest.raises(Unauthorized) as denied:
        client.documents()
    assert denied.value.status == 401 and denied.value.error == "unauthorized"
    with Client(service, api_key=API_KEY) as client:
        with pytest.raises(ValidationFailed) as invalid:
            client.documents(page_size=1000)
        assert invalid.value.detail[0]["field"] == "page_size"
        with pytest.raises(TypeError, match="unexpected filter"):  # refused before the network
            client.documents(pagesize=5)  # type: ignore[call-arg]
        with pytest.raises(NotFound):
            client.document("no-such-document")
        with pytest.raises(ValueError, match="offer_artifacts"):
            client.query_v2(BUDGET_QUESTION, offer_artifacts=True)  # refused before the network
        with pytest.raises(Unauthorized):
            list(Client(service, api_key="wrong").stream_v2(BUDGET_QUESTION))


def test_a_429_is_retried_after_retry_after(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> None:
    """60 a minute in a moving window: the 61st request within the minute is refused with the wait until the
    oldest one leaves the window (so at most 60 s), and a client allowed no retries raises RateLimited with
    that wait. A client that may retry waits the Retry-After it is given, then gets its answer (a transport
    in front of the real service answers the first call 429 with Retry-After 1)."""
    with serve_demo(tmp_path, demo_index, demo_retriever, limits={"requests_per_minute": 60}) as base:
        calls: list[float] = []
        service = httpx.HTTPTransport()

        def first_refused(request: httpx.Request) -> httpx.Response:
            calls.append(time.monotonic())
            if len(calls) == 1:
                body = {"error": "rate_limited", "detail": "Terlalu banyak permintaan."}
                return httpx.Response(429, headers={"Retry-After": "1"}, json=body)
            return service.handle_request(request)

        with Client(base, api_key=API_KEY, transport=httpx.MockTransport(first_refused)) as patient:
            assert patient.documents(page_size=1).total == 10
        assert len(calls) == 2 and calls[1] - calls[0] >= 0.9, "it waited the Retry-After before retrying"
        with Client(base, api_key=API_KEY, retry=RetryPolicy(max_retries=0)) as strict:
            with pytest.raises(RateLimited) as limited:
                for _ in range(62):
                    strict.documents(page_size=1)
            assert limited.value.retry_after is not None and 1 <= limited.value.retry_after <= 60
