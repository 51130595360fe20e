"""The served index follows ``aceh-rag ingest`` without a restart, and every request reads one version: the
version it pinned first, even when ingest swaps the index while it runs."""

from __future__ import annotations

import asyncio
import contextvars
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from retrieval.live import LiveRetriever, version_of
from retrieval.port import LocalRetrieverPort
from serve_app.runtime import factory, index_setup
from tests.conftest import API_KEY, make_config

DOCS = {
    "qanun_pasar.md": "# Qanun Kabupaten Contoh Nomor 3 Tahun 2020 tentang Pasar Rakyat\n\n### Pasal 1\n\n"
    "Pasar rakyat dikelola oleh perangkat daerah yang membidangi perdagangan.\n",
    "qanun_air.md": "# Qanun Kabupaten Contoh Nomor 4 Tahun 2021 tentang Air Bersih\n\n### Pasal 1\n\n"
    "Penyediaan air bersih menjadi tanggung jawab perusahaan daerah air minum.\n",
}
CHANGED_AIR = DOCS["qanun_air.md"].replace("perusahaan daerah air minum", "dinas pekerjaan umum kabupaten")
NEW_DOC = (
    "# Qanun Kabupaten Contoh Nomor 5 Tahun 2022 tentang Air Tanah\n\n### Pasal 1\n\n"
    "Pengambilan air tanah memerlukan izin bupati.\n"
)


class Env:
    def __init__(self, tmp: Path) -> None:
        self.corpus = tmp / "corpus"
        self.corpus.mkdir()
        for name, text in DOCS.items():
            (self.corpus / name).write_text(text, encoding="utf-8")
        self.index = tmp / "index"
        self.cfg = make_config(tmp, self.index)
        self.ingest()

    def ingest(self) -> None:
        report = index_setup.ingest_paths(self.cfg, [self.corpus], self.index, progress=False)
        assert not report.failed

    def change_corpus(self) -> None:
        (self.corpus / "qanun_air.md").write_text(CHANGED_AIR, encoding="utf-8")
        (self.corpus / "qanun_air_tanah.md").write_text(NEW_DOC, encoding="utf-8")

    def live(self) -> LiveRetriever:
        return LiveRetriever(self.index, lambda: index_setup.build_retriever(self.cfg), check_interval_s=0.0)


def _doc_ids(retriever: Any) -> set[str]:
    return {info.document_id for info in retriever.documents()}


def _wait_for_new_version(live: LiveRetriever, old: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while live.current() is not None and live.version == old:
        assert time.monotonic() < deadline, "the new index version was never loaded"
        time.sleep(0.05)


@pytest.fixture()
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def test_ingest_swaps_the_served_version_and_a_pinned_request_keeps_its_own(env: Env) -> None:
    live = env.live()
    port = LocalRetrieverPort(live)
    first = live.current()
    old_version, old_ids = version_of(first), _doc_ids(first)

    async def run() -> tuple[str, set[str], str, set[str]]:
        pinned = await port.pin()
        env.change_corpus()
        await asyncio.to_thread(env.ingest)
        await asyncio.to_thread(_wait_for_new_version, live, old_version)
        hits = await port.search("air bersih perusahaan daerah", top_k=10)  # still the pinned version

        async def fresh_request() -> tuple[str, set[str]]:
            version = await port.pin()
            return version, {h.chunk.document_id for h in await port.search("air", top_k=10)}

        loop = asyncio.get_running_loop()
        new_version, new_hits = await loop.create_task(fresh_request(), context=contextvars.Context())
        return pinned, {h.chunk.document_id for h in hits}, new_version, new_hits

    pinned, pinned_hits, new_version, new_hits = asyncio.run(run())
    assert pinned == old_version and pinned_hits and pinned_hits <= old_ids
    new_ids = _doc_ids(live.current())
    assert new_version == live.version != old_version and live.swaps == 1
    assert new_hits <= new_ids and new_hits - old_ids  # the changed and the added document are new ids
    assert len(new_ids) == 3 and len(old_ids - new_ids) == 1  # the old text of qanun_air.md is gone


def test_a_broken_new_version_keeps_the_old_one_serving(env: Env) -> None:
    live = env.live()
    before = live.version
    (env.index / "chunks.jsonl").write_text("not json\n", encoding="utf-8")
    (env.index / "manifest.json").touch()  # looks like a new version
    assert live.current() is not None
    live.wait_idle()
    assert live.version == before and live.last_error is not None
    assert live.current().search("pasar rakyat", top_k=3)


@pytest.mark.slow
def test_every_answer_during_an_ingest_comes_from_one_version(env: Env, tmp_path: Path) -> None:
    """Requests over HTTP while ingest changes a document: each response names its version (header) and
    reads only that version's documents; both versions answer during the run."""
    live = env.live()
    docs = {live.version: _doc_ids(live.current())}
    app = factory.build_inprocess_app(make_config(tmp_path, env.index), retriever=live)
    results: list[tuple[str, str, set[str]]] = []

    async def client_loop(client: httpx.AsyncClient, stop: asyncio.Event, n: int) -> None:
        while not stop.is_set():
            if n % 2:
                r = await client.post("/search", json={"query": "air bersih", "top_k": 10})
                ids = {hit["document_id"] for hit in r.json()["results"]}
            else:
                r = await client.post("/query/v2", json={"query": "Siapa yang menyediakan air bersih?"})
                ids = {c["document_id"] for c in r.json()["citations"] if c.get("document_id")}
            assert r.status_code == 200, r.text
            results.append((r.url.path, r.headers["x-index-version"], ids))

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        headers = {"X-API-Key": API_KEY}
        async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=headers) as client:
            stop = asyncio.Event()
            clients = [asyncio.create_task(client_loop(client, stop, n)) for n in range(8)]
            await asyncio.sleep(0.5)
            env.change_corpus()
            await asyncio.to_thread(env.ingest)
            old = next(iter(docs))
            await asyncio.to_thread(_wait_for_new_version, live, old)
            docs[live.version] = _doc_ids(live.current())
            count = len(results)
            while len(results) < count + 16:
                await asyncio.sleep(0.05)
            stop.set()
            await asyncio.gather(*clients)

    asyncio.run(run())
    assert set(docs) == {version for _, version, _ in results}  # both versions answered
    for path, version, ids in results:
        assert ids and ids <= docs[version], (path, version, ids)
    health = asyncio.run(_health(app))
    assert health["index_version"] == live.version


async def _health(app: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        body: dict[str, Any] = (await client.get("/healthz")).json()
        return body
