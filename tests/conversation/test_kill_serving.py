"""``kill -9`` of the serving processes while clients continue their conversations, on SQLite and on
PostgreSQL: after a restart on the same store every exchange a client saw answered (a 200 with its
conversation and message ids) is there with the answer text it saw, no half exchange is visible, and a
conversation still belongs to the route family that first answered in it.

The service is the in-process app (the Ingress routes over the in-process pipeline, the same classes every
Ingress replica runs) under uvicorn, two processes on one store, each a real subprocess killed with SIGKILL;
the Ray graph's start-up (twice per backend) does not fit this test's minute. Clients send every other turn
to the other process, so turns of one conversation are written by both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from sqlalchemy import select

from serve_app.conversation.tables import t_conversations
from tests.conftest import API_KEY, REPO
from tests.conversation.conftest import Backend
from tests.support.net import free_port, wait_healthy

SERVER = """
import sys

import uvicorn

from serve_app.config import load_config
from serve_app.runtime import factory

app = factory.build_inprocess_app(load_config())
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""
HEADERS = {"X-API-Key": API_KEY}
QUESTIONS = (
    "Berapa anggaran pendidikan Aceh tahun 2023?",
    "Berapa belanja urusan kesehatan dalam APBA 2023?",
    "Apa isi Pasal 6 Qanun APBA 2023?",
)
CLIENTS = 6  # three per route family
COMMITTED_BEFORE_KILL = 18  # the kill comes after this many answers (or 45 s, on a loaded machine) ...
AT_LEAST_COMMITTED = CLIENTS  # ... and never before this many
Family = Literal["v1", "v2"]
ROUTE = {"v1": "/query", "v2": "/query/v2"}
OTHER: dict[Family, Family] = {"v1": "v2", "v2": "v1"}


@dataclass
class Client:
    """One conversation, continued turn after turn. ``seen``: the exchanges answered 200 (query, message
    id, answer text); ``in_flight``: the question sent when the server died (its turn may or may not be
    stored, but only whole)."""

    index: int
    family: Family
    created: bool  # POST /conversations first (unclaimed); else the first answer starts it
    conversation_id: str | None = None
    seen: list[tuple[str, str, str]] = field(default_factory=list)
    in_flight: str | None = None
    unexpected: list[str] = field(default_factory=list)

    def question(self, turn: int) -> str:
        return f"{QUESTIONS[turn % len(QUESTIONS)]} (klien {self.index}, giliran {turn})"


def _server(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


@contextmanager
def _servers(count: int, env: dict[str, str]) -> Iterator[tuple[list[str], list[subprocess.Popen[bytes]]]]:
    """``count`` server processes on one store; each is SIGKILLed at the end if still running."""
    with ExitStack() as stack:
        procs, bases = [], []
        for _ in range(count):
            port = free_port()
            proc = _server(port, env)
            stack.callback(_reap, proc)
            procs.append(proc)
            bases.append(f"http://127.0.0.1:{port}")
        for base, proc in zip(bases, procs, strict=True):
            try:
                wait_healthy(base, timeout_s=120, alive=_running(proc))
            except RuntimeError as exc:
                proc.kill()
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"{exc}\n{err[-3000:]}") from None
        yield bases, procs


def _running(proc: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: proc.poll() is None


def _reap(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()


def _converse(client: Client, bases: list[str], stop: threading.Event, committed: list[int]) -> None:
    """Ask until the server is gone, alternating between the processes."""
    with httpx.Client(headers=HEADERS, timeout=60, trust_env=False) as http:
        turn = 0
        try:
            if client.created:
                r = http.post(f"{bases[client.index % 2]}/conversations")
                assert r.status_code == 201, r.text
                client.conversation_id = r.json()["conversation_id"]
            while not stop.is_set():
                question = client.question(turn)
                body: dict[str, Any] = {"query": question}
                if client.conversation_id is not None:
                    body["conversation_id"] = client.conversation_id
                client.in_flight = question
                r = http.post(bases[(client.index + turn) % 2] + ROUTE[client.family], json=body)
                client.in_flight = None
                if r.status_code != 200:
                    client.unexpected.append(f"{r.status_code} {r.text[:200]}")
                    return
                data = r.json()
                client.conversation_id = client.conversation_id or data["conversation_id"]
                assert data["conversation_id"] == client.conversation_id
                client.seen.append((question, data["message_id"], data["answer"]))
                committed[0] += 1
                turn += 1
        except httpx.TransportError:
            return  # the server was killed; ``in_flight`` says what was being asked


def _check_after_restart(http: httpx.Client, base: str, client: Client) -> None:
    """Everything the client saw is stored whole, in its order; at most its in-flight turn follows it."""
    if client.conversation_id is None:  # its first turn was in flight: see _check_every_turn_whole
        assert not client.seen and not client.created
        return
    r = http.get(f"{base}/conversations/{client.conversation_id}")
    assert r.status_code == 200, r.text
    conversation = r.json()
    messages = conversation["messages"]
    assert [m["ordinal"] for m in messages] == list(range(len(messages)))
    assert len(messages) % 2 == 0, f"a half exchange is visible: {messages[-1]}"
    pairs = list(zip(messages[::2], messages[1::2], strict=True))
    for user, assistant in pairs:
        assert (user["role"], assistant["role"]) == ("user", "assistant")
        body = assistant["body"]
        assert assistant["content"] and assistant["content"] == body["answer"]
        assert body["conversation_id"] == client.conversation_id
        assert (body.get("v2_faithfulness") is not None) == (client.family == "v2")
    assert len(pairs) in (len(client.seen), len(client.seen) + 1)
    for (user, assistant), (question, message_id, answer) in zip(pairs, client.seen, strict=False):
        assert user["content"] == question
        assert assistant["message_id"] == message_id
        assert assistant["content"] == answer  # the whole answer the client read, not a part of it
    if len(pairs) > len(client.seen):  # committed, but the reply never reached the client
        assert pairs[-1][0]["content"] == client.in_flight
    assert conversation["route"] == (client.family if pairs else None)


def _check_every_turn_whole(backend: Backend) -> int:
    """Every stored conversation, those whose first reply never reached a client included: whole turns
    only, numbered without gaps. Returns how many turns are stored."""
    store = backend.open()
    try:
        with store.engine.connect() as conn:
            cids = conn.execute(select(t_conversations.c.id)).scalars().all()
        turns = 0
        for cid in cids:
            messages: list[Any] = store.list_messages(cid)  # rows read deep here
            assert [m["ordinal"] for m in messages] == list(range(len(messages)))
            assert [m["role"] for m in messages] == ["user", "assistant"] * (len(messages) // 2)
            for assistant in messages[1::2]:
                assert assistant["content"] and assistant["content"] == assistant["body"]["answer"]
            turns += len(messages) // 2
        return turns
    finally:
        store.close()


def _check_ownership(http: httpx.Client, base: str, client: Client) -> None:
    """The family that answered first keeps the conversation, across the restart; the other gets 409 and
    writes nothing. An unclaimed one is claimed by whichever family answers first after the restart."""
    cid = client.conversation_id
    if cid is None or http.get(f"{base}/conversations/{cid}").status_code == 404:
        return
    before = http.get(f"{base}/conversations/{cid}").json()
    owner: Family = before["route"] or client.family
    question = client.question(1000)
    r = http.post(base + ROUTE[owner], json={"query": question, "conversation_id": cid})
    assert r.status_code == 200, r.text
    r = http.post(base + ROUTE[OTHER[owner]], json={"query": question, "conversation_id": cid})
    assert r.status_code == 409 and r.json()["error"] == "conversation_route_conflict", r.text
    after = http.get(f"{base}/conversations/{cid}").json()
    assert after["route"] == owner
    assert len(after["messages"]) == len(before["messages"]) + 2
    assert after["messages"][-2]["content"] == question


def _server_env(backend: Backend, demo_index: Path) -> dict[str, str]:
    url = backend.url
    if backend.schema is not None:  # the app opens the store without a schema: put it on the search path
        url += ("&" if "?" in url else "?") + f"options=-csearch_path%3D{backend.schema}"
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "ACEH_CONFIG": str(REPO / "configs" / "default.yaml"),
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(demo_index),
        "ACEH_DATABASE_URL": url,
    }


@pytest.mark.slow
def test_exchanges_survive_kill_9_of_the_serving_processes(backend: Backend, demo_index: Path) -> None:
    setup = backend.open()
    setup.migrate()  # the schema the servers will find on their search path
    setup.close()
    env = _server_env(backend, demo_index)
    clients = [Client(i, "v1" if i % 2 else "v2", created=i < CLIENTS // 2) for i in range(CLIENTS)]
    stop, committed = threading.Event(), [0]
    with _servers(2, env) as (bases, procs):
        threads = [
            threading.Thread(target=_converse, args=(c, bases, stop, committed), daemon=True) for c in clients
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 45
        while committed[0] < COMMITTED_BEFORE_KILL and time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), "a server died before the kill"
            time.sleep(0.02)
        in_flight = sum(c.in_flight is not None for c in clients)
        for proc in procs:  # mid-way: the clients keep asking, so requests are in flight
            os.killpg(proc.pid, signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert all(p.wait(timeout=30) == -signal.SIGKILL for p in procs)
    assert committed[0] >= AT_LEAST_COMMITTED, f"only {committed[0]} exchanges before the deadline"
    assert in_flight > 0
    assert not [u for c in clients for u in c.unexpected], [c.unexpected for c in clients]

    assert _check_every_turn_whole(backend) >= committed[0]
    with _servers(1, env) as (bases, _), httpx.Client(headers=HEADERS, timeout=60, trust_env=False) as http:
        for client in clients:
            _check_after_restart(http, bases[0], client)
        for client in clients:
            _check_ownership(http, bases[0], client)
