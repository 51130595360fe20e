"""Test doubles with the real types: an in-memory retriever over real Chunks, a minimal legal-reference
parser that returns real LegalRefs, and a scripted Engine (a subclass of models.base.Engine)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, cast

from models.base import CallRecord, Generation, ModelOutputError, ModelTimeout
from retrieval.legal import LegalRef
from retrieval.port import LocalRetrieverPort
from retrieval.retriever import Retriever
from retrieval.types import Chunk, DocumentIdentity, DocumentInfo, SearchHit
from serve_app.agent.text import stems
from tests.support.engines import BaseFakeEngine, Messages, Schema

_REF = re.compile(
    r"(?:Pasal\s+(?P<pasal>\d+)(?:\s+ayat\s+\((?P<ayat>\d+)\))?\s+)?"
    r"(?P<type>UU|Undang-Undang|PP|Qanun(?:\s+Aceh)?)\s+(?:Nomor\s+)?(?P<num>\d+)"
    r"(?:\s*/\s*|\s+Tahun\s+)(?P<year>\d{4})",
    re.IGNORECASE,
)


def fake_find_references(text: str) -> list[LegalRef]:
    """The real reference type, from a minimal parser (UU, PP, Qanun with an optional Pasal and ayat)."""
    out = []
    for m in _REF.finditer(text):
        kind = m.group("type").lower()
        doc_type = "UU" if kind.startswith(("uu", "undang")) else "PP" if kind == "pp" else "Qanun"
        number, year, pasal, ayat = m.group("num"), int(m.group("year")), m.group("pasal"), m.group("ayat")
        out.append(LegalRef(doc_type, number, year, pasal, ayat, None, m.start(), m.end()))
    return out


@dataclass(slots=True)
class FakeTable:
    columns: list[str]
    rows: list[tuple[str, list[str]]]


def make_chunk(
    document_id: str,
    ordinal: int,
    text: str,
    *,
    title: str = "Dokumen",
    doc_type: str | None = None,
    number: str | None = None,
    year: int | None = None,
    section: tuple[str, ...] = (),
    legal_reference: str | None = None,
    context: str = "",
    kind: str = "text",
) -> Chunk:
    return Chunk(
        chunk_id=f"{document_id}-c{ordinal}",
        document_id=document_id,
        document_title=title,
        ordinal=ordinal,
        text=text,
        source=f"{document_id}.md",
        char_start=0,
        char_end=len(text),
        identity=DocumentIdentity(title=title, doc_type=doc_type, number=number, year=year),
        section_path=section,
        legal_reference=legal_reference,
        context=context,
        kind=kind,
    )


class FakeRetriever:
    """Synchronous, like the real Retriever: term-overlap search over real Chunk objects."""

    def __init__(
        self,
        chunks: list[Chunk],
        *,
        tables: dict[str, FakeTable] | None = None,
        articles: dict[tuple[str, str, int, str], list[str]] | None = None,
        cross: dict[tuple[str, str, int], list[tuple[str, str]]] | None = None,
        delay_s: float = 0.0,
        fail: bool = False,
    ) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}
        self.tables = tables or {}
        self.articles = articles or {}
        self.cross = cross or {}
        self.delay_s = delay_s
        self.fail = fail
        self.calls: list[str] = []

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail:
            raise RuntimeError("index unavailable")

    def search(  # Retriever.search's arguments; ``provenance`` is taken and ignored (the fake keeps none)
        self, query: str, *, top_k: int = 10, document_ids: Collection[str] | None = None, **_: object
    ) -> list[SearchHit]:
        self._enter("search")
        terms = set(stems(query))
        scored = []
        for c in self.chunks.values():
            if document_ids is not None and c.document_id not in document_ids:
                continue
            overlap = len(terms & set(stems(c.text + " " + c.document_title)))
            if overlap:
                scored.append((overlap, c))
        scored.sort(key=lambda t: (-t[0], t[1].chunk_id))
        return [SearchHit(c, float(s)) for s, c in scored[:top_k]]

    def documents(self) -> list[DocumentInfo]:
        self._enter("documents")
        docs: dict[str, DocumentInfo] = {}
        for c in self.chunks.values():
            n = docs[c.document_id].chunk_count + 1 if c.document_id in docs else 1
            docs[c.document_id] = DocumentInfo(c.document_id, c.identity, c.source, n)
        return list(docs.values())

    def document_chunks(self, document_id: str) -> list[Chunk]:
        self._enter("document_chunks")
        return sorted(
            (c for c in self.chunks.values() if c.document_id == document_id), key=lambda c: c.ordinal
        )

    def lookup_article(self, ref: Any) -> list[Chunk]:
        self._enter("lookup_article")
        ids = self.articles.get((ref.doc_type, str(ref.number), int(ref.year), str(ref.pasal)), [])
        return [self.chunks[i] for i in ids]

    def cross_references(
        self, doc_type: str, number: str, year: int
    ) -> list[tuple[DocumentInfo, str, Chunk]]:
        self._enter("cross_references")
        out = []
        for chunk_id, relation in self.cross.get((doc_type, number, year), []):
            c = self.chunks[chunk_id]
            out.append((DocumentInfo(c.document_id, c.identity, c.source, 1), relation, c))
        return out

    def table(self, document_id: str) -> FakeTable | None:
        self._enter("table")
        return self.tables.get(document_id)

    def chunk(self, chunk_id: str) -> Chunk | None:
        self._enter("chunk")
        return self.chunks.get(chunk_id)


class ScriptedEngine(BaseFakeEngine):
    """Returns scripted outputs in order: a dict (parsed JSON), a str (raw text), an exception instance, or
    ("length", dict) for an output cut at max_tokens. Records every call's messages."""

    name = "scripted"
    model = "fake-agent"

    def __init__(self, script: list[Any], *, delay_s: float = 0.0) -> None:
        self.script = list(script)
        self.delay_s = delay_s
        self.calls: list[list[dict[str, str]]] = []

    def _record(self, ok: bool = True, error: str | None = None) -> CallRecord:
        return CallRecord(
            role="agent",
            engine=self.name,
            model=self.model,
            prompt_tokens=10,
            completion_tokens=5,
            ok=ok,
            error=error,
        )

    async def answer(
        self, messages: Messages, *, role: str, json_schema: Schema, deadline: float | None
    ) -> Generation:
        self.calls.append(messages)
        if deadline is not None and time.time() >= deadline:
            raise ModelTimeout(record=self._record(False, "timeout"))
        if self.delay_s:
            left = None if deadline is None else deadline - time.time()
            if left is not None and left < self.delay_s:
                await asyncio.sleep(max(0.0, left))
                raise ModelTimeout(record=self._record(False, "timeout"))
            await asyncio.sleep(self.delay_s)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            if getattr(item, "record", None) is None:
                item.record = self._record(False, getattr(item, "code", "error"))  # type: ignore[attr-defined]
            raise item
        if isinstance(item, tuple) and item[0] == "length":
            return Generation(text='{"segments": [', record=self._record(), finish_reason="length")
        if isinstance(item, str):
            if json_schema is not None:
                try:
                    return Generation(text=item, record=self._record(), parsed=json.loads(item))
                except ValueError:
                    raise ModelOutputError(record=self._record(False, "bad_output")) from None
            return Generation(text=item, record=self._record())
        return Generation(text=str(item), record=self._record(), parsed=item)


def port_of(retriever: FakeRetriever) -> LocalRetrieverPort:
    """The fake behind the thread adapter the real retriever runs behind. The fake stands in for
    :class:`~retrieval.retriever.Retriever` by shape (its methods and results), not by class."""
    return LocalRetrieverPort(cast(Retriever, retriever))
