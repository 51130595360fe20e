"""Conversations (ownership, what the reader sees, what later turns may see) and the admin playground."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from serve_app.agent.prompts import DEFAULT_EDITORIAL
from serve_app.agent.writers.llm import LLMWriter
from serve_app.conversation.history import NO_VERIFIED_NOTE
from serve_app.guard.auth import AUDIENCE
from tests.contract.checks import (
    assert_no_internals,
    assert_v2_body,
    parse_sse,
    strip_volatile,
    validate_against_schema,
)
from tests.support.service import (
    ALTERED_FACT,
    BUDGET_QUESTION,
    HEADERS,
    LEAD_IN,
    TRUE_FACT,
    AppendingWriter,
    RecordingEngine,
    client_for,
    config,
    facts_citing,
    post,
    segments_citing,
)

ISSUER = "https://idp.mitra.example"
FOLLOW_UP = "Belanja pendidikan itu setara berapa persen dari total belanja?"
SHARE_NEEDLE = "setara dengan 20,1 persen dari total belanja"
SHARE_FACT = (
    "(2) Belanja sebagaimana dimaksud pada ayat (1) setara dengan 20,1 persen dari total belanja, sesuai "
    "dengan ketentuan alokasi pendidikan paling sedikit 20 (dua puluh) persen dalam Qanun Aceh Nomor 9 "
    "Tahun 2022 tentang Penyelenggaraan Pendidikan."
)
NOT_FOUND = [
    {
        "text": "Informasi tersebut tidak ditemukan dalam dokumen yang tersedia.",
        "kind": "framing",
        "cites": [],
        "layout": "paragraph",
    }
]
EDITORIAL = "GAYA-UJI-7f3: jawab dengan satu kalimat saja."


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture()
def partners_file(tmp_path: Path, signing_key: rsa.RSAPrivateKey) -> Path:
    jwk = RSAAlgorithm.to_jwk(signing_key.public_key(), as_dict=True)
    jwk["kid"] = "k1"
    path = tmp_path / "partners.json"
    path.write_text(json.dumps({"partners": [{"id": "mitra", "issuer": ISSUER, "jwks": {"keys": [jwk]}}]}))
    return path


def _headers(key: rsa.RSAPrivateKey, sub: str, *roles: str) -> dict[str, str]:
    now = int(time.time())
    claims: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600}
    if roles:
        claims["roles"] = list(roles)
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    return {**HEADERS, "Authorization": f"Bearer {token}"}


def _db(cfg: Any) -> Path:
    return Path(cfg.database_url.removeprefix("sqlite:///"))


def _all_text(db: Path) -> str:
    """Every value of every table, as text (to prove what the store does not hold)."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [repr(row) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"')]  # noqa: S608
    return "\n".join(rows)


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])  # noqa: S608


class Replies:
    """The LLM writer's scripted answers, one per turn: ``turns[n](messages) -> segment dicts``."""

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)

    def __call__(self, messages: list[dict[str, str]], call: int) -> list[dict[str, Any]]:
        segments: list[dict[str, Any]] = self.turns[min(call, len(self.turns)) - 1](messages)
        return segments


def _history(messages: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    """The turns between the system prompt and this round's user message."""
    return list(messages[1:-1])


# ---------------------------------------------------------------------------- ownership


@pytest.fixture()
def verified(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, partners_file: Path, signing_key: rsa.RSAPrivateKey
) -> Iterator[dict[str, Any]]:
    cfg = config(tmp_path, demo_index, partners_file=str(partners_file), limits={"playground_per_minute": 2})
    with client_for(cfg, demo_retriever, writer=AppendingWriter(facts_citing(ALTERED_FACT))) as client:
        yield {
            "client": client,
            "cfg": cfg,
            "alice": _headers(signing_key, "alice"),
            "bob": _headers(signing_key, "bob"),
            "admin": _headers(signing_key, "ops-1", "admin"),
            "admin2": _headers(signing_key, "ops-2", "admin"),
        }


def test_conversation_is_the_callers_and_shows_what_the_reader_saw(verified: dict[str, Any]) -> None:
    client, alice, bob = verified["client"], verified["alice"], verified["bob"]
    assert client.post("/conversations", headers=HEADERS).status_code == 401, "partners on: a JWT is needed"
    created = client.post("/conversations", headers=alice)
    assert created.status_code == 201
    assert set(created.json()) == {"conversation_id", "created_at"}
    cid = created.json()["conversation_id"]
    empty = client.get(f"/conversations/{cid}", headers=alice).json()
    assert empty == {"conversation_id": cid, "route": None, "messages": []}

    answer = post(
        client, "/query/v2", {"query": BUDGET_QUESTION, "conversation_id": cid}, headers=alice
    ).json()
    assert_v2_body(answer)
    assert answer["conversation_id"] == cid
    assert any(c["verdict"] == "unsupported" for c in answer["claims"])
    view = client.get(f"/conversations/{cid}", headers=alice).json()
    assert view["route"] == "v2"
    user, assistant = view["messages"]
    assert (user["role"], user["content"]) == ("user", BUDGET_QUESTION)
    stored = assistant["body"]
    assert assistant["role"] == "assistant" and assistant["message_id"] == answer["message_id"]
    for key in (
        "answer",
        "claims",
        "framing",
        "faithfulness",
        "citations",
        "claims_supported",
        "claims_total",
        "grounding_rate",
        "schema",
        "fallback_used",
        "fallback_reason",
    ):
        assert stored[key] == answer[key], f"stored {key} differs from what the reader saw"
    assert ALTERED_FACT in stored["answer"], "the reader's view keeps the whole answer"
    assert stored["v2_faithfulness"] == answer["faithfulness"]

    not_found = post(client, "/query/v2", {"query": "x", "conversation_id": "tidak-ada"}, headers=bob)
    for resp in (
        client.get(f"/conversations/{cid}", headers=bob),
        post(client, "/query/v2", {"query": FOLLOW_UP, "conversation_id": cid}, headers=bob),
        post(client, "/query/v2/stream", {"query": FOLLOW_UP, "conversation_id": cid}, headers=bob),
        post(client, "/query", {"query": FOLLOW_UP, "conversation_id": cid}, headers=bob),
    ):
        assert resp.status_code == 404 and resp.json() == not_found.json(), "another principal's is unknown"
    assert len(client.get(f"/conversations/{cid}", headers=alice).json()["messages"]) == 2


def test_an_empty_conversation_goes_to_the_first_family(verified: dict[str, Any]) -> None:
    client, alice = verified["client"], verified["alice"]
    cid = client.post("/conversations", headers=alice).json()["conversation_id"]
    frames = parse_sse(
        post(client, "/query/stream", {"query": BUDGET_QUESTION, "conversation_id": cid}, headers=alice).text
    )
    assert frames[-1][0] == "done"
    assert client.get(f"/conversations/{cid}", headers=alice).json()["route"] == "v1"
    assert (
        post(client, "/query/v2", {"query": FOLLOW_UP, "conversation_id": cid}, headers=alice).status_code
        == 409
    )


# ---------------------------------------------------------------------------- what later turns see


def _llm_client(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, engine: RecordingEngine, **cfg: Any
) -> Any:
    return client_for(config(tmp_path, demo_index, **cfg), demo_retriever, writer=LLMWriter(engine))


def test_follow_up_history_holds_only_verified_text(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    engine = RecordingEngine(
        Replies(
            lambda m: segments_citing(m, TRUE_FACT, ALTERED_FACT),
            lambda m: (
                segments_citing(m, SHARE_FACT, needle=SHARE_NEEDLE, lead_in=False)
                + [
                    {"text": TRUE_FACT, "kind": "fact", "cites": [], "layout": "continue"},
                    {"text": ALTERED_FACT, "kind": "fact", "cites": [], "layout": "continue"},
                ]
            ),
        )
    )
    with _llm_client(tmp_path, demo_index, demo_retriever, engine) as client:
        first = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
        assert_v2_body(first)
        assert [(c["text"], c["verdict"]) for c in first["claims"]] == [
            (TRUE_FACT, "supported"),
            (ALTERED_FACT, "unsupported"),
        ]
        cid = first["conversation_id"]
        second = post(client, "/query/v2", {"query": FOLLOW_UP, "conversation_id": cid}).json()
        store = client.app.state.pipeline.store
        memory = [item["text"] for item in store.list_memory("anonymous")]
        view = client.get(f"/conversations/{cid}", headers=HEADERS).json()
    history = _history(engine.calls[1])
    assert [t["role"] for t in history] == ["user", "assistant"]
    assert history[0]["content"] == BUDGET_QUESTION
    assert TRUE_FACT in history[1]["content"] and LEAD_IN in history[1]["content"]
    assert "219.295" not in json.dumps(engine.calls[1]), (
        "unsupported text never reaches the next turn's model"
    )
    assert ALTERED_FACT in view["messages"][1]["body"]["answer"], "while the reader still sees it"

    assert_v2_body(second)
    assert [(c["text"], c["verdict"]) for c in second["claims"]] == [
        (SHARE_FACT, "supported"),
        (TRUE_FACT, "from_conversation"),
        (ALTERED_FACT, "uncited"),
    ]
    assert second["claims_total"] == 2 and second["claims_supported"] == 1 and second["grounding_rate"] == 0.5
    assert second["faithfulness"]["from_conversation"] == 1
    assert second["faithfulness"]["verification"] == "partial"
    assert second["history_exchanges_in_view"] == 1
    assert TRUE_FACT in memory and not any("219.295" in m for m in memory), memory


def test_an_answer_with_nothing_verified_is_quoted_after_the_note(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    engine = RecordingEngine(
        Replies(
            lambda m: segments_citing(m, ALTERED_FACT),
            lambda m: NOT_FOUND,
        )
    )
    with _llm_client(tmp_path, demo_index, demo_retriever, engine) as client:
        first = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
        assert first["claims_supported"] == 0 and first["faithfulness"]["verification"] == "none"
        second = post(client, "/query/v2", {"query": FOLLOW_UP, "conversation_id": first["conversation_id"]})
        assert second.status_code == 200
        assert_v2_body(second.json())
    assistant = _history(engine.calls[1])[1]["content"]
    assert assistant.startswith(NO_VERIFIED_NOTE) and first["answer"] in assistant


# ---------------------------------------------------------------------------- playground


def test_playground_needs_verified_identity_and_an_admin(verified: dict[str, Any]) -> None:
    client = verified["client"]
    body = {"query": BUDGET_QUESTION, "editorial_prompt": EDITORIAL}
    assert post(client, "/playground", body, headers=HEADERS).status_code == 401
    forbidden = post(client, "/playground", body, headers=verified["alice"])
    assert forbidden.status_code == 403 and forbidden.json()["error"] == "forbidden"
    assert_no_internals(forbidden.text)
    invalid = post(
        client, "/playground", {"query": BUDGET_QUESTION, "editorial_prompt": ""}, headers=verified["alice"]
    )
    assert invalid.status_code == 422, "422 is checked before 403"


def test_playground_run_publishes_nothing_and_stores_a_receipt(verified: dict[str, Any]) -> None:
    client, cfg, admin = verified["client"], verified["cfg"], verified["admin"]
    before = post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=verified["alice"]).json()
    conversations = _count(_db(cfg), "conversations")
    resp = post(
        client, "/playground", {"query": BUDGET_QUESTION, "editorial_prompt": EDITORIAL}, headers=admin
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert_v2_body(body, playground=True)
    validate_against_schema(body, "playground_response")
    assert body["published"] is False and body["latency_ms"] > 0
    assert strip_volatile(body["claims"]) == strip_volatile(before["claims"])

    store = client.app.state.pipeline.store
    receipts = store.list_playground_receipts(f"{ISSUER}|ops-1")
    assert [r["run_id"] for r in receipts] == [body["playground_run_id"]]
    assert receipts[0]["status"] == "answered"
    assert receipts[0]["counts"]["claims_total"] == body["claims_total"]
    assert _count(_db(cfg), "conversations") == conversations, "no conversation is created"
    everything = _all_text(_db(cfg))
    assert EDITORIAL not in everything and "GAYA-UJI" not in everything, (
        "the candidate prompt is never stored"
    )
    receipt_rows = json.dumps(receipts)
    for text in (BUDGET_QUESTION, body["answer"], ALTERED_FACT, TRUE_FACT):
        assert text not in receipt_rows
    after = post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=verified["alice"]).json()
    assert strip_volatile(after) == strip_volatile(before), "a playground run changes no later answer"


def test_playground_swaps_the_editorial_prompt_for_that_request_only(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, partners_file: Path, signing_key: rsa.RSAPrivateKey
) -> None:
    engine = RecordingEngine(Replies(lambda m: NOT_FOUND))
    admin = _headers(signing_key, "ops-1", "admin")
    with _llm_client(
        tmp_path, demo_index, demo_retriever, engine, partners_file=str(partners_file)
    ) as client:
        cid = post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=admin).json()["conversation_id"]
        run = post(
            client,
            "/playground",
            {"query": FOLLOW_UP, "editorial_prompt": EDITORIAL, "conversation_id": cid},
            headers=admin,
        )
        later = post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=admin)
        view = client.get(f"/conversations/{cid}", headers=admin).json()
    assert run.status_code == 200 and later.status_code == 200
    first, trial, after = (call[0]["content"] for call in engine.calls)
    assert EDITORIAL in trial and DEFAULT_EDITORIAL not in trial
    assert EDITORIAL not in first and EDITORIAL not in after and after == first
    assert _history(engine.calls[1])[0]["content"] == BUDGET_QUESTION, (
        "the named conversation's history is read"
    )
    assert len(view["messages"]) == 2, "nothing is written to it"


def test_playground_is_rate_limited_per_admin(verified: dict[str, Any]) -> None:
    client = verified["client"]
    body = {"query": BUDGET_QUESTION, "editorial_prompt": EDITORIAL}
    statuses, limited = [], None
    for _ in range(5):  # limit 2 per minute; five calls cross at most one window boundary
        resp = post(client, "/playground", body, headers=verified["admin"])
        statuses.append(resp.status_code)
        if resp.status_code == 429:
            limited = resp
            break
    assert limited is not None, statuses
    assert statuses[0] == 200
    assert limited.json()["error"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    assert_no_internals(limited.text)
    assert post(client, "/playground", body, headers=verified["admin2"]).status_code == 200, "per admin"
    assert post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=verified["alice"]).status_code == 200


def test_partner_principals_are_rate_limited_each_under_their_partners_limit(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, partners_file: Path, signing_key: rsa.RSAPrivateKey
) -> None:
    limits = {"principal_requests_per_minute": 1, "partner_requests_per_minute": {ISSUER: 2}}
    cfg = config(tmp_path, demo_index, partners_file=str(partners_file), limits=limits)
    with client_for(cfg, demo_retriever) as client:
        alice, bob = _headers(signing_key, "alice"), _headers(signing_key, "bob")
        statuses = [post(client, "/search", {"query": "x"}, headers=alice).status_code for _ in range(3)]
        assert statuses == [200, 200, 429], "the partner's own limit (2), not the default (1)"
        limited = post(client, "/search", {"query": "anggaran"}, headers=alice)
        assert limited.json()["error"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
        assert post(client, "/search", {"query": "anggaran"}, headers=bob).status_code == 200, "per principal"


# ---------------------------------------------------------------------------- verified identity


def test_every_jwt_problem_is_the_same_401(verified: dict[str, Any], signing_key: rsa.RSAPrivateKey) -> None:
    client = verified["client"]
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    good = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 600}

    def bearer(claims: dict[str, Any], key: Any = signing_key) -> dict[str, str]:
        return {
            **HEADERS,
            "Authorization": "Bearer " + jwt.encode(claims, key, "RS256", headers={"kid": "k1"}),
        }

    causes = {
        "no key": {k: v for k, v in verified["alice"].items() if k != "X-API-Key"},
        "no token": HEADERS,
        "forged": bearer(good, other),
        "expired": bearer({**good, "exp": now - 3600}),
        "wrong audience": bearer({**good, "aud": "lain"}),
        "unknown issuer": bearer({**good, "iss": "https://idp.palsu.example"}),
    }
    bodies = {}
    for name, headers in causes.items():
        resp = post(client, "/query/v2", {"query": BUDGET_QUESTION}, headers=headers)
        assert resp.status_code == 401, name
        bodies[name] = resp.json()
    assert len({json.dumps(b, sort_keys=True) for b in bodies.values()}) == 1, bodies


def test_a_selection_the_caller_may_not_use_is_empty(
    tmp_path: Path,
    demo_index: Path,
    demo_retriever: Any,
    partners_file: Path,
    signing_key: rsa.RSAPrivateKey,
) -> None:
    from serve_app.config import SelectionConfig, SelectionFilter

    selections = {
        "mitra-lain": SelectionConfig(
            filter=SelectionFilter(type="Qanun"), partners=["https://idp.lain.example"]
        ),
        "mitra-ini": SelectionConfig(filter=SelectionFilter(type="Qanun"), partners=[ISSUER]),
    }
    cfg = config(tmp_path, demo_index, partners_file=str(partners_file), selections=selections)
    alice = _headers(signing_key, "alice")
    with client_for(cfg, demo_retriever) as client:
        refused = post(
            client, "/query/v2", {"query": BUDGET_QUESTION, "selection": "mitra-lain"}, headers=alice
        )
        allowed = post(
            client, "/query/v2", {"query": BUDGET_QUESTION, "selection": "mitra-ini"}, headers=alice
        )
    assert_v2_body(refused.json())
    assert (
        refused.json()["fallback_reason"] == "source_scope_empty" and refused.json()["tool_executed"] is False
    )
    assert_v2_body(allowed.json())
    assert allowed.json()["fallback_reason"] is None and allowed.json()["claims_supported"] >= 1
